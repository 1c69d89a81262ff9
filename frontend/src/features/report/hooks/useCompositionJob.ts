import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';

import { api } from '../../../api/client';
import type { CompositionJob, CompositionStatus } from '../../../api/types';
import { reportKeys } from '../api/queryKeys';

/** How often a queued or running job is asked after. */
export const COMPOSITION_POLL_MS = 2_000;

export function isActive(job: CompositionJob | null | undefined): boolean {
  return job?.status === 'queued' || job?.status === 'running';
}

/**
 * A study's §5 composition job: its latest state, polled while it is queued or running,
 * and a new one. When a job this page saw queued or running is done, the study's reports
 * are stale (their figures are the job's): they are fetched again, so the figures appear
 * without a reload.
 */
export function useCompositionJob(studyId: number) {
  const queryClient = useQueryClient();
  const key = reportKeys.composition(studyId);
  const status = useQuery({
    queryKey: key,
    queryFn: async () => {
      const before = queryClient.getQueryData<CompositionStatus>(key)?.job;
      const now = await api.admin.compositionStatus(studyId);
      if (isActive(before) && now.job?.status === 'done') {
        void queryClient.invalidateQueries({ queryKey: reportKeys.reports(studyId) });
      }
      return now;
    },
    // A failed poll is not a failed job: the last answer stays, and so does the polling.
    refetchInterval: (query) => (isActive(query.state.data?.job) ? COMPOSITION_POLL_MS : false),
  });
  const start = useMutation({
    mutationFn: (prefixes: number) => api.admin.createComposition(studyId, prefixes),
    onSuccess: (answer) => {
      queryClient.setQueryData(key, answer);
      // A worker that runs tasks at once (eager, in development) is done already.
      if (answer.job?.status === 'done') {
        void queryClient.invalidateQueries({ queryKey: reportKeys.reports(studyId) });
      }
    },
  });
  return { status, start };
}
