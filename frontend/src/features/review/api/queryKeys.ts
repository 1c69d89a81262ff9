import type { ReviewQueueStatus } from '../../../api/review';

/** The curator's query keys; every one starts with 'review'. */
export const reviewKeys = {
  studies: () => ['review', 'studies'] as const,
  queue: (
    studyId: number,
    layer: number | null,
    batch: number | null,
    status: ReviewQueueStatus,
    offset: number,
  ) => ['review', 'queue', studyId, layer, batch, status, offset] as const,
  key: (keyId: number) => ['review', 'key', keyId] as const,
};
