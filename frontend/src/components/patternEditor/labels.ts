// How the annotator's patterns read on the prefixes: labels (derived from
// patterns, never stored: docs/science.md, "Labels"), chip colours, and the writes not yet on the server applied
// on top of the server's state so that the screen shows them at once.
import type { AnnotationState, Pattern, PatternKind, PrefixLabelValue } from '../../api/types';
import type { QueuedWrite } from '../../lib/writeQueue/writeQueue';
import { findPattern } from '../../lib/writeQueue/writeQueue';

export const MIN_PREFIXES = 3;

export const KINDS: readonly PatternKind[] = ['shallow', 'semantic', 'shallow+semantic'];

/**
 * A pattern as the editor holds it: the annotator's, or a gold one (whose `source` may
 * be `adopted`); one made here and not answered yet has no source, rule or scores.
 */
export interface DisplayPattern extends Omit<Pattern, 'source' | 'rule' | 'scores'> {
  source?: string;
  rule?: Pattern['rule'];
  scores?: Pattern['scores'];
  /** Made or changed here and not confirmed by the server yet. */
  pending: boolean;
  /** 1-based position in the list: the chip reads "P{number}". */
  number: number;
  /** Index into the chip palette. */
  colour: number;
}

export const PALETTE_SIZE = 8;

/** The same rule as the server (annotate/selectors.py): both kinds, or a both-kinds pattern. */
export function labelFor(kinds: Iterable<PatternKind>): PrefixLabelValue {
  let shallow = false;
  let semantic = false;
  for (const kind of kinds) {
    if (kind === 'shallow' || kind === 'shallow+semantic') shallow = true;
    if (kind === 'semantic' || kind === 'shallow+semantic') semantic = true;
  }
  if (shallow && semantic) return 'shallow+semantic';
  if (shallow) return 'shallow';
  if (semantic) return 'semantic';
  return 'not-covered';
}

export function deriveLabels(
  ranks: readonly number[],
  patterns: readonly Pick<Pattern, 'kind' | 'prefix_ranks'>[],
): Map<number, PrefixLabelValue> {
  const kinds = new Map<number, PatternKind[]>();
  for (const pattern of patterns) {
    for (const rank of pattern.prefix_ranks) {
      const list = kinds.get(rank) ?? [];
      list.push(pattern.kind);
      kinds.set(rank, list);
    }
  }
  return new Map(ranks.map((rank) => [rank, labelFor(kinds.get(rank) ?? [])]));
}

export interface DisplayState {
  note: string;
  status: AnnotationState['status'];
  patterns: DisplayPattern[];
}

/** The server's state with the queued writes of this key applied in order. */
export function applyPending(state: AnnotationState, writes: readonly QueuedWrite[]): DisplayState {
  let patterns: Omit<DisplayPattern, 'number' | 'colour'>[] = [...state.patterns]
    .sort((a, b) => a.order - b.order)
    .map((pattern) => ({ ...pattern, pending: false }));
  let note = state.note;
  let status = state.status;
  let temporaryId = -1;
  for (const { op } of writes) {
    // A key nobody has written to is "new"; its first write makes the draft.
    if (status === 'new' && op.type !== 'submit' && op.type !== 'reopen') status = 'draft';
    switch (op.type) {
      case 'note':
        note = op.note;
        break;
      case 'create':
        if (!patterns.some((pattern) => pattern.client_id === op.clientId)) {
          patterns.push({
            id: temporaryId--,
            description: op.description,
            kind: op.kind,
            prefix_ranks: [...op.prefixRanks],
            order: Number.MAX_SAFE_INTEGER,
            client_id: op.clientId,
            pending: true,
          });
        }
        break;
      case 'update': {
        const target = findPattern(patterns, op.ref);
        if (target) {
          patterns = patterns.map((pattern) =>
            pattern === target
              ? {
                  ...pattern,
                  description: op.changes.description ?? pattern.description,
                  kind: op.changes.kind ?? pattern.kind,
                  prefix_ranks: op.changes.prefix_ranks ?? pattern.prefix_ranks,
                  pending: true,
                }
              : pattern,
          );
        }
        break;
      }
      case 'delete': {
        const target = findPattern(patterns, op.ref);
        patterns = patterns.filter((pattern) => pattern !== target);
        break;
      }
      case 'submit':
        status = 'submitted';
        break;
      case 'reopen':
        status = 'draft';
        break;
      case 'check':
        break; // not part of what the annotation's screen shows
    }
  }
  return {
    note,
    status,
    patterns: patterns.map((pattern, index) => ({
      ...pattern,
      number: index + 1,
      colour: index % PALETTE_SIZE,
    })),
  };
}
