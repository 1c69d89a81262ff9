// Which trigger prefixes are selected for the next pattern, and where the keyboard
// cursor is. A pure reducer, so that click / shift-click / keys are tested alone.

export interface SelectionState {
  /** Index (into the key's prefixes) of the row the keyboard acts on. */
  cursor: number;
  /** Index where the last plain click or toggle happened: one end of a shift range. */
  anchor: number | null;
  /** Ranks (not indexes) of the selected prefixes. */
  selected: ReadonlySet<number>;
}

export type SelectionAction =
  | { type: 'click'; index: number; shift: boolean }
  | { type: 'move'; delta: number; extend: boolean }
  | { type: 'moveTo'; index: number }
  | { type: 'toggle' }
  | { type: 'clear' }
  | { type: 'set'; ranks: Iterable<number> };

export function initialSelection(): SelectionState {
  return { cursor: 0, anchor: null, selected: new Set() };
}

function clamp(index: number, count: number): number {
  return Math.max(0, Math.min(count - 1, index));
}

function withRanks(selected: ReadonlySet<number>, ranks: number[]): Set<number> {
  const next = new Set(selected);
  for (const rank of ranks) next.add(rank);
  return next;
}

/** `ranks[i]` is the rank of the i-th row; the reducer never reads anything else. */
export function selectionReducer(ranks: readonly number[]) {
  return (state: SelectionState, action: SelectionAction): SelectionState => {
    const count = ranks.length;
    if (count === 0) return state;
    switch (action.type) {
      case 'click': {
        const index = clamp(action.index, count);
        if (action.shift && state.anchor !== null) {
          const [from, to] = [Math.min(state.anchor, index), Math.max(state.anchor, index)];
          return {
            ...state,
            cursor: index,
            selected: withRanks(state.selected, ranks.slice(from, to + 1)),
          };
        }
        return toggleAt(state, index);
      }
      case 'toggle':
        return toggleAt(state, clamp(state.cursor, count));
      case 'move': {
        const from = clamp(state.cursor, count);
        const to = clamp(from + action.delta, count);
        if (!action.extend) return { ...state, cursor: to };
        const [low, high] = [Math.min(from, to), Math.max(from, to)];
        return {
          cursor: to,
          anchor: state.anchor ?? from,
          selected: withRanks(state.selected, ranks.slice(low, high + 1)),
        };
      }
      case 'moveTo':
        return { ...state, cursor: clamp(action.index, count) };
      case 'clear':
        return { ...state, anchor: null, selected: new Set() };
      case 'set':
        return { ...state, anchor: null, selected: new Set(action.ranks) };
    }
  };

  function toggleAt(state: SelectionState, index: number): SelectionState {
    const rank = ranks[index];
    if (rank === undefined) return state;
    const selected = new Set(state.selected);
    if (selected.has(rank)) selected.delete(rank);
    else selected.add(rank);
    return { cursor: index, anchor: index, selected };
  }
}
