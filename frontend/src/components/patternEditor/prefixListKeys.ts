// The keys of a page built round the prefix list (the workspace, the review screen):
// Ctrl+Enter submits from anywhere, Escape leaves a text field, and the list's own keys
// (move, extend, jump, toggle, kind, describe, note) act the same on both pages; the rest
// are the page's own and go to `other`.
import type { PatternKind } from '../../api/types';
import { lookUpKey } from './keymap';
import type { KeyAction, KeymapEntry } from './keymap';
import { KINDS } from './labels';
import type { SelectionAction } from './selection';

export interface PrefixListKeys {
  /** Ctrl+Enter: submit the key (or save the gold). */
  submit(): void;
  /** Escape in a text field: save what it holds if need be, and go back to the list. */
  leaveField(field: HTMLElement): void;
  dispatch(action: SelectionAction): void;
  /** Index of the last prefix (End / G). */
  lastIndex: number;
  /** The labels cannot change (a submitted key): Space / x toggle nothing. */
  readOnly: boolean;
  setKind(kind: PatternKind | null): void;
  focusDescription(): void;
  focusNote(): void;
  /** The page's own actions (add, clear, help, guidelines, flag, adopt). */
  other(action: KeyAction, target: HTMLElement): void;
}

interface KeyEvent {
  key: string;
  shiftKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  target: EventTarget;
  preventDefault(): void;
}

function isTyping(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    !!target.closest('input, textarea, select, [contenteditable="true"]')
  );
}

/** Acts on a key pressed inside the page, looked up in `keymap` (the one the help lists). */
export function handlePrefixListKey(
  event: KeyEvent,
  keymap: readonly KeymapEntry[],
  characterKeys: boolean,
  keys: PrefixListKeys,
): void {
  const target = event.target as HTMLElement;
  const found = lookUpKey(event, characterKeys, keymap);
  if (found?.action === 'submit') {
    event.preventDefault();
    keys.submit();
    return;
  }
  if (isTyping(target)) {
    if (event.key === 'Escape') {
      event.preventDefault();
      keys.leaveField(target);
    }
    return;
  }
  // On a control, Space and Enter belong to the control.
  const onControl = !!target.closest('button, a, summary');
  if (!found || (onControl && (event.key === ' ' || event.key === 'Enter'))) return;
  event.preventDefault();
  switch (found.action) {
    case 'down':
    case 'up':
      keys.dispatch({ type: 'move', delta: found.action === 'down' ? 1 : -1, extend: false });
      break;
    case 'extendDown':
    case 'extendUp':
      keys.dispatch({ type: 'move', delta: found.action === 'extendDown' ? 1 : -1, extend: true });
      break;
    case 'first':
      keys.dispatch({ type: 'moveTo', index: 0 });
      break;
    case 'last':
      keys.dispatch({ type: 'moveTo', index: keys.lastIndex });
      break;
    case 'toggle':
      if (!keys.readOnly) keys.dispatch({ type: 'toggle' });
      break;
    case 'kind':
      keys.setKind(KINDS[Number(found.binding.key) - 1] ?? null);
      break;
    case 'describe':
      keys.focusDescription();
      break;
    case 'note':
      keys.focusNote();
      break;
    default:
      keys.other(found.action, target);
  }
}
