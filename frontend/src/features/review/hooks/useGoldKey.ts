import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useState } from 'react';

import { api, isApiError } from '../../../api/client';
import type { AnnotationState } from '../../../api/types';
import { applyPending, deriveLabels } from '../../../components/patternEditor/labels';
import { useKeyWrites } from '../../../lib/writeQueue/useKeyWrites';
import type { WriteQueue } from '../../../lib/writeQueue/writeQueue';
import { reviewKeys } from '../api/queryKeys';
import { goldState, withPendingSources } from './reviewQueue';
import type { GoldDisplayPattern, GoldState } from './reviewQueue';

/**
 * One key on the adjudication screen: its review detail (tried again while the server is
 * unavailable), the gold as the server last sent it, and the gold as shown, with the
 * writes the queue still holds for it applied on top.
 */
export function useGoldKey(keyId: number, queue: WriteQueue) {
  const query = useQuery({
    queryKey: reviewKeys.key(keyId),
    queryFn: () => api.review.key(keyId),
    retry: (failures, error) =>
      failures < 5 && isApiError(error) && (error.status === 0 || error.status >= 500),
    gcTime: 0,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const detail = query.data;
  const [server, setServer] = useState<GoldState | null>(null);

  useEffect(() => {
    if (!detail) return;
    queue.observe(goldState(keyId, detail.gold));
    setServer((queue.stateOf(keyId) as GoldState | undefined) ?? goldState(keyId, detail.gold));
  }, [detail, queue, keyId]);

  const { snapshot, pending, noteStatus } = useKeyWrites(queue, keyId);
  const prefixes = useMemo(() => detail?.prefixes ?? [], [detail]);
  const ranks = useMemo(() => prefixes.map((prefix) => prefix.rank), [prefixes]);
  const display = useMemo(() => (server ? applyPending(server, pending) : null), [server, pending]);
  const goldPatterns: GoldDisplayPattern[] = useMemo(
    () => withPendingSources(display?.patterns ?? [], pending, detail?.annotations ?? []),
    [display, pending, detail],
  );
  const goldLabels = useMemo(() => deriveLabels(ranks, goldPatterns), [ranks, goldPatterns]);
  // The annotator patterns in the gold (pending adoptions too): not adopted twice.
  const adoptedIds = useMemo(
    () => new Set(goldPatterns.map((pattern) => pattern.source_pattern_id)),
    [goldPatterns],
  );
  const lastCheck = [...pending].reverse().find((write) => write.op.type === 'check');
  const isCheck =
    lastCheck && lastCheck.op.type === 'check' ? lastCheck.op.isCheck : !!server?.is_check;

  /** A state the queue learnt: kept unless the one known is newer. */
  const adopt = useCallback((state: AnnotationState) => {
    setServer((known) => (known && known.version > state.version ? known : (state as GoldState)));
  }, []);
  /** The server's state after a conflict: it replaces the one known. */
  const replace = useCallback((state: AnnotationState) => setServer(state as GoldState), []);

  return {
    query,
    detail,
    server,
    ready: detail !== undefined && server !== null,
    snapshot,
    noteStatus,
    prefixes,
    ranks,
    display,
    goldPatterns,
    goldLabels,
    adoptedIds,
    isCheck,
    adopt,
    replace,
  };
}
