import { describe, expect, it } from 'vitest';

import { makeState } from '../../test/factories';
import { addBlockers } from './composer';
import { applyPending, deriveLabels, labelFor } from './labels';
import type { QueuedWrite } from '../../lib/writeQueue/writeQueue';

const pattern = (
  id: number,
  kind: 'shallow' | 'semantic' | 'shallow+semantic',
  ranks: number[],
) => ({
  id,
  description: `p${id}`,
  kind,
  prefix_ranks: ranks,
  order: id,
  client_id: null,
  source: 'written' as const,
  rule: null,
  scores: null,
});

describe('labels', () => {
  it('derives all four labels, including shallow and semantic patterns on one prefix', () => {
    const labels = deriveLabels(
      [1, 2, 3, 4, 5],
      [
        pattern(1, 'shallow', [1, 2, 3]),
        pattern(2, 'semantic', [3, 4]),
        pattern(3, 'shallow+semantic', [5]),
      ],
    );
    expect([...labels.values()]).toEqual([
      'shallow',
      'shallow',
      'shallow+semantic',
      'semantic',
      'shallow+semantic',
    ]);
    expect(labelFor([])).toBe('not-covered');
  });
});

describe('pending writes on top of the server state', () => {
  const write = (op: QueuedWrite['op']): QueuedWrite => ({
    id: Math.random().toString(),
    keyId: 10,
    op,
  });

  it('shows created, edited and deleted patterns, the note and the status at once', () => {
    const state = makeState({
      patterns: [pattern(1, 'shallow', [1, 2, 3]), pattern(2, 'semantic', [4, 5, 6])],
    });
    const shown = applyPending(state, [
      write({
        type: 'create',
        clientId: 'c1',
        description: 'new',
        kind: 'semantic',
        prefixRanks: [7, 8, 9],
      }),
      write({ type: 'update', ref: { clientId: 'c1' }, changes: { description: 'renamed' } }),
      write({ type: 'delete', ref: { id: 1 } }),
      write({ type: 'note', note: 'hello' }),
      write({ type: 'submit' }),
    ]);
    expect(shown.patterns.map((p) => [p.description, p.pending, p.number])).toEqual([
      ['p2', false, 1],
      ['renamed', true, 2],
    ]);
    expect(shown.note).toBe('hello');
    expect(shown.status).toBe('submitted');
  });

  it('does not show a create twice once the server has it', () => {
    const state = makeState({
      patterns: [{ ...pattern(5, 'shallow', [1, 2, 3]), client_id: 'c1' }],
    });
    const shown = applyPending(state, [
      write({
        type: 'create',
        clientId: 'c1',
        description: 'p5',
        kind: 'shallow',
        prefixRanks: [1, 2, 3],
      }),
    ]);
    expect(shown.patterns).toHaveLength(1);
  });

  it('shows a key nobody has written to as new until its first write makes the draft', () => {
    const state = makeState({ id: null, status: 'new', updated_at: null });
    expect(applyPending(state, []).status).toBe('new');
    expect(applyPending(state, [write({ type: 'note', note: 'first' })]).status).toBe('draft');
    expect(applyPending(state, [write({ type: 'submit' })]).status).toBe('submitted');
  });
});

describe('why a pattern cannot be added yet', () => {
  it('names every missing piece, and only those', () => {
    expect(addBlockers({ submitted: false, selected: 2, description: ' ', kind: null })).toEqual([
      'selectMore',
      'describe',
      'pickKind',
    ]);
    expect(
      addBlockers({ submitted: false, selected: 3, description: 'dates', kind: 'semantic' }),
    ).toEqual([]);
    expect(
      addBlockers({ submitted: true, selected: 3, description: 'dates', kind: 'semantic' }),
    ).toEqual(['submitted']);
  });
});
