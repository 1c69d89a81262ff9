import { describe, expect, it } from 'vitest';

import { REVIEW_KEYMAP } from '../../features/review/lib/reviewKeymap';
import { KEYMAP } from './keymap';
import type { KeymapEntry } from './keymap';
import { handlePrefixListKey } from './prefixListKeys';
import type { PrefixListKeys } from './prefixListKeys';

type Mods = Partial<Record<'shiftKey' | 'ctrlKey' | 'metaKey' | 'altKey', boolean>>;

/** Presses `key` on `target` and returns what the handler asked of the page. */
function press(
  key: string,
  {
    target = document.createElement('div'),
    mods = {},
    keymap = KEYMAP,
    characterKeys = true,
    readOnly = false,
  }: {
    target?: HTMLElement;
    mods?: Mods;
    keymap?: readonly KeymapEntry[];
    characterKeys?: boolean;
    readOnly?: boolean;
  } = {},
) {
  const calls: unknown[][] = [];
  const record =
    (name: string) =>
    (...args: unknown[]) =>
      calls.push([name, ...args]);
  const keys: PrefixListKeys = {
    submit: record('submit'),
    leaveField: record('leaveField'),
    dispatch: record('dispatch'),
    lastIndex: 6,
    readOnly,
    setKind: record('setKind'),
    focusDescription: record('focusDescription'),
    focusNote: record('focusNote'),
    other: record('other'),
  };
  let prevented = false;
  const event = {
    key,
    shiftKey: false,
    ctrlKey: false,
    metaKey: false,
    altKey: false,
    ...mods,
    target,
    preventDefault: () => {
      prevented = true;
    },
  };
  handlePrefixListKey(event, keymap, characterKeys, keys);
  return { calls, prevented };
}

function inside(tag: string): HTMLElement {
  const element = document.createElement(tag);
  document.body.append(element);
  return element;
}

describe('the prefix list keys', () => {
  it('submits on Ctrl+Enter, even from a text field', () => {
    expect(press('Enter', { mods: { ctrlKey: true } })).toEqual({
      calls: [['submit']],
      prevented: true,
    });
    expect(press('Enter', { mods: { metaKey: true }, target: inside('textarea') }).calls).toEqual([
      ['submit'],
    ]);
  });

  it('leaves a text field on Escape and lets every other key type', () => {
    const field = inside('textarea');
    expect(press('Escape', { target: field })).toEqual({
      calls: [['leaveField', field]],
      prevented: true,
    });
    expect(press('j', { target: field })).toEqual({ calls: [], prevented: false });
    expect(press('ArrowDown', { target: inside('input') })).toEqual({
      calls: [],
      prevented: false,
    });
  });

  it('moves, extends and jumps the cursor', () => {
    expect(press('j').calls).toEqual([['dispatch', { type: 'move', delta: 1, extend: false }]]);
    expect(press('ArrowUp').calls).toEqual([
      ['dispatch', { type: 'move', delta: -1, extend: false }],
    ]);
    expect(press('J', { mods: { shiftKey: true } }).calls).toEqual([
      ['dispatch', { type: 'move', delta: 1, extend: true }],
    ]);
    expect(press('ArrowUp', { mods: { shiftKey: true } }).calls).toEqual([
      ['dispatch', { type: 'move', delta: -1, extend: true }],
    ]);
    expect(press('Home').calls).toEqual([['dispatch', { type: 'moveTo', index: 0 }]]);
    expect(press('End').calls).toEqual([['dispatch', { type: 'moveTo', index: 6 }]]);
  });

  it('toggles only where the labels can change', () => {
    expect(press('x').calls).toEqual([['dispatch', { type: 'toggle' }]]);
    expect(press('x', { readOnly: true })).toEqual({ calls: [], prevented: true });
  });

  it('picks a kind by its digit and focuses the description and the note', () => {
    expect(press('2').calls).toEqual([['setKind', 'semantic']]);
    expect(press('d').calls).toEqual([['focusDescription']]);
    expect(press('n').calls).toEqual([['focusNote']]);
  });

  it("hands the page's own actions on, with the key's target", () => {
    const target = inside('div');
    expect(press('f', { target })).toEqual({ calls: [['other', 'flag', target]], prevented: true });
    expect(press('a', { target, keymap: REVIEW_KEYMAP }).calls).toEqual([
      ['other', 'adopt', target],
    ]);
    expect(press('Escape', { target }).calls).toEqual([['other', 'clear', target]]);
  });

  it('leaves Space and Enter to a focused control, and unknown or switched-off keys alone', () => {
    const button = inside('button');
    expect(press(' ', { target: button })).toEqual({ calls: [], prevented: false });
    expect(press('Enter', { target: button })).toEqual({ calls: [], prevented: false });
    expect(press('j', { target: button }).calls).toHaveLength(1);
    expect(press('q')).toEqual({ calls: [], prevented: false });
    expect(press('j', { characterKeys: false })).toEqual({ calls: [], prevented: false });
    expect(press('ArrowDown', { characterKeys: false }).calls).toHaveLength(1);
  });
});
