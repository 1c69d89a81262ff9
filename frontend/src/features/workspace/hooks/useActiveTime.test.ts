import { fireEvent, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { advance, useFakeClock } from '../../../test/clock';
import { IDLE_AFTER_MS } from '../lib/activeTime';
import { useActiveTime } from './useActiveTime';

let visibility: DocumentVisibilityState = 'visible';

function setVisibility(state: DocumentVisibilityState) {
  visibility = state;
  fireEvent(document, new Event('visibilitychange'));
}

/** Typing: a key every second for `seconds` seconds. */
async function type(seconds: number) {
  for (let i = 0; i < seconds; i++) {
    fireEvent.keyDown(document.body, { key: 'a' });
    await advance(1_000);
  }
}

beforeEach(() => {
  useFakeClock();
  visibility = 'visible';
  vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('useActiveTime', () => {
  it('counts the time of active typing', async () => {
    const { result } = renderHook(() => useActiveTime(undefined));
    await type(30);
    expect(result.current()).toBe(30);
  });

  it('stops counting after a minute without input, and resumes on input', async () => {
    const { result } = renderHook(() => useActiveTime(undefined));
    await type(10); // keys at 0 s … 9 s
    await advance(5 * 60_000); // idle: only the first minute after the last key counts
    expect(result.current()).toBe(9 + IDLE_AFTER_MS / 1000);
    fireEvent.pointerMove(document.body);
    await advance(20_000);
    expect(result.current()).toBe(9 + 60 + 20);
  });

  it('does not count while the tab is hidden, even with recent input', async () => {
    const { result } = renderHook(() => useActiveTime(undefined));
    await type(5); // keys at 0 s … 4 s
    setVisibility('hidden');
    await advance(30_000);
    expect(result.current()).toBe(5);
    setVisibility('visible');
    await advance(10_000); // visible again, the last input 40 s ago: counts
    expect(result.current()).toBe(15);
    await advance(2 * 60_000);
    expect(result.current()).toBe(15 + 19); // up to a minute after the last input (4 s)
    fireEvent.wheel(document.body);
    await advance(3_000);
    expect(result.current()).toBe(37);
  });

  it('counts on from the total the server had', async () => {
    const { result, rerender } = renderHook(({ from }) => useActiveTime(from), {
      initialProps: { from: undefined as number | undefined },
    });
    await type(4);
    rerender({ from: 100 });
    await type(2);
    expect(result.current()).toBe(106);
    rerender({ from: 500 }); // the server's answers to our own writes: not added again
    expect(result.current()).toBe(106);
  });

  it('stops listening when the key closes', async () => {
    const { result, unmount } = renderHook(() => useActiveTime(undefined));
    const read = result.current;
    unmount();
    await advance(2 * 60_000);
    fireEvent.keyDown(document.body, { key: 'a' });
    await advance(1_000);
    expect(read()).toBe(60); // the minute after opening; the later key is not heard
  });
});
