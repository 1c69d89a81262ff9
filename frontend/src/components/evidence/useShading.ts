import { useCallback, useState } from 'react';

import { safeLocalStorage } from '../../lib/writeQueue/queueStorage';

/** Where the choice is kept: per user, in this browser. */
export function shadingStorageKey(userId: number | null | undefined): string {
  return `ffkv.shading.${userId ?? 'anonymous'}`;
}

/**
 * Whether the examples are shaded by their tokens' coefficients (on by default), as this
 * user last chose in this browser: the workspace and the review screen share it.
 */
export function useShading(userId: number | null | undefined): [boolean, (on: boolean) => void] {
  const storageKey = shadingStorageKey(userId);
  const [on, setOn] = useState(() => safeLocalStorage()?.getItem(storageKey) !== 'off');
  const change = useCallback(
    (value: boolean) => {
      setOn(value);
      try {
        safeLocalStorage()?.setItem(storageKey, value ? 'on' : 'off');
      } catch {
        // Storage disabled: the choice lasts as long as the page.
      }
    },
    [storageKey],
  );
  return [on, change];
}
