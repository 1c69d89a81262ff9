import { createContext, useContext, useEffect, useState, useSyncExternalStore } from 'react';
import type { ReactNode } from 'react';

import { useAuth } from '../auth';
import { WriteQueue } from './writeQueue';
import type { QueueSnapshot } from './writeQueue';

const QueueContext = createContext<WriteQueue | null>(null);

export function queueNamespace(userId: number): string {
  return `ffkv.writes.${userId}`;
}

/**
 * One write queue per signed-in user, started as soon as we know who it is, so that
 * writes left from an earlier visit are replayed whatever page is open.
 */
export function QueueProvider({ children }: { children: ReactNode }) {
  const { user } = useAuth();
  const [queue, setQueue] = useState<WriteQueue | null>(null);
  const userId = user?.is_annotator ? user.id : null;

  useEffect(() => {
    if (userId === null) {
      setQueue(null);
      return;
    }
    const created = new WriteQueue({ namespace: queueNamespace(userId) });
    created.start();
    setQueue(created);
    // Writes still waiting are stored and would be sent by the next page, but the
    // annotator is asked first: the server does not have them yet.
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      if (created.getSnapshot().writes.length === 0) return;
      event.preventDefault();
      event.returnValue = true; // browsers before the preventDefault() convention
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => {
      window.removeEventListener('beforeunload', onBeforeUnload);
      created.stop();
    };
  }, [userId]);

  return <QueueContext.Provider value={queue}>{children}</QueueContext.Provider>;
}

export function useQueue(): WriteQueue | null {
  return useContext(QueueContext);
}

const IDLE: QueueSnapshot = { status: 'saved', writes: [], message: '' };
const noop = () => () => {};

export function useQueueSnapshot(queue: WriteQueue | null): QueueSnapshot {
  return useSyncExternalStore(
    queue ? queue.subscribe : noop,
    queue ? queue.getSnapshot : () => IDLE,
  );
}
