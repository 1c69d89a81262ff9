/**
 * The admin screens' query keys, in one place so that a write can name what it makes
 * stale. Every key starts with 'admin' (the report's keys too: features/report/api);
 * a shorter key (a batch's keys without an offset) matches every longer one under it.
 */
export const manageKeys = {
  studies: () => ['admin', 'studies'] as const,
  study: (studyId: number) => ['admin', 'study', studyId] as const,
  batches: (studyId: number) => ['admin', 'batches', studyId] as const,
  guidelines: (studyId: number) => ['admin', 'guidelines', studyId] as const,
  batchProgress: (batchId: number) => ['admin', 'batch-progress', batchId] as const,
  batchKeys: (batchId: number) => ['admin', 'batch-keys', batchId] as const,
  batchKeysPage: (batchId: number, offset: number) =>
    ['admin', 'batch-keys', batchId, offset] as const,
  annotators: () => ['admin', 'annotators'] as const,
  miningRuns: () => ['admin', 'mining-runs'] as const,
};
