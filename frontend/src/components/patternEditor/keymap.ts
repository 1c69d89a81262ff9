// The workspace's keys, in one table: the page's key handler looks events up here
// and the help dialog lists it, so neither can leave a key out.
//
// Single-character keys (letters, digits, punctuation) can be turned off (WCAG 2.1.4,
// "Character Key Shortcuts"); the keys of the prefix list as a listbox (arrows,
// Home/End, Space, Enter, Escape) and Ctrl+Enter always work.

export type KeyAction =
  | 'down'
  | 'up'
  | 'extendDown'
  | 'extendUp'
  | 'first'
  | 'last'
  | 'toggle'
  | 'clear'
  | 'kind'
  | 'describe'
  | 'add'
  | 'note'
  | 'submit'
  | 'guidelines'
  | 'flag'
  | 'help'
  /** Turn token shading on or off (components/evidence). */
  | 'shading'
  /** The review screen's: adopt the focused annotator pattern into the gold. */
  | 'adopt';

export interface KeyBinding {
  /** `KeyboardEvent.key`. */
  key: string;
  /** For named keys (arrows…): Shift must be held. A character's case says it already. */
  shift?: boolean;
  /** Ctrl (or ⌘ on a Mac) must be held. */
  ctrl?: boolean;
}

export interface KeymapEntry {
  action: KeyAction;
  bindings: readonly KeyBinding[];
}

export const KEYMAP: readonly KeymapEntry[] = [
  { action: 'down', bindings: [{ key: 'j' }, { key: 'ArrowDown' }] },
  { action: 'up', bindings: [{ key: 'k' }, { key: 'ArrowUp' }] },
  { action: 'extendDown', bindings: [{ key: 'J' }, { key: 'ArrowDown', shift: true }] },
  { action: 'extendUp', bindings: [{ key: 'K' }, { key: 'ArrowUp', shift: true }] },
  // `g` opens the study's guidelines; Home still goes to the first prefix.
  { action: 'first', bindings: [{ key: 'Home' }] },
  { action: 'last', bindings: [{ key: 'G' }, { key: 'End' }] },
  { action: 'toggle', bindings: [{ key: ' ' }, { key: 'x' }] },
  { action: 'clear', bindings: [{ key: 'Escape' }] },
  { action: 'kind', bindings: [{ key: '1' }, { key: '2' }, { key: '3' }] },
  { action: 'describe', bindings: [{ key: 'd' }, { key: '/' }] },
  { action: 'add', bindings: [{ key: 'a' }, { key: 'Enter' }] },
  { action: 'note', bindings: [{ key: 'n' }] },
  { action: 'submit', bindings: [{ key: 'Enter', ctrl: true }] },
  { action: 'guidelines', bindings: [{ key: 'g' }] },
  { action: 'flag', bindings: [{ key: 'f' }] },
  { action: 'shading', bindings: [{ key: 's' }] },
  { action: 'help', bindings: [{ key: '?' }] },
];

/** A printable character pressed alone: what WCAG 2.1.4 lets the user turn off. */
export function isCharacterKey(binding: KeyBinding): boolean {
  return binding.key.length === 1 && binding.key !== ' ' && !binding.ctrl;
}

interface KeyPress {
  key: string;
  shiftKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
}

function matches(binding: KeyBinding, event: KeyPress): boolean {
  if (event.key !== binding.key || event.altKey) return false;
  const ctrl = event.ctrlKey || event.metaKey;
  if (ctrl !== !!binding.ctrl) return false;
  return binding.key.length === 1 || event.shiftKey === !!binding.shift;
}

/** The entry a key press stands for, if any (and if on); `binding` is the key that matched. */
export function lookUpKey(
  event: KeyPress,
  characterKeys: boolean,
  keymap: readonly KeymapEntry[] = KEYMAP,
): { action: KeyAction; binding: KeyBinding } | null {
  for (const entry of keymap) {
    for (const binding of entry.bindings) {
      if (!matches(binding, event)) continue;
      if (!characterKeys && isCharacterKey(binding)) return null;
      return { action: entry.action, binding };
    }
  }
  return null;
}

const NAMES: Record<string, string> = {
  ' ': 'Space',
  ArrowDown: '↓',
  ArrowUp: '↑',
  Escape: 'Esc',
};

/** How the help writes a binding: "Shift + ↓", "Ctrl + Enter", "G". */
export function keyLabel(binding: KeyBinding): string {
  const name = NAMES[binding.key] ?? binding.key;
  return [binding.ctrl ? 'Ctrl' : '', binding.shift ? 'Shift' : '', name]
    .filter(Boolean)
    .join(' + ');
}
