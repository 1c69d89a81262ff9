// The curator's review API (/api/review/…): names for its shapes, all from the OpenAPI
// schema (schema.d.ts); the calls are `api.review` in client.ts.
import type { components, paths } from './schema';

type Schemas = components['schemas'];

export type GoldStatus = Schemas['AnnotationStatusEnum'];
export type ReviewStudy = Schemas['ReviewStudy'];
export type FlagReason = Schemas['KeyFlagReasonEnum'];
export type ReviewFlag = Schemas['ReviewFlag'];
export type ReviewQueueRow = Schemas['ReviewQueueItem'];
export type ReviewQueuePage = Schemas['ReviewQueue'];
export type ReviewPattern = Schemas['ReviewPattern'];
export type ReviewAnnotation = Schemas['ReviewAnnotation'];
export type GoldPattern = Schemas['GoldPattern'];
export type Gold = Schemas['Gold'];
export type GoldConflict = Schemas['GoldConflict'];
export type ReviewKeyDetail = Schemas['ReviewKeyDetail'];
export type GoldPatternCreate = Schemas['GoldPatternCreateRequest'];
// A PATCH's fields are optional in the schema, but every gold write carries its version.
export type GoldPatternUpdate = Schemas['PatchedGoldPatternUpdateRequest'] & { version: number };
export type GoldUpdate = Schemas['PatchedGoldUpdateRequest'] & { version: number };

type QueueParams = NonNullable<
  paths['/api/review/studies/{study_id}/queue/']['get']['parameters']['query']
>;

export type ReviewQueueStatus = NonNullable<QueueParams['status']>;

/** The queue's filters and page; a null or absent layer or batch means "all". */
export type ReviewQueueQuery = Omit<QueueParams, 'layer' | 'batch'> & {
  layer?: number | null;
  batch?: number | null;
};

/** The query as sent: `layer`, `batch` (when set), `status`, `offset`, `limit`, in that order. */
export function reviewQueueParams(query: ReviewQueueQuery): QueueParams {
  const params: QueueParams = {};
  if (query.layer !== undefined && query.layer !== null) params.layer = query.layer;
  if (query.batch !== undefined && query.batch !== null) params.batch = query.batch;
  params.status = query.status ?? 'unreviewed';
  params.offset = query.offset ?? 0;
  params.limit = query.limit ?? 50;
  return params;
}
