// What the probe forms read from their text boxes, checked before anything is sent: a bad
// entry is named back to the reader rather than refused by the server as a whole.

import type { KeyPair } from './results';

export type Parsed<T> = { ok: true; value: T } | { ok: false; entry: string };

/** Entries of a list typed by hand: separated by commas, semicolons, spaces or lines. */
function entries(text: string): string[] {
  return text
    .replace(/\s*:\s*/g, ':')
    .split(/[\s,;]+/)
    .filter((entry) => entry !== '');
}

/**
 * "1:12, 3:400" as [[1, 12], [3, 400]] (layers from 1, indices from 0), each key once, in
 * the order typed; the first entry that is not layer:index otherwise. An empty list is
 * `{ ok: true, value: [] }`: whether that is allowed is the caller's to say.
 */
export function parseKeyList(text: string): Parsed<KeyPair[]> {
  const keys: KeyPair[] = [];
  const seen = new Set<string>();
  for (const entry of entries(text)) {
    const match = /^(\d+):(\d+)$/.exec(entry);
    const layer = match ? Number(match[1]) : NaN;
    const index = match ? Number(match[2]) : NaN;
    if (!match || layer < 1 || !Number.isSafeInteger(layer) || !Number.isSafeInteger(index)) {
      return { ok: false, entry };
    }
    if (seen.has(entry)) continue;
    seen.add(entry);
    keys.push([layer, index]);
  }
  return { ok: true, value: keys };
}

/** "3, 5-7" as [3, 5, 6, 7] (layers from 1, sorted, each once); the first bad entry otherwise. */
export function parseLayers(text: string): Parsed<number[]> {
  const layers = new Set<number>();
  for (const entry of entries(text.replace(/\s*[-–]\s*/g, '-'))) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(entry);
    const first = match ? Number(match[1]) : NaN;
    const last = match?.[2] !== undefined ? Number(match[2]) : first;
    if (!match || first < 1 || last < first || last - first > 10_000) return { ok: false, entry };
    for (let layer = first; layer <= last; layer += 1) layers.add(layer);
  }
  return { ok: true, value: [...layers].sort((a, b) => a - b) };
}

export interface NumberRule {
  min: number;
  max: number;
  integer?: boolean;
}

/** A number typed in a box, within the rule's bounds (a whole one where it says so), or null. */
export function parseNumber(text: string, rule: NumberRule): number | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  const n = Number(trimmed);
  if (!Number.isFinite(n) || n < rule.min || n > rule.max) return null;
  if (rule.integer && !Number.isInteger(n)) return null;
  return n;
}

/** The non-empty lines of a text box, each trimmed (the server trims them too). */
export function parseLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
