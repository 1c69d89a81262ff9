import { useCallback, useEffect, useRef, useState } from 'react';

import { applyPending } from '../../components/patternEditor/labels';
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

  // The active time last sent (or read from the server), so that leaving sends it only
  // when it grew.
  const sentSeconds = useRef<number | null>(null);
  const timeOf = useRef(activeSeconds);
  timeOf.current = activeSeconds;
  useEffect(() => {
    if (ready && sentSeconds.current === null) {
      sentSeconds.current = queue.stateOf(keyId)?.active_seconds ?? 0;
    }
  }, [ready, queue, keyId]);

  useEffect(
    () => () => {
      flush();
      // Leaving a draft: its time goes in a save of the note as it is (the server keeps
      // the note and records the time). Not for a key only opened (that would start
      // it), nor a submitted one, nor when a note save or a submit is on its way.
      const seconds = timeOf.current?.();
      const state = queue.stateOf(keyId);
      if (seconds === undefined || !state || state.status !== 'draft') return;
      if (value.current === null || seconds < (sentSeconds.current ?? 0) + 1) return;
      const writes = queue.pendingFor(keyId);
      if (writes.some((write) => write.op.type === 'note' || write.op.type === 'submit')) return;
      queue.enqueue(keyId, { type: 'note', note: value.current, activeSeconds: seconds });
    },
    [flush, queue, keyId],
  );

  function change(note: string) {
    setDraft(note);
    value.current = note;
    const seconds = activeSeconds?.();
    if (seconds !== undefined) sentSeconds.current = seconds;
    queue.enqueue(keyId, { type: 'note', note, activeSeconds: seconds }, { holdMs: NOTE_DELAY_MS });
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
