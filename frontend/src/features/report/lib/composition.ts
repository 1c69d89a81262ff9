// §5's figures as the report gives them (docs/composition.md): a figure that goes
// through the unembedding is one number, or one per reading where the model has a final
// norm. Also the CSV of one chart.
import type { ReportComposition } from '../../../api/types';

/** The readings of a model with a final norm; with the norm first, the default. */
export const READINGS = ['with_final_norm', 'without_final_norm'] as const;
export type Reading = (typeof READINGS)[number];

type Split<T> = { without_final_norm: T; with_final_norm: T };

/** A figure given once per reading (rather than as one plain value). */
export function isSplit<T extends object | number | null>(value: T | Split<T>): value is Split<T> {
  return value !== null && typeof value === 'object' && 'with_final_norm' in value;
}

/** The value of `reading`; a plain value (no final norm) is the same in both. */
export function pick<T extends object | number | null>(value: T | Split<T>, reading: Reading): T {
  return isSplit(value) ? value[reading] : value;
}

/** Whether the figures have two readings to choose between (the model has a final norm). */
export function hasReadings(composition: ReportComposition): boolean {
  return composition.layers.some((row) => isSplit(row.change));
}

/** The states of the section: an encoder, no job yet, none in the filtered layers, figures. */
export function compositionState(
  composition: ReportComposition,
): 'encoder' | 'not_computed' | 'no_layers' | 'figures' {
  if (!composition.applies) return 'encoder';
  if (composition.layers.length > 0) return 'figures';
  // Stored figures carry when they were computed; the filters may leave no layer of them.
  return composition.computed_at ? 'no_layers' : 'not_computed';
}

function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** RFC 4180 text: a header line, then one line a row; null is an empty field. */
export function toCsv(
  header: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
): string {
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}
