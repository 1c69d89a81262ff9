import { useMemo } from 'react';

import { useQueueSnapshot } from './QueueContext';
import type { SaveStatus, WriteQueue } from './writeQueue';

/**
 * The queue as one key's screen sees it: the whole queue's state (for the save state in
 * the header), the writes of this key not yet on the server, and the note's own save
 * state: saved where no note write waits, else the queue's.
 */
export function useKeyWrites(queue: WriteQueue, keyId: number) {
  const snapshot = useQueueSnapshot(queue);
  const pending = useMemo(
    () => snapshot.writes.filter((write) => write.keyId === keyId),
    [snapshot.writes, keyId],
  );
  const noteSaving = pending.some((write) => write.op.type === 'note');
  const noteStatus: SaveStatus = !noteSaving
    ? 'saved'
    : snapshot.status === 'saved'
      ? 'saving'
      : snapshot.status;
  return { snapshot, pending, noteStatus };
}
