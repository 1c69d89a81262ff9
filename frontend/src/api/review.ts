// The curator's review API (/api/review/…), typed by hand from the review contract
// while its schema is not in this branch. TODO(schema): once `make schema` has the
// review endpoints, replace these with `Schemas['…']` in types.ts and the calls in
// client.ts (`api.review`) with typed `client.GET/POST/…` calls.
import type { PatternKind, PrefixLabelValue, TriggerPrefix } from './types';

export type GoldStatus = 'draft' | 'submitted';

export interface ReviewStudy {
  id: number;
  name: string;
  archived: boolean;
  keys: number;
  /** Keys in the queue (ready for review). */
  ready: number;
  /** Keys whose gold is submitted. */
  curated: number;
  /** Keys with at least one flag. */
  flagged: number;
  check_rate: number;
}

export type FlagReason = 'unclear' | 'tokenization' | 'offensive' | 'other';

export interface ReviewFlag {
  annotator: string;
  reason: FlagReason;
  note: string;
}

export type ReviewQueueStatus = 'unreviewed' | 'curated' | 'all';

export interface ReviewQueueQuery {
  layer?: number | null;
  batch?: number | null;
  status?: ReviewQueueStatus;
  offset?: number;
  limit?: number;
}

export interface ReviewQueueRow {
  key_id: number;
  layer: number;
  index: number;
  annotators: string[];
  /** Share of the key's prefixes whose labels are not all equal, 0..1. */
  disagreement: number;
  /** Krippendorff's α (nominal), null where undefined. */
  alpha: number | null;
  gold_status: GoldStatus | null;
  is_check: boolean;
  flags: ReviewFlag[];
}

export interface ReviewQueuePage {
  count: number;
  offset: number;
  limit: number;
  results: ReviewQueueRow[];
  layers: number[];
  batches: { id: number; name: string }[];
}

export interface ReviewPattern {
  id: number;
  description: string;
  kind: PatternKind;
  prefix_ranks: number[];
}

export interface ReviewAnnotation {
  id: number;
  annotator: string;
  status: string;
  note: string;
  submitted_at: string | null;
  active_seconds: number | null;
  patterns: ReviewPattern[];
  /** One per prefix, in rank order. */
  labels: PrefixLabelValue[];
}

export interface GoldPattern extends ReviewPattern {
  source: 'written' | 'adopted';
  source_annotator: string | null;
  source_pattern_id: number | null;
  /** Echoed by the server when it keeps the create's client id (not in the contract). */
  client_id?: string | null;
}

export interface Gold {
  status: GoldStatus;
  version: number;
  note: string;
  is_check: boolean;
  curator: string | null;
  updated_at: string;
  patterns: GoldPattern[];
  labels: PrefixLabelValue[];
}

export interface ReviewKeyDetail {
  key: {
    id: number;
    layer: number;
    index: number;
    study: { id: number; name: string; archived: boolean; is_causal: boolean };
    density: number | null;
    max_coefficient: number | null;
    value_top_tokens: { token: string; probability: number }[] | null;
  };
  prefixes: TriggerPrefix[];
  annotations: ReviewAnnotation[];
  gold: Gold | null;
  flags: (ReviewFlag & { created_at: string })[];
  neighbours: { previous_key_id: number | null; next_key_id: number | null };
}

export interface GoldPatternCreate {
  version: number;
  client_id: string;
  description: string;
  kind: PatternKind;
  prefix_ranks: number[];
  source_pattern_id?: number;
}

export interface GoldPatternUpdate {
  version: number;
  description?: string;
  kind?: PatternKind;
  prefix_ranks?: number[];
}

/** `?layer=&batch=&status=&offset=&limit=` in that order; layer and batch only when set. */
export function reviewQueueSearch(query: ReviewQueueQuery): string {
  const params = new URLSearchParams();
  if (query.layer !== undefined && query.layer !== null) params.set('layer', String(query.layer));
  if (query.batch !== undefined && query.batch !== null) params.set('batch', String(query.batch));
  params.set('status', query.status ?? 'unreviewed');
  params.set('offset', String(query.offset ?? 0));
  params.set('limit', String(query.limit ?? 50));
  return `?${params.toString()}`;
}
