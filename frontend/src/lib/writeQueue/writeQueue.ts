// The annotator's writes, kept until the server has them (no annotation is
// ever lost: docs/reliability.md, "What is guaranteed").
//
// - Every write is queued first and persisted in localStorage, so a reload or a closed
//   tab loses nothing: the queue is replayed on the next load.
// - One write at a time, in order. The version sent is the latest the queue has seen
//   from the server for that key, read at send time, so queued writes chain.
// - No answer, 5xx, 503 or 429: keep the write and retry with exponential backoff
//   (and at once when the browser says it is online again).
// - Retries are idempotent: a pattern create carries a client-made UUID (the server
//   answers a retried create with the pattern it already made); a note save of the
//   same text, a repeated submit or reopen are no-ops on the server; deleting a
//   pattern that is already gone (404) counts as done.
// - 409 carries the server's current state: the queue adopts it, tells the screen
//   (which shows what changed), and carries on from it; writes that no longer apply
//   (the key was submitted elsewhere, the pattern was deleted elsewhere) are dropped
//   and handed back to the screen, which puts their text back where it can.
// - 400 (a rule refused) drops the write and hands back the server's message.
// - A write may be held back for a moment (the note while the annotator types, a
//   delete while it can still be undone): it is stored at once, like any other, but
//   sent only when its time comes. Other writes go ahead of it, since they do not
//   depend on it; a submit or reopen releases the key's held writes and goes after
//   them. A held write that has not left can be cancelled.
//
// Storage, one entry per tab and the adoption of closed tabs' writes, is
// queueStorage.ts.
import { api, isApiError } from '../../api/client';
import type { AnnotationState, PatternKind } from '../../api/types';
import { newId, QueueStorage } from './queueStorage';

export { newId } from './queueStorage';

export interface PatternRef {
  /** The server's id, when the pattern had one when the write was made. */
  id?: number;
  /** The client id of a pattern made here: resolved to the server's id at send time. */
  clientId?: string | null;
}

export type WriteOp =
  /** `activeSeconds`: the running total of active time on the key (activeTime.ts). */
  | { type: 'note'; note: string; activeSeconds?: number }
  | {
      type: 'create';
      clientId: string;
      description: string;
      kind: PatternKind;
      prefixRanks: number[];
      /** The curator's adoption of an annotator's pattern (review queue only). */
      sourcePatternId?: number;
    }
  | {
      type: 'update';
      ref: PatternRef;
      changes: { description?: string; kind?: PatternKind; prefix_ranks?: number[] };
    }
  | { type: 'delete'; ref: PatternRef }
  | { type: 'submit'; activeSeconds?: number }
  | { type: 'reopen' }
  /** Mark (or unmark) a gold annotation as a check key (review queue only). */
  | { type: 'check'; isCheck: boolean };

export interface QueuedWrite {
  id: string;
  keyId: number;
  op: WriteOp;
  /** Held back until this time (ms since the epoch, so that it survives a reload). */
  sendAfter?: number;
}

export type SaveStatus = 'saved' | 'saving' | 'offline' | 'error';

export interface QueueSnapshot {
  status: SaveStatus;
  writes: readonly QueuedWrite[];
  /** The server's message while `status` is 'error' (e.g. signed out). */
  message: string;
}

export type QueueEvent =
  | { type: 'applied'; keyId: number; state: AnnotationState; write: QueuedWrite }
  | {
      type: 'conflict';
      keyId: number;
      previous: AnnotationState | undefined;
      current: AnnotationState;
      detail: string;
      dropped: QueuedWrite[];
    }
  | { type: 'rejected'; keyId: number; write: QueuedWrite; message: string };

/** What the queue needs from the network; the real one is `apiTransport`. */
export interface Transport {
  fetchState(keyId: number): Promise<AnnotationState>;
  send(write: QueuedWrite, state: AnnotationState): Promise<AnnotationState>;
}

export function findPattern<T extends { id: number; client_id?: string | null }>(
  patterns: readonly T[],
  ref: PatternRef,
): T | undefined {
  return patterns.find(
    (pattern) =>
      (ref.id !== undefined && ref.id > 0 && pattern.id === ref.id) ||
      (!!ref.clientId && pattern.client_id === ref.clientId),
  );
}

export const apiTransport: Transport = {
  fetchState: (keyId) => api.annotation(keyId),
  async send({ keyId, op }, state) {
    const version = state.version;
    switch (op.type) {
      case 'note':
        return api.saveNote(keyId, op.note, version, op.activeSeconds);
      case 'create':
        return api.createPattern(keyId, {
          description: op.description,
          kind: op.kind,
          prefix_ranks: op.prefixRanks,
          version,
          client_id: op.clientId,
        });
      case 'update': {
        const pattern = findPattern(state.patterns, op.ref);
        if (!pattern) return state; // deleted meanwhile: nothing to change
        return api.updatePattern(keyId, pattern.id, { ...op.changes, version });
      }
      case 'delete': {
        const pattern = findPattern(state.patterns, op.ref);
        if (!pattern) return state; // already gone
        try {
          return await api.deletePattern(keyId, pattern.id, version);
        } catch (error) {
          // A retried delete whose first attempt went through: done.
          if (isApiError(error) && error.status === 404) return api.annotation(keyId);
          throw error;
        }
      }
      case 'submit':
        return api.submit(keyId, version, op.activeSeconds);
      case 'reopen':
        return api.reopen(keyId, version);
      case 'check':
        return state; // a curator's write: never queued for an annotation
    }
  },
};

function isRetryable(status: number): boolean {
  return status === 0 || status === 408 || status === 429 || status >= 500;
}

function isAnnotationState(value: unknown): value is AnnotationState {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as AnnotationState).version === 'number' &&
    Array.isArray((value as AnnotationState).patterns)
  );
}

/** A write that only makes sense on a draft (everything but submit and reopen). */
function needsDraft(write: QueuedWrite): boolean {
  return write.op.type !== 'submit' && write.op.type !== 'reopen';
}

export interface WriteQueueOptions {
  /** Storage keys start with it; one per user, so nobody replays another's writes. */
  namespace: string;
  transport?: Transport;
  storage?: Storage;
  tabStorage?: Storage;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A tab that has not beaten for this long is gone; its queue is adopted. */
  orphanAfterMs?: number;
  now?: () => number;
}

const MAX_REBASES = 5;
const MAX_OUTCOMES = 200;

export type WriteOutcome = 'applied' | 'dropped';

/** What an event says about one write: applied, dropped, or nothing. */
function outcomeOf(event: QueueEvent, writeId: string): WriteOutcome | null {
  if (event.type === 'applied') return event.write.id === writeId ? 'applied' : null;
  if (event.type === 'rejected') return event.write.id === writeId ? 'dropped' : null;
  return event.dropped.some((write) => write.id === writeId) ? 'dropped' : null;
}
const BEAT_MS = 5_000;

export class WriteQueue {
  private writes: QueuedWrite[] = [];
  private readonly states = new Map<number, AnnotationState>();
  private readonly listeners = new Set<(event: QueueEvent) => void>();
  private readonly watchers = new Set<() => void>();
  private snapshot: QueueSnapshot = { status: 'saved', writes: [], message: '' };
  private running = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private holdTimer: ReturnType<typeof setTimeout> | null = null;
  private inFlight: string | null = null;
  private beatTimer: ReturnType<typeof setInterval> | null = null;
  private failures = 0;
  private rebases = new Map<string, number>();
  private readonly outcomes = new Map<string, WriteOutcome>();
  private stopped = false;
  private readonly transport: Transport;
  private readonly store: QueueStorage;
  private readonly baseDelay: number;
  private readonly maxDelay: number;
  private readonly now: () => number;

  constructor(options: WriteQueueOptions) {
    this.transport = options.transport ?? apiTransport;
    this.baseDelay = options.baseDelayMs ?? 1_000;
    this.maxDelay = options.maxDelayMs ?? 30_000;
    this.now = options.now ?? Date.now;
    this.store = new QueueStorage({
      namespace: options.namespace,
      storage: options.storage,
      tabStorage: options.tabStorage,
      orphanAfterMs: options.orphanAfterMs ?? 3 * BEAT_MS,
      now: this.now,
    });
    this.writes = this.store.load();
    this.publish();
  }

  /** Start sending (and replaying what was stored), and keep this tab's heartbeat. */
  start(): void {
    this.stopped = false;
    this.persist();
    if (typeof window !== 'undefined') window.addEventListener('online', this.retryNow);
    this.beatTimer = setInterval(() => this.persist(), BEAT_MS);
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.holdTimer) clearTimeout(this.holdTimer);
    if (this.beatTimer) clearInterval(this.beatTimer);
    this.timer = null;
    this.holdTimer = null;
    this.beatTimer = null;
    if (typeof window !== 'undefined') window.removeEventListener('online', this.retryNow);
  }

  // -- reading ---------------------------------------------------------------------

  subscribe = (watcher: () => void): (() => void) => {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  };

  getSnapshot = (): QueueSnapshot => this.snapshot;

  onEvent(listener: (event: QueueEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pendingFor(keyId: number): QueuedWrite[] {
    return this.writes.filter((write) => write.keyId === keyId);
  }

  /** The latest state the server sent for this key, if any. */
  stateOf(keyId: number): AnnotationState | undefined {
    return this.states.get(keyId);
  }

  /** Resolves once nothing of this key waits in the queue. */
  whenSettled(keyId: number): Promise<void> {
    if (this.pendingFor(keyId).length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const unsubscribe = this.subscribe(() => {
        if (this.pendingFor(keyId).length === 0) {
          unsubscribe();
          resolve();
        }
      });
    });
  }

  /**
   * Resolves once this write has left the queue: 'applied' when the server took it,
   * 'dropped' when it was refused or given up on in a conflict (or is unknown here).
   * A write that is retried (offline, a rebase after a 409) is waited for.
   */
  whenDone(writeId: string): Promise<WriteOutcome> {
    const known = this.outcomes.get(writeId);
    if (known) return Promise.resolve(known);
    if (!this.writes.some((write) => write.id === writeId)) return Promise.resolve('dropped');
    return new Promise((resolve) => {
      const unsubscribe = this.onEvent((event) => {
        const outcome = outcomeOf(event, writeId);
        if (!outcome) return;
        unsubscribe();
        resolve(outcome);
      });
    });
  }

  // -- writing ---------------------------------------------------------------------

  /** Remember a state read from the server; older versions never replace newer ones. */
  observe(state: AnnotationState): void {
    const known = this.states.get(state.key_id);
    if (!known || state.version >= known.version) this.states.set(state.key_id, state);
  }

  /**
   * Queue a write (stored at once). With `holdMs`, it waits that long before it is sent;
   * a note save replaces the key's note save that has not left yet.
   */
  enqueue(keyId: number, op: WriteOp, options: { holdMs?: number } = {}): QueuedWrite {
    const sendAfter = options.holdMs ? this.now() + options.holdMs : undefined;
    if (op.type === 'submit' || op.type === 'reopen') this.unhold(keyId, () => true);
    if (op.type === 'note') {
      // Only the latest text matters: replace a note save that has not left yet.
      const waiting = this.writes.findIndex(
        (write) => write.keyId === keyId && write.op.type === 'note' && write.id !== this.inFlight,
      );
      if (waiting >= 0) {
        const replaced: QueuedWrite = { id: this.writes[waiting]!.id, keyId, op, sendAfter };
        this.writes = this.writes.map((write, index) => (index === waiting ? replaced : write));
        this.changed();
        void this.run();
        return replaced;
      }
    }
    const write: QueuedWrite = { id: newId(), keyId, op, sendAfter };
    this.writes = [...this.writes, write];
    this.changed();
    void this.run();
    return write;
  }

  /** Send this key's held writes (of one type, if given) now. */
  release(keyId: number, type?: WriteOp['type']): void {
    if (this.unhold(keyId, (write) => type === undefined || write.op.type === type)) {
      this.changed();
      void this.run();
    }
  }

  /** Take back a write that has not left yet; false if it has (or is on its way). */
  cancel(writeId: string): boolean {
    if (writeId === this.inFlight || !this.writes.some((write) => write.id === writeId)) {
      return false;
    }
    this.remove([writeId]);
    if (this.writes.length === 0) this.setStatus('saved', '');
    return true;
  }

  private unhold(keyId: number, which: (write: QueuedWrite) => boolean): boolean {
    let changed = false;
    this.writes = this.writes.map((write) => {
      if (write.keyId !== keyId || write.sendAfter === undefined || !which(write)) return write;
      changed = true;
      return { id: write.id, keyId: write.keyId, op: write.op };
    });
    return changed;
  }

  retryNow = (): void => {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    void this.run();
  };

  // -- the loop --------------------------------------------------------------------

  private async run(): Promise<void> {
    if (this.running || this.stopped || this.timer) return;
    this.running = true;
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    try {
      for (;;) {
        if (this.stopped) return;
        const now = this.now();
        const write = this.writes.find((each) => !(each.sendAfter! > now));
        if (!write) break;
        this.inFlight = write.id;
        this.setStatus('saving', '');
        try {
          let state = this.states.get(write.keyId);
          if (!state) {
            state = await this.transport.fetchState(write.keyId);
            this.observe(state);
            state = this.states.get(write.keyId)!;
          }
          const result = await this.transport.send(write, state);
          this.failures = 0;
          this.rebases.delete(write.id);
          this.states.set(write.keyId, result);
          this.remove([write.id]);
          this.emit({ type: 'applied', keyId: write.keyId, state: result, write });
        } catch (error) {
          if (!this.handleFailure(write, error)) return;
        } finally {
          this.inFlight = null;
        }
      }
      this.setStatus(this.writes.length > 0 ? 'saving' : 'saved', '');
      this.holdUntilDue();
    } finally {
      this.running = false;
    }
  }

  /** Wake up when the first held write is due. */
  private holdUntilDue(): void {
    const due = Math.min(...this.writes.map((write) => write.sendAfter ?? Infinity));
    if (!Number.isFinite(due)) return;
    this.holdTimer = setTimeout(
      () => {
        this.holdTimer = null;
        void this.run();
      },
      Math.max(0, due - this.now()),
    );
  }

  /** True to go on with the next write, false to stop until the retry timer. */
  private handleFailure(write: QueuedWrite, error: unknown): boolean {
    const status = isApiError(error) ? error.status : 0;
    const detail = isApiError(error) ? error.detail : '';
    if (isRetryable(status) || status === 401 || status === 403) {
      this.failures += 1;
      const delay = Math.min(this.maxDelay, this.baseDelay * 2 ** (this.failures - 1));
      this.setStatus(isRetryable(status) ? 'offline' : 'error', detail);
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.run();
      }, delay);
      return false;
    }
    if (status === 409) {
      const body = isApiError(error) ? error.body : undefined;
      const current = (body as { current?: unknown } | undefined)?.current;
      if (!isAnnotationState(current)) {
        // No state to continue from: forget what we knew and read it afresh.
        this.states.delete(write.keyId);
        return this.countRebase(write);
      }
      const previous = this.states.get(write.keyId);
      this.states.set(write.keyId, current);
      let dropped: QueuedWrite[] = [];
      if (current.status === 'submitted' && needsDraft(write)) {
        dropped = this.pendingFor(write.keyId).filter(needsDraft);
      } else if (!this.countRebase(write)) {
        dropped = [write];
      }
      this.remove(dropped.map((each) => each.id));
      this.emit({ type: 'conflict', keyId: write.keyId, previous, current, detail, dropped });
      return true;
    }
    // 400 (a rule refused) or 404 (the key is no longer ours): this write cannot succeed.
    this.remove([write.id]);
    this.emit({ type: 'rejected', keyId: write.keyId, write, message: detail });
    return true;
  }

  private countRebase(write: QueuedWrite): boolean {
    const count = (this.rebases.get(write.id) ?? 0) + 1;
    this.rebases.set(write.id, count);
    return count <= MAX_REBASES;
  }

  private remove(ids: string[]): void {
    if (ids.length === 0) return;
    const gone = new Set(ids);
    this.writes = this.writes.filter((write) => !gone.has(write.id));
    for (const id of ids) this.rebases.delete(id);
    this.changed();
  }

  // -- plumbing --------------------------------------------------------------------

  private emit(event: QueueEvent): void {
    this.remember(event);
    for (const listener of this.listeners) listener(event);
  }

  /** The outcome of the latest writes, for `whenDone` asked after the fact. */
  private remember(event: QueueEvent): void {
    const ids =
      event.type === 'conflict' ? event.dropped.map((write) => write.id) : [event.write.id];
    for (const id of ids) {
      const outcome = outcomeOf(event, id);
      if (outcome) this.outcomes.set(id, outcome);
    }
    while (this.outcomes.size > MAX_OUTCOMES) {
      this.outcomes.delete(this.outcomes.keys().next().value!);
    }
  }

  private setStatus(status: SaveStatus, message: string): void {
    if (this.snapshot.status === status && this.snapshot.message === message) return;
    this.snapshot = { ...this.snapshot, status, message };
    for (const watcher of this.watchers) watcher();
  }

  private changed(): void {
    this.persist();
    this.publish();
  }

  private publish(): void {
    const status =
      this.writes.length > 0 && this.snapshot.status === 'saved' ? 'saving' : this.snapshot.status;
    this.snapshot = { ...this.snapshot, status, writes: this.writes };
    for (const watcher of this.watchers) watcher();
  }

  private persist(): void {
    this.store.save(this.writes);
  }
}
