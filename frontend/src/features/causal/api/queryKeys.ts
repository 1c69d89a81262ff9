/** The causal page's query keys; under 'admin', as the admin screens' (features/manage/api). */
export const causalKeys = {
  /** A study's jobs, newest first (no results). */
  jobs: (studyId: number) => ['admin', 'causal', studyId] as const,
  /** One job with its result: fetched once it is done (a done job never changes). */
  job: (jobId: number) => ['admin', 'causal-job', jobId] as const,
};
