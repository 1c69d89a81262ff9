import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';

import type { CausalJob, CausalProbe } from '../../../api/causal';
import { api } from '../../../api/client';
import { causalKeys } from '../api/queryKeys';

/** How often the jobs are asked after while one is queued or running. */
export const CAUSAL_POLL_MS = 2_000;

export function isActive(job: Pick<CausalJob, 'status'> | null | undefined): boolean {
  return job?.status === 'queued' || job?.status === 'running';
}

/**
 * A study's causal jobs, newest first: polled while any of them is queued or running (a
 * failed poll keeps the last answer, and the polling). The list carries no results: a done
 * job's is fetched once, when it is opened (useCausalJob).
 */
export function useCausalJobs(studyId: number) {
  return useQuery({
    queryKey: causalKeys.jobs(studyId),
    queryFn: () => api.admin.causalJobs(studyId),
    refetchInterval: (query) =>
      query.state.data?.some((job) => isActive(job)) ? CAUSAL_POLL_MS : false,
  });
}

/** A job's result, fetched once it is done (a done job never changes); null before. */
export function useCausalJob(job: CausalJob | null) {
  const done = job?.status === 'done';
  return useQuery({
    queryKey: causalKeys.job(job?.id ?? 0),
    queryFn: () => api.admin.causalJob(job!.id),
    enabled: done,
    staleTime: Infinity,
  });
}

/**
 * Queue a probe. The new job goes to the top of the list at once, so that the list polls
 * until it is done; `onStarted` hears of it (the page opens it).
 */
export function useStartCausalJob(studyId: number, onStarted: (job: CausalJob) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (probe: CausalProbe) => api.admin.createCausalJob(studyId, probe),
    onSuccess: (job) => {
      queryClient.setQueryData<CausalJob[]>(causalKeys.jobs(studyId), (jobs = []) => [
        job,
        ...jobs.filter((each) => each.id !== job.id),
      ]);
      onStarted(job);
    },
  });
}
