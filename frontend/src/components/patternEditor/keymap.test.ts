import { describe, expect, it } from 'vitest';

import { KEYMAP, keyLabel, lookUpKey } from './keymap';

const press = (
  key: string,
  mods: Partial<Record<'shiftKey' | 'ctrlKey' | 'metaKey' | 'altKey', boolean>> = {},
) => ({
  key,
  shiftKey: false,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
});

describe('the workspace keymap', () => {
  it('tells moving from extending by Shift on the arrows and by case on the letters', () => {
    expect(lookUpKey(press('ArrowDown'), true)?.action).toBe('down');
    expect(lookUpKey(press('ArrowDown', { shiftKey: true }), true)?.action).toBe('extendDown');
    expect(lookUpKey(press('j'), true)?.action).toBe('down');
    expect(lookUpKey(press('J', { shiftKey: true }), true)?.action).toBe('extendDown');
    expect(lookUpKey(press('K', { shiftKey: true }), true)?.action).toBe('extendUp');
    expect(lookUpKey(press('?', { shiftKey: true }), true)?.action).toBe('help');
  });

  it('submits on Ctrl or ⌘ + Enter, adds on Enter alone, and ignores Alt', () => {
    expect(lookUpKey(press('Enter', { ctrlKey: true }), true)?.action).toBe('submit');
    expect(lookUpKey(press('Enter', { metaKey: true }), false)?.action).toBe('submit');
    expect(lookUpKey(press('Enter'), true)?.action).toBe('add');
    expect(lookUpKey(press('j', { altKey: true }), true)).toBeNull();
    expect(lookUpKey(press('j', { ctrlKey: true }), true)).toBeNull();
  });

  it('turns off the single-character keys only', () => {
    for (const key of ['j', 'x', 'g', 'G', '1', '/', '?', 'a', 'n', 'd', 'f']) {
      expect(lookUpKey(press(key), false)).toBeNull();
    }
    for (const key of ['ArrowDown', 'ArrowUp', 'Home', 'End', ' ', 'Enter', 'Escape']) {
      expect(lookUpKey(press(key), false)).not.toBeNull();
    }
  });

  it('names every binding for the help, and binds no key twice', () => {
    const labels = KEYMAP.flatMap((entry) => entry.bindings.map(keyLabel));
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels).toEqual(
      expect.arrayContaining(['Shift + ↓', 'Space', 'Esc', 'Ctrl + Enter', 'Home', 'End']),
    );
  });

  it('opens the guidelines on g, a single-character key; Home goes to the first prefix', () => {
    expect(lookUpKey(press('g'), true)?.action).toBe('guidelines');
    expect(lookUpKey(press('g'), false)).toBeNull();
    expect(lookUpKey(press('Home'), true)?.action).toBe('first');
  });
});
