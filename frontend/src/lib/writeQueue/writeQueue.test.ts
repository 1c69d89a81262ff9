import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { ApiError } from '../../api/client';
import type { AnnotationState } from '../../api/types';
import { makeState } from '../../test/factories';
import { WriteQueue } from './writeQueue';
import type { QueueEvent, QueuedWrite, Transport } from './writeQueue';

/** A server in memory: one annotation per key, versions, client ids; and a switch to fail. */
function fakeServer() {
  const states = new Map<number, AnnotationState>([[10, makeState({ key_id: 10, version: 1 })]]);
  let down = false;
  let nextId = 100;
  const sent: { op: string; version: number }[] = [];
  const transport: Transport = {
    async fetchState(keyId) {
      if (down) throw new ApiError(0, '');
      return states.get(keyId)!;
    },
    async send(write: QueuedWrite, known: AnnotationState) {
      sent.push({ op: write.op.type, version: known.version });
      if (down) throw new ApiError(503, 'The database is unavailable; please retry in a moment.');
      const state = states.get(write.keyId)!;
      const { op } = write;
      if (op.type === 'create' && state.patterns.some((p) => p.client_id === op.clientId))
        return state;
      if (known.version !== state.version) {
        throw new ApiError(409, 'stale', { detail: 'stale', current: state });
      }
      let next = { ...state, version: state.version + 1 };
      if (op.type === 'create') {
        if (op.prefixRanks.length < 3) throw new ApiError(400, 'A pattern must cover at least 3.');
        next.patterns = [
          ...state.patterns,
          {
            id: nextId++,
            description: op.description,
            kind: op.kind,
            prefix_ranks: op.prefixRanks,
            order: 0,
            client_id: op.clientId,
            source: 'written' as const,
            rule: null,
            scores: null,
          },
        ];
      } else if (op.type === 'note') {
        next = { ...next, note: op.note };
      } else if (op.type === 'submit') {
        next = { ...next, status: 'submitted' };
      }
      states.set(write.keyId, next);
      return next;
    },
  };
  return {
    transport,
    states,
    sent,
    setDown: (value: boolean) => {
      down = value;
    },
  };
}

function memoryStorage(): Storage {
  const data = new Map<string, string>();
  return {
    get length() {
      return data.size;
    },
    clear: () => data.clear(),
    getItem: (key) => data.get(key) ?? null,
    key: (index) => [...data.keys()][index] ?? null,
    removeItem: (key) => void data.delete(key),
    setItem: (key, value) => void data.set(key, value),
  };
}

const create = (description: string, clientId = description, ranks = [1, 2, 3]) =>
  ({ type: 'create', clientId, description, kind: 'shallow', prefixRanks: ranks }) as const;

describe('the write queue', () => {
  let server: ReturnType<typeof fakeServer>;
  let storage: Storage;
  let tab: Storage;
  const queues: WriteQueue[] = [];

  function makeQueue(options: { tab?: Storage; now?: () => number } = {}) {
    const queue = new WriteQueue({
      namespace: 'test.writes',
      transport: server.transport,
      storage,
      tabStorage: options.tab ?? tab,
      now: options.now,
    });
    queues.push(queue);
    return queue;
  }

  beforeEach(() => {
    vi.useFakeTimers();
    server = fakeServer();
    storage = memoryStorage();
    tab = memoryStorage();
  });

  afterEach(() => {
    for (const queue of queues.splice(0)) queue.stop();
    vi.useRealTimers();
  });

  it('sends writes in order, chaining the versions the server answers', async () => {
    const queue = makeQueue();
    queue.start();
    queue.enqueue(10, create('a'));
    queue.enqueue(10, create('b'));
    queue.enqueue(10, { type: 'submit' });
    await queue.whenSettled(10);
    expect(server.sent.map((s) => s.version)).toEqual([1, 2, 3]);
    expect(server.states.get(10)!.status).toBe('submitted');
    expect(queue.getSnapshot().status).toBe('saved');
  });

  it('keeps a write while the server is down, retries with backoff, then saves it once', async () => {
    const queue = makeQueue();
    queue.observe(makeState({ version: 1 }));
    queue.start();
    server.setDown(true);
    queue.enqueue(10, create('offline'));
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.getSnapshot().status).toBe('offline');
    await vi.advanceTimersByTimeAsync(1_000 + 2_000 + 4_000);
    const attempts = server.sent.length;
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(queue.getSnapshot().writes).toHaveLength(1);

    server.setDown(false);
    await vi.advanceTimersByTimeAsync(8_000);
    expect(queue.getSnapshot()).toMatchObject({ status: 'saved', writes: [] });
    expect(server.states.get(10)!.patterns.map((p) => p.description)).toEqual(['offline']);
  });

  it('retries at once when the browser comes back online', async () => {
    const queue = makeQueue();
    queue.start();
    server.setDown(true);
    queue.enqueue(10, create('x'));
    await vi.advanceTimersByTimeAsync(0);
    server.setDown(false);
    window.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.getSnapshot().status).toBe('saved');
  });

  it('survives a reload: the stored writes are replayed by the next page, and only once', async () => {
    const first = makeQueue();
    first.start();
    server.setDown(true);
    first.enqueue(10, create('kept'));
    first.enqueue(10, { type: 'note', note: 'my note' });
    await vi.advanceTimersByTimeAsync(0);
    first.stop(); // the page goes away

    server.setDown(false);
    const second = makeQueue(); // same tab storage: a reload of the same tab
    expect(second.getSnapshot().writes).toHaveLength(2);
    second.start();
    await second.whenSettled(10);
    expect(server.states.get(10)!.patterns.map((p) => p.description)).toEqual(['kept']);
    expect(server.states.get(10)!.note).toBe('my note');
    expect(makeQueue().getSnapshot().writes).toHaveLength(0);
  });

  it('adopts the writes of a tab that was closed, but not of a tab still open', () => {
    let now = 1_000_000;
    const closed = makeQueue({ tab: memoryStorage(), now: () => now });
    closed.start();
    server.setDown(true);
    closed.enqueue(10, create('from a closed tab'));
    closed.stop();

    const sameTime = makeQueue({ tab: memoryStorage(), now: () => now });
    expect(sameTime.getSnapshot().writes).toHaveLength(0);

    now += 60_000;
    const later = makeQueue({ tab: memoryStorage(), now: () => now });
    expect(later.getSnapshot().writes.map((w) => w.op.type)).toEqual(['create']);
  });

  it('makes no duplicate when a create is retried after the server already made it', async () => {
    const queue = makeQueue();
    // The first attempt went through but its answer was lost: the server has the pattern.
    server.states.set(
      10,
      makeState({
        version: 2,
        patterns: [
          {
            id: 1,
            description: 'once',
            kind: 'shallow',
            prefix_ranks: [1, 2, 3],
            order: 0,
            client_id: 'same',
            source: 'written' as const,
            rule: null,
            scores: null,
          },
        ],
      }),
    );
    queue.start();
    queue.enqueue(10, create('once', 'same'));
    await queue.whenSettled(10);
    expect(server.states.get(10)!.patterns).toHaveLength(1);
  });

  it('on 409 adopts the current state, reports what happened, and carries on from it', async () => {
    const queue = makeQueue();
    const events: QueueEvent[] = [];
    queue.onEvent((event) => events.push(event));
    queue.observe(makeState({ version: 1 }));
    // Another tab added a pattern meanwhile.
    server.states.set(
      10,
      makeState({
        version: 2,
        patterns: [
          {
            id: 7,
            description: 'theirs',
            kind: 'semantic',
            prefix_ranks: [4, 5, 6],
            order: 0,
            client_id: null,
            source: 'written' as const,
            rule: null,
            scores: null,
          },
        ],
      }),
    );
    queue.start();
    queue.enqueue(10, create('mine'));
    await queue.whenSettled(10);
    const conflict = events.find((event) => event.type === 'conflict');
    expect(conflict).toMatchObject({ type: 'conflict', dropped: [], current: { version: 2 } });
    expect(server.states.get(10)!.patterns.map((p) => p.description)).toEqual(['theirs', 'mine']);
  });

  it('on 409 for a key submitted elsewhere drops the draft writes and hands them back', async () => {
    const queue = makeQueue();
    const events: QueueEvent[] = [];
    queue.onEvent((event) => events.push(event));
    queue.observe(makeState({ version: 1 }));
    server.states.set(10, makeState({ version: 3, status: 'submitted' }));
    queue.start();
    queue.enqueue(10, create('too late'));
    await queue.whenSettled(10);
    const conflict = events.find((event) => event.type === 'conflict');
    expect(conflict?.type === 'conflict' && conflict.dropped.map((w) => w.op.type)).toEqual([
      'create',
    ]);
    expect(server.states.get(10)!.patterns).toHaveLength(0);
  });

  it('drops a write the server refuses (400) and reports its message', async () => {
    const queue = makeQueue();
    const events: QueueEvent[] = [];
    queue.onEvent((event) => events.push(event));
    queue.start();
    queue.enqueue(10, create('too few', 'c', [1, 2]));
    queue.enqueue(10, create('fine'));
    await queue.whenSettled(10);
    expect(events[0]).toMatchObject({
      type: 'rejected',
      message: 'A pattern must cover at least 3.',
    });
    expect(server.states.get(10)!.patterns.map((p) => p.description)).toEqual(['fine']);
  });

  it('tells whether one write was applied or dropped, after it is retried as long as it takes', async () => {
    const queue = makeQueue();
    queue.observe(makeState({ version: 1 }));
    queue.start();
    server.setDown(true);
    const added = queue.enqueue(10, create('kept'));
    const outcome = queue.whenDone(added.id);
    await vi.advanceTimersByTimeAsync(3_000);
    server.setDown(false);
    await vi.advanceTimersByTimeAsync(8_000);
    await expect(outcome).resolves.toBe('applied');

    const refused = queue.enqueue(10, create('two', 'two', [1, 2]));
    await expect(queue.whenDone(refused.id)).resolves.toBe('dropped');
    // A write that is no longer queued (done before it was asked about) is done.
    await expect(queue.whenDone(added.id)).resolves.toBe('applied');
  });

  it('counts a write dropped by a conflict (the key submitted elsewhere) as dropped', async () => {
    const queue = makeQueue();
    queue.observe(makeState({ version: 1 }));
    server.states.set(10, makeState({ version: 2, status: 'submitted' }));
    queue.start();
    const write = queue.enqueue(10, create('late'));
    await expect(queue.whenDone(write.id)).resolves.toBe('dropped');
  });

  it('keeps only the latest note text waiting to be sent', async () => {
    const queue = makeQueue();
    queue.start();
    server.setDown(true);
    queue.enqueue(10, { type: 'note', note: 'a' });
    await vi.advanceTimersByTimeAsync(0); // failed once: waiting for the retry, not in flight
    queue.enqueue(10, { type: 'note', note: 'ab' });
    queue.enqueue(10, { type: 'note', note: 'abc' });
    expect(queue.getSnapshot().writes.map((w) => w.op)).toEqual([{ type: 'note', note: 'abc' }]);
    server.setDown(false);
    queue.retryNow();
    await queue.whenSettled(10);
    expect(server.states.get(10)!.note).toBe('abc');
  });

  it('stores a held note at once and sends it only when its moment comes', async () => {
    const queue = makeQueue();
    queue.start();
    queue.enqueue(10, { type: 'note', note: 'half a th' }, { holdMs: 800 });
    // A reload now would replay it: it is in storage before anything is sent.
    expect(
      makeQueue()
        .getSnapshot()
        .writes.map((w) => w.op),
    ).toEqual([{ type: 'note', note: 'half a th' }]);
    queue.enqueue(10, { type: 'note', note: 'half a thought' }, { holdMs: 800 });
    await vi.advanceTimersByTimeAsync(799);
    expect(server.sent).toEqual([]);
    expect(queue.getSnapshot().status).toBe('saving');
    await vi.advanceTimersByTimeAsync(1);
    await queue.whenSettled(10);
    expect(server.sent.map((s) => s.op)).toEqual(['note']);
    expect(server.states.get(10)!.note).toBe('half a thought');
    expect(queue.getSnapshot().status).toBe('saved');
  });

  it('lets other writes go ahead of a held one, and a submit release it first', async () => {
    const queue = makeQueue();
    queue.start();
    queue.enqueue(10, { type: 'note', note: 'later' }, { holdMs: 5_000 });
    queue.enqueue(10, create('now'));
    await vi.advanceTimersByTimeAsync(0);
    expect(server.sent.map((s) => s.op)).toEqual(['create']);
    queue.enqueue(10, { type: 'submit' });
    await queue.whenSettled(10);
    expect(server.sent.map((s) => s.op)).toEqual(['create', 'note', 'submit']);
    expect(server.states.get(10)).toMatchObject({ note: 'later', status: 'submitted' });
  });

  it('takes back a held write that has not left, and never one already sent', async () => {
    const queue = makeQueue();
    queue.start();
    const held = queue.enqueue(10, create('undone'), { holdMs: 5_000 });
    expect(queue.cancel(held.id)).toBe(true);
    expect(queue.getSnapshot()).toMatchObject({ status: 'saved', writes: [] });
    expect(makeQueue().getSnapshot().writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(server.sent).toEqual([]);

    const sent = queue.enqueue(10, create('kept'), { holdMs: 5_000 });
    await vi.advanceTimersByTimeAsync(5_000);
    await queue.whenSettled(10);
    expect(queue.cancel(sent.id)).toBe(false);
    expect(server.states.get(10)!.patterns.map((p) => p.description)).toEqual(['kept']);
  });
});
