import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api, isApiError } from '../api/client';
import { errorMessage } from '../api/errorMessage';
import type { AnnotationState, KeyDetail } from '../api/types';
import type { WriteQueue } from './writeQueue';

export type KeyLoad =
  { kind: 'loading' } | { kind: 'failed'; message: string } | { kind: 'ready'; detail: KeyDetail };

/**
 * One key's detail, read once (and again by itself, backing off, while the server is
 * unavailable), and the latest annotation state the server sent for it.
 */
export function useKeyDetail(keyId: number, queue: WriteQueue) {
  const { t } = useTranslation();
  const [load, setLoad] = useState<KeyLoad>({ kind: 'loading' });
  const [server, setServer] = useState<AnnotationState | null>(null);
  const [round, setRound] = useState(0);
  const attempts = useRef(0);

  useEffect(() => {
    let cancelled = false;
    let retryTimer: ReturnType<typeof setTimeout> | null = null;
    api.key(keyId).then(
      (detail) => {
        if (cancelled) return;
        queue.observe(detail.annotation);
        setServer(queue.stateOf(keyId) ?? detail.annotation);
        attempts.current = 0;
        setLoad({ kind: 'ready', detail });
      },
      (error: unknown) => {
        if (cancelled) return;
        setLoad({ kind: 'failed', message: errorMessage(error, t) });
        // No answer or a 5xx/503 (the database restarting, SQLite busy): try again by
        // itself, backing off, as the write queue does (DESIGN §9).
        if (isApiError(error) && (error.status === 0 || error.status >= 500)) {
          const delay = Math.min(10_000, 1_000 * 2 ** attempts.current++);
          retryTimer = setTimeout(() => setRound((value) => value + 1), delay);
        }
      },
    );
    return () => {
      cancelled = true;
      if (retryTimer) clearTimeout(retryTimer);
    };
  }, [keyId, queue, t, round]);

  /** A state the server answered; an older version never replaces a newer one. */
  const adopt = useCallback((state: AnnotationState) => {
    setServer((known) => (known && known.version > state.version ? known : state));
  }, []);

  const retry = useCallback(() => {
    setLoad({ kind: 'loading' });
    setRound((value) => value + 1);
  }, []);

  return { load, server, setServer, adopt, retry };
}
