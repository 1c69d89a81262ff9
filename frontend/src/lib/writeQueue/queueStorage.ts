// Where the write queue keeps its writes between page loads, so that no
// annotation is lost to a reload or a closed tab.
//
// Each tab has its own entry in localStorage (the tab's id lives in sessionStorage,
// which survives a reload of that tab), refreshed by a heartbeat. An entry whose tab
// stopped beating is adopted by the next tab that starts, so work left in a closed
// tab is still sent.
import type { QueuedWrite } from './writeQueue';

interface Stored {
  writes: QueuedWrite[];
  beat: number;
}

export interface QueueStorageOptions {
  /** Storage keys start with it; one per user, so nobody replays another's writes. */
  namespace: string;
  storage?: Storage | null;
  tabStorage?: Storage | null;
  /** A tab that has not beaten for this long is gone; its queue is adopted. */
  orphanAfterMs: number;
  now: () => number;
}

export class QueueStorage {
  private readonly storage: Storage | null;
  private readonly namespace: string;
  private readonly key: string;
  private readonly orphanAfter: number;
  private readonly now: () => number;

  constructor(options: QueueStorageOptions) {
    this.namespace = options.namespace;
    this.storage = options.storage === undefined ? safeLocalStorage() : options.storage;
    this.orphanAfter = options.orphanAfterMs;
    this.now = options.now;
    const tabStorage = options.tabStorage === undefined ? safeSessionStorage() : options.tabStorage;
    this.key = `${this.namespace}.${tabId(tabStorage)}`;
  }

  /** Store this tab's writes, with a fresh heartbeat. */
  save(writes: readonly QueuedWrite[]): void {
    if (!this.storage) return;
    try {
      const stored: Stored = { writes: [...writes], beat: this.now() };
      this.storage.setItem(this.key, JSON.stringify(stored));
    } catch {
      // Storage full or disabled: the writes still live in memory and are sent.
    }
  }

  /** This tab's stored writes, plus those of tabs that stopped beating (whose entries go). */
  load(): QueuedWrite[] {
    if (!this.storage) return [];
    const own = readStored(this.storage, this.key)?.writes ?? [];
    const adopted: QueuedWrite[] = [];
    const prefix = `${this.namespace}.`;
    for (let i = this.storage.length - 1; i >= 0; i--) {
      const key = this.storage.key(i);
      if (!key || key === this.key || !key.startsWith(prefix)) continue;
      const stored = readStored(this.storage, key);
      if (stored && this.now() - stored.beat < this.orphanAfter) continue; // alive
      adopted.push(...(stored?.writes ?? []));
      this.storage.removeItem(key);
    }
    const seen = new Set(own.map((write) => write.id));
    return [...own, ...adopted.filter((write) => !seen.has(write.id))];
  }
}

function readStored(storage: Storage, key: string): Stored | null {
  try {
    const value: unknown = JSON.parse(storage.getItem(key) ?? 'null');
    if (value && typeof value === 'object' && Array.isArray((value as Stored).writes)) {
      const stored = value as Stored;
      return {
        beat: typeof stored.beat === 'number' ? stored.beat : 0,
        writes: stored.writes.filter(
          (write) =>
            write &&
            typeof write.id === 'string' &&
            typeof write.keyId === 'number' &&
            typeof write.op?.type === 'string',
        ),
      };
    }
  } catch {
    // unreadable: nothing to replay
  }
  return null;
}

export function newId(): string {
  if (typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function') {
    return crypto.randomUUID();
  }
  // RFC 4122 v4 from getRandomValues (randomUUID needs a secure context).
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const TAB_KEY = 'ffkv.tab';

function tabId(storage: Storage | null): string {
  try {
    const existing = storage?.getItem(TAB_KEY);
    if (existing) return existing;
    const id = newId();
    storage?.setItem(TAB_KEY, id);
    return id;
  } catch {
    return newId();
  }
}

export function safeLocalStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

function safeSessionStorage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}
