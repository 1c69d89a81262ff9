import { describe, expect, it } from 'vitest';

import { initialSelection, selectionReducer } from './selection';
import type { SelectionAction, SelectionState } from './selection';

const ranks = [1, 2, 3, 4, 5, 6];
const reduce = selectionReducer(ranks);

function run(...actions: SelectionAction[]): SelectionState {
  return actions.reduce(reduce, initialSelection());
}

const sorted = (state: SelectionState) => [...state.selected].sort((a, b) => a - b);

describe('prefix selection', () => {
  it('toggles a prefix on click', () => {
    const once = run({ type: 'click', index: 2, shift: false });
    expect(sorted(once)).toEqual([3]);
    expect(once.cursor).toBe(2);
    const twice = reduce(once, { type: 'click', index: 2, shift: false });
    expect(sorted(twice)).toEqual([]);
  });

  it('selects the range from the last click on shift-click, in either direction', () => {
    expect(
      sorted(
        run({ type: 'click', index: 1, shift: false }, { type: 'click', index: 4, shift: true }),
      ),
    ).toEqual([2, 3, 4, 5]);
    expect(
      sorted(
        run({ type: 'click', index: 4, shift: false }, { type: 'click', index: 2, shift: true }),
      ),
    ).toEqual([3, 4, 5]);
  });

  it('treats a shift-click without an anchor as a plain click', () => {
    expect(sorted(run({ type: 'click', index: 3, shift: true }))).toEqual([4]);
  });

  it('moves the cursor without selecting, within the list', () => {
    const state = run(
      { type: 'move', delta: 1, extend: false },
      { type: 'move', delta: 1, extend: false },
    );
    expect(state.cursor).toBe(2);
    expect(sorted(state)).toEqual([]);
    expect(run({ type: 'move', delta: -1, extend: false }).cursor).toBe(0);
    expect(run({ type: 'moveTo', index: 99 }).cursor).toBe(5);
  });

  it('toggles the prefix under the cursor with the keyboard', () => {
    const state = run(
      { type: 'toggle' },
      { type: 'move', delta: 1, extend: false },
      { type: 'move', delta: 1, extend: false },
      { type: 'toggle' },
    );
    expect(sorted(state)).toEqual([1, 3]);
  });

  it('extends the selection with shift and the arrows', () => {
    const state = run(
      { type: 'move', delta: 1, extend: false },
      { type: 'move', delta: 1, extend: true },
      { type: 'move', delta: 1, extend: true },
    );
    expect(sorted(state)).toEqual([2, 3, 4]);
    expect(state.cursor).toBe(3);
  });

  it("clears, and sets a pattern's prefixes", () => {
    expect(sorted(run({ type: 'toggle' }, { type: 'clear' }))).toEqual([]);
    expect(sorted(run({ type: 'set', ranks: [6, 2] }))).toEqual([2, 6]);
  });
});
