import { useCallback, useEffect, useRef, useState } from 'react';

import { applyPending } from './labels';
import type { WriteQueue } from './writeQueue';

/** How long a note save waits for more typing before it is sent. */
export const NOTE_DELAY_MS = 800;

/**
 * The annotation's note as typed. Every change goes into the write queue at once (so a
 * reload or a closed tab keeps it), held back a moment so that typing sends one save,
 * not one per key; blur, Escape and submit send it at once. Each save carries the
 * running total of active time on the key (`activeSeconds`, useActiveTime).
 */
export function useNoteAutosave(
  queue: WriteQueue,
  keyId: number,
  ready: boolean,
  activeSeconds?: () => number,
) {
  const [draft, setDraft] = useState<string | null>(null);
  const value = useRef<string | null>(null);

  // The note shown once the key is loaded: the server's, with any queued save applied.
  useEffect(() => {
    if (!ready || value.current !== null) return;
    const state = queue.stateOf(keyId);
    if (!state) return;
    const shown = applyPending(state, queue.pendingFor(keyId)).note;
    value.current = shown;
    setDraft(shown);
  }, [ready, queue, keyId]);

  const flush = useCallback(() => queue.release(keyId, 'note'), [queue, keyId]);

  useEffect(() => () => flush(), [flush]);

  function change(note: string) {
    setDraft(note);
    value.current = note;
    queue.enqueue(
      keyId,
      { type: 'note', note, activeSeconds: activeSeconds?.() },
      { holdMs: NOTE_DELAY_MS },
    );
  }

  /** The server's note, after a conflict: shown unless a save of the annotator's waits. */
  const adoptServerNote = useCallback(
    (note: string) => {
      if (queue.pendingFor(keyId).some((write) => write.op.type === 'note')) return;
      setDraft(note);
      value.current = note;
    },
    [queue, keyId],
  );

  return { draft, change, flush, adoptServerNote };
}
