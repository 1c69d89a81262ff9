import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';

import { api } from '../../../api/client';
import { workspaceKeys } from '../../workspace/api/queryKeys';
import { preparingKeys } from '../api/queryKeys';

export const PREPARING_POLL_MS = 2_000;

/**
 * The studies being mined for the signed-in annotator, polled while there are any.
 * A study that leaves the list has been loaded and its keys given (in one transaction
 * on the server), so the annotator's assignments are fetched again: the new keys show
 * without a reload.
 */
export function usePreparing() {
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: preparingKeys.runs(),
    queryFn: () => api.preparing(),
    // A failed poll keeps the last list, so polling goes on until an answer says none.
    refetchInterval: (q) => ((q.state.data?.length ?? 0) > 0 ? PREPARING_POLL_MS : false),
  });
  // The ids as one string, so that a new answer with the same runs is no change.
  const ids = query.data?.map((run) => run.id).join(',');
  const known = useRef<ReadonlySet<string>>(new Set());

  useEffect(() => {
    if (ids === undefined) return;
    const now = new Set(ids ? ids.split(',') : []);
    const ended = [...known.current].some((id) => !now.has(id));
    known.current = now;
    if (ended) void queryClient.invalidateQueries({ queryKey: workspaceKeys.assignments() });
  }, [ids, queryClient]);

  return query;
}
