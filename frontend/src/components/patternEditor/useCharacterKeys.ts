import { useCallback, useState } from 'react';

import { safeLocalStorage } from '../../lib/writeQueue/queueStorage';

const STORAGE_KEY = 'ffkv.characterKeys';

/**
 * Whether the workspace's single-character shortcuts are on (WCAG 2.1.4: a user of
 * speech input, or who types by accident, can turn them off). Remembered in this browser.
 */
export function useCharacterKeys(): [boolean, (on: boolean) => void] {
  const [on, setOn] = useState(() => safeLocalStorage()?.getItem(STORAGE_KEY) !== 'off');
  const change = useCallback((value: boolean) => {
    setOn(value);
    try {
      if (value) safeLocalStorage()?.removeItem(STORAGE_KEY);
      else safeLocalStorage()?.setItem(STORAGE_KEY, 'off');
    } catch {
      // Storage disabled: the choice lasts as long as the page.
    }
  }, []);
  return [on, change];
}
