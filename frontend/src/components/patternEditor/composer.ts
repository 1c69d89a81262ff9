import type { PatternKind } from '../../api/types';
import { MIN_PREFIXES } from './labels';

export type AddBlocker = 'submitted' | 'selectMore' | 'describe' | 'pickKind';

/** Why the add (or save) control is disabled; empty when it can be used. */
export function addBlockers(input: {
  submitted: boolean;
  selected: number;
  description: string;
  kind: PatternKind | null;
}): AddBlocker[] {
  if (input.submitted) return ['submitted'];
  const blockers: AddBlocker[] = [];
  if (input.selected < MIN_PREFIXES) blockers.push('selectMore');
  if (!input.description.trim()) blockers.push('describe');
  if (!input.kind) blockers.push('pickKind');
  return blockers;
}
