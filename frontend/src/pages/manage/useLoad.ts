import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { errorMessage } from '../../api/errorMessage';

export type Loaded<T> =
  | { kind: 'loading' }
  | { kind: 'failed'; message: string }
  | { kind: 'loaded'; data: T };

/** Load once (and again on `reload`), ignoring answers that come after unmount. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const { t } = useTranslation();
  const [state, setState] = useState<Loaded<T>>({ kind: 'loading' });
  const [round, setRound] = useState(0);
  const stableLoad = useCallback(load, deps);
  useEffect(() => {
    let cancelled = false;
    stableLoad().then(
      (data) => !cancelled && setState({ kind: 'loaded', data }),
      (error: unknown) =>
        !cancelled && setState({ kind: 'failed', message: errorMessage(error, t) }),
    );
    return () => {
      cancelled = true;
    };
  }, [stableLoad, round, t]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return [state, reload, setState] as const;
}
