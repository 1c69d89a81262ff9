import { useCallback, useEffect, useRef } from 'react';

import { ActiveTimer, INPUT_EVENTS } from '../lib/activeTime';

function isVisible(): boolean {
  return document.visibilityState === 'visible';
}

/**
 * Counts the annotator's active seconds on the open key (see activeTime.ts) from the
 * moment it opens; `resumeFrom`, once known (the server's total), is counted on from.
 * Returns a function that reads the running total. `now` is the clock (tests fake it).
 */
export function useActiveTime(
  resumeFrom: number | undefined,
  now: () => number = Date.now,
): () => number {
  const clock = useRef(now);
  clock.current = now;
  const timer = useRef<ActiveTimer | null>(null);
  if (timer.current === null) timer.current = new ActiveTimer(now(), isVisible());
  const resumed = useRef(false);

  useEffect(() => {
    if (resumeFrom === undefined || resumed.current) return;
    resumed.current = true;
    timer.current?.resumeFrom(resumeFrom);
  }, [resumeFrom]);

  useEffect(() => {
    const onInput = () => timer.current?.input(clock.current());
    const onVisibility = () => timer.current?.setVisible(isVisible(), clock.current());
    const options = { capture: true, passive: true };
    for (const type of INPUT_EVENTS) document.addEventListener(type, onInput, options);
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      for (const type of INPUT_EVENTS) document.removeEventListener(type, onInput, options);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, []);

  return useCallback(() => timer.current?.seconds(clock.current()) ?? 0, []);
}
