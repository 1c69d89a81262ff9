// The review screen's keys: the workspace's (components/patternEditor/keymap.ts) for
// moving through and selecting prefixes and composing a gold pattern, with `a` adopting
// the focused annotator pattern (Enter still adds the composed one) and Ctrl+Enter
// saving the gold.
import type { KeyAction, KeymapEntry } from '../../../components/patternEditor/keymap';

/** The workspace's actions that the review screen binds (it has no guidelines or flag). */
export type ReviewAction = Exclude<KeyAction, 'guidelines' | 'flag'>;

export const REVIEW_KEYMAP: readonly (KeymapEntry & { action: ReviewAction })[] = [
  { action: 'down', bindings: [{ key: 'j' }, { key: 'ArrowDown' }] },
  { action: 'up', bindings: [{ key: 'k' }, { key: 'ArrowUp' }] },
  { action: 'extendDown', bindings: [{ key: 'J' }, { key: 'ArrowDown', shift: true }] },
  { action: 'extendUp', bindings: [{ key: 'K' }, { key: 'ArrowUp', shift: true }] },
  { action: 'first', bindings: [{ key: 'g' }, { key: 'Home' }] },
  { action: 'last', bindings: [{ key: 'G' }, { key: 'End' }] },
  { action: 'toggle', bindings: [{ key: ' ' }, { key: 'x' }] },
  { action: 'clear', bindings: [{ key: 'Escape' }] },
  { action: 'kind', bindings: [{ key: '1' }, { key: '2' }, { key: '3' }] },
  { action: 'describe', bindings: [{ key: 'd' }, { key: '/' }] },
  { action: 'adopt', bindings: [{ key: 'a' }] },
  { action: 'add', bindings: [{ key: 'Enter' }] },
  { action: 'note', bindings: [{ key: 'n' }] },
  { action: 'submit', bindings: [{ key: 'Enter', ctrl: true }] },
  { action: 'shading', bindings: [{ key: 's' }] },
  { action: 'help', bindings: [{ key: '?' }] },
];
