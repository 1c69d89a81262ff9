import { act } from '@testing-library/react';
import { vi } from 'vitest';

// Taken when this module loads, before any test fakes the clock.
const realSetTimeout = globalThis.setTimeout;
const realNow = Date.now;

/**
 * Fake the clock: timers and `Date` move only when the test calls `advance`, so a
 * test that counts polls or waits for a retry does not depend on how busy the
 * machine is. `afterEach` (test/setup.ts) restores real timers.
 *
 * Under a fake clock, wait with `until`, and click with `fireEvent`: Testing Library's
 * `waitFor`/`findBy*` and user-event's calls finish with a `setTimeout(0)` that a
 * frozen clock never fires (it only drives Jest's fake timers), so they would hang.
 */
export function useFakeClock(): void {
  vi.useFakeTimers();
}

/** Move the fake clock on by `ms`, running every timer that falls due (inside act). */
export async function advance(ms: number): Promise<void> {
  await act(() => vi.advanceTimersByTimeAsync(ms));
}

/**
 * Wait, without moving the fake clock, until `check` stops throwing (a fetch answered,
 * the page rendered); returns what it returned. The deadline is real time and only a
 * safety net for a test that would otherwise hang: it is generous, since a loaded
 * machine is slow, not wrong.
 */
export async function until<T>(check: () => T, deadlineMs = 10_000): Promise<T> {
  const start = realNow();
  for (;;) {
    try {
      return check();
    } catch (error) {
      if (realNow() - start > deadlineMs) throw error;
    }
    await act(() => new Promise<void>((resolve) => realSetTimeout(resolve, 5)));
  }
}
