// The curator's gold writes go through the same persistent write queue as the
// annotator's (lib/writeQueue/writeQueue.ts: stored first, one at a time, retried with
// back-off, 409 → the server's current gold, 400 → handed back). Its own instance and
// storage namespace: the annotator's queue and transport are untouched. The queue
// speaks in annotation states; a gold is carried in that shape (its extra fields,
// source and is_check, ride along).
import { useEffect, useSyncExternalStore } from 'react';

import { api, ApiError, isApiError } from '../../../api/client';
import { useAuth } from '../../../lib/auth';
import type { Gold, GoldPattern, ReviewAnnotation } from '../../../api/review';
import type { AnnotationState } from '../../../api/types';
import type { DisplayPattern } from '../../../components/patternEditor/labels';
import { findPattern, WriteQueue } from '../../../lib/writeQueue/writeQueue';
import type { QueuedWrite, Transport } from '../../../lib/writeQueue/writeQueue';

/** A gold in the write queue's shape: what the review screen reads back. */
export type GoldState = AnnotationState & {
  is_check: boolean;
  curator: string | null;
  patterns: (AnnotationState['patterns'][number] & Omit<GoldPattern, 'source'>)[];
};

/** A gold pattern as the review screen shows it (a pending one has no source yet). */
export type GoldDisplayPattern = DisplayPattern & Partial<Omit<GoldPattern, 'source' | 'scores'>>;

/** The key's gold as an annotation state; no gold yet is a "new" state at version 0. */
export function goldState(keyId: number, gold: Gold | null): GoldState {
  return {
    id: null,
    key_id: keyId,
    status: gold?.status ?? 'new',
    note: gold?.note ?? '',
    version: gold?.version ?? 0,
    submitted_at: null,
    updated_at: gold?.updated_at ?? null,
    labels: [],
    // The write queue's state shape; a curator's time on a gold is not measured.
    active_seconds: 0,
    is_check: gold?.is_check ?? false,
    curator: gold?.curator ?? null,
    // The gold's own sources (`adopted`) ride along in the annotator patterns' shape.
    patterns: (gold?.patterns ?? []).map((pattern, order) => ({
      ...pattern,
      order,
    })) as unknown as GoldState['patterns'],
  };
}

// A 409's `current` is a gold: carried on in the queue's shape.
async function asGold(keyId: number, call: Promise<Gold>): Promise<GoldState> {
  try {
    return goldState(keyId, await call);
  } catch (error) {
    if (isApiError(error) && error.status === 409) {
      const body = (error.body ?? {}) as { current?: Gold | null };
      if (body.current && typeof body.current === 'object') {
        throw new ApiError(409, error.detail, {
          ...body,
          current: goldState(keyId, body.current),
        });
      }
    }
    throw error;
  }
}

/**
 * A pattern not answered yet is matched to its queued create by `client_id` (as the
 * server's answer is, once it comes): an adoption shows its source at once.
 */
export function withPendingSources(
  patterns: readonly GoldDisplayPattern[],
  writes: readonly QueuedWrite[],
  annotations: readonly ReviewAnnotation[],
): GoldDisplayPattern[] {
  const annotatorOf = new Map<number, string>();
  for (const annotation of annotations) {
    for (const pattern of annotation.patterns) annotatorOf.set(pattern.id, annotation.annotator);
  }
  return patterns.map((pattern) => {
    if (pattern.source !== undefined || !pattern.client_id) return pattern;
    const create = writes.find(
      ({ op }) => op.type === 'create' && op.clientId === pattern.client_id,
    );
    if (!create || create.op.type !== 'create') return pattern;
    const sourceId = create.op.sourcePatternId;
    return sourceId === undefined
      ? { ...pattern, source: 'written', source_annotator: null, source_pattern_id: null }
      : {
          ...pattern,
          source: 'adopted',
          source_annotator: annotatorOf.get(sourceId) ?? null,
          source_pattern_id: sourceId,
        };
  });
}

async function fetchGold(keyId: number): Promise<GoldState> {
  return goldState(keyId, (await api.review.key(keyId)).gold);
}

export const reviewTransport: Transport = {
  fetchState: fetchGold,
  async send({ keyId, op }, state) {
    const version = state.version;
    switch (op.type) {
      case 'note':
        return asGold(keyId, api.review.updateGold(keyId, { version, note: op.note }));
      case 'check':
        return asGold(keyId, api.review.updateGold(keyId, { version, is_check: op.isCheck }));
      case 'create':
        return asGold(
          keyId,
          api.review.createPattern(keyId, {
            version,
            client_id: op.clientId,
            description: op.description,
            kind: op.kind,
            prefix_ranks: op.prefixRanks,
            ...(op.sourcePatternId !== undefined ? { source_pattern_id: op.sourcePatternId } : {}),
          }),
        );
      case 'update': {
        const pattern = findPattern(state.patterns, op.ref);
        if (!pattern) return state; // deleted meanwhile
        return asGold(
          keyId,
          api.review.updatePattern(keyId, pattern.id, { ...op.changes, version }),
        );
      }
      case 'delete': {
        const pattern = findPattern(state.patterns, op.ref);
        if (!pattern) return state; // already gone
        try {
          return await asGold(keyId, api.review.deletePattern(keyId, pattern.id, version));
        } catch (error) {
          if (isApiError(error) && error.status === 404) return fetchGold(keyId);
          throw error;
        }
      }
      case 'submit':
        return asGold(keyId, api.review.submit(keyId, version));
      case 'reopen':
        return asGold(keyId, api.review.reopen(keyId, version));
    }
  },
};

export function reviewQueueNamespace(userId: number): string {
  return `ffkv.review-writes.${userId}`;
}

// The curator's queue lives outside React's tree of providers (the host below sits
// beside the header), so that App.tsx's tree is left as it is; pages read it with
// useReviewQueue().
let current: WriteQueue | null = null;
const watchers = new Set<() => void>();

function publish(queue: WriteQueue | null) {
  current = queue;
  for (const watcher of watchers) watcher();
}

function subscribe(watcher: () => void): () => void {
  watchers.add(watcher);
  return () => watchers.delete(watcher);
}

/**
 * One gold write queue per curator (admins included), started as soon as we know who it
 * is, so that gold writes left from an earlier visit are replayed whatever page is open.
 */
export function ReviewQueueHost() {
  const { user } = useAuth();
  const userId = user && (user.is_curator || user.is_staff) ? user.id : null;
  useEffect(() => {
    if (userId === null) return;
    const created = new WriteQueue({
      namespace: reviewQueueNamespace(userId),
      transport: reviewTransport,
    });
    created.start();
    publish(created);
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      if (created.getSnapshot().writes.length === 0) return;
      event.preventDefault();
      event.returnValue = true;
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => {
      window.removeEventListener('beforeunload', onBeforeUnload);
      created.stop();
      if (current === created) publish(null);
    };
  }, [userId]);
  return null;
}

export function useReviewQueue(): WriteQueue | null {
  return useSyncExternalStore(subscribe, () => current);
}
