import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api, isApiError } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AnnotationState, KeyDetail } from '../../../api/types';
import type { WriteQueue } from '../../../lib/writeQueue/writeQueue';
import { workspaceKeys } from '../api/queryKeys';

export type KeyLoad =
  { kind: 'loading' } | { kind: 'failed'; message: string } | { kind: 'ready'; detail: KeyDetail };

/** The longest wait between two tries while the server is unavailable. */
export const MAX_RETRY_DELAY_MS = 10_000;

/** No answer or a 5xx/503 (the database restarting, SQLite busy): worth another try. */
function unavailable(error: unknown): boolean {
  return isApiError(error) && (error.status === 0 || error.status >= 500);
}

/**
 * One key's detail (asked with the assignment of the address, which the answer replaces
 * by the user's own: `assignment_id`), read through TanStack Query: tried again by itself, backing off
 * (1 s, 2 s, 4 s … up to 10 s), for as long as the server is unavailable, as the write
 * queue does; and the latest annotation state the server sent for it.
 */
export function useKeyDetail(keyId: number, queue: WriteQueue, assignmentId?: number) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const queryKey = workspaceKeys.keyDetail(keyId, assignmentId);
  const query = useQuery({
    queryKey,
    queryFn: () => api.key(keyId, assignmentId),
    retry: (_failures, error) => unavailable(error),
    retryDelay: (failures) => Math.min(MAX_RETRY_DELAY_MS, 1_000 * 2 ** failures),
    // Read once per visit: the write queue's answers keep the annotation current after
    // that, and a cached copy from an earlier visit is never shown.
    gcTime: 0,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const [server, setServer] = useState<AnnotationState | null>(null);
  const detail = query.data;

  useEffect(() => {
    if (!detail) return;
    queue.observe(detail.annotation);
    setServer(queue.stateOf(keyId) ?? detail.annotation);
  }, [detail, queue, keyId]);

  // While it retries by itself the page says why it waits; a refusal (403, 404) is final.
  const failure = query.error ?? query.failureReason;
  const load: KeyLoad =
    detail !== undefined && server !== null
      ? { kind: 'ready', detail }
      : failure
        ? { kind: 'failed', message: errorMessage(failure, t) }
        : { kind: 'loading' };

  /** A state the server answered; an older version never replaces a newer one. */
  const adopt = useCallback((state: AnnotationState) => {
    setServer((known) => (known && known.version > state.version ? known : state));
  }, []);

  // Starts over from "loading", with the back-off reset.
  const retry = useCallback(() => {
    void client.resetQueries({ queryKey: workspaceKeys.keyDetail(keyId, assignmentId) });
  }, [client, keyId, assignmentId]);

  return { load, server, setServer, adopt, retry };
}
