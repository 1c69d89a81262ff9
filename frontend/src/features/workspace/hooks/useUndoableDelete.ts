import { useCallback, useEffect, useState } from 'react';

import type { DisplayPattern } from '../../../components/patternEditor/labels';
import { newId } from '../../../lib/writeQueue/queueStorage';
import type { QueuedWrite, WriteQueue } from '../../../lib/writeQueue/writeQueue';

/** How long a deleted pattern can be taken back: its delete waits in the queue meanwhile. */
export const UNDO_MS = 5_000;

/**
 * Deleting a pattern hides it at once and queues its delete, held back for a few
 * seconds; Undo takes the delete back (or, if it has gone meanwhile, makes the
 * pattern again).
 */
export function useUndoableDelete(queue: WriteQueue, keyId: number) {
  const [deleted, setDeleted] = useState<{ write: QueuedWrite; pattern: DisplayPattern } | null>(
    null,
  );

  const remove = useCallback(
    (pattern: DisplayPattern) => {
      const write = queue.enqueue(
        keyId,
        { type: 'delete', ref: { id: pattern.id, clientId: pattern.client_id } },
        { holdMs: UNDO_MS },
      );
      setDeleted({ write, pattern });
    },
    [queue, keyId],
  );

  const undo = useCallback(() => {
    if (!deleted) return;
    const { write, pattern } = deleted;
    setDeleted(null);
    if (queue.cancel(write.id)) return;
    // Already sent (a submit releases held writes): make the pattern again.
    queue.enqueue(keyId, {
      type: 'create',
      clientId: newId(),
      description: pattern.description,
      kind: pattern.kind,
      prefixRanks: pattern.prefix_ranks,
    });
  }, [deleted, queue, keyId]);

  useEffect(() => {
    if (!deleted) return;
    const timer = setTimeout(() => setDeleted(null), UNDO_MS);
    return () => clearTimeout(timer);
  }, [deleted]);

  return { deleted, remove, undo };
}
