import { useCallback, useEffect, useRef, useState } from 'react';

import { applyPending } from './labels';
import type { WriteQueue } from './writeQueue';

const NOTE_DELAY_MS = 800;

/**
 * The annotation's note as typed, saved through the write queue a moment after the
 * annotator stops typing (and at once on blur, Escape or submit).
 */
export function useNoteAutosave(queue: WriteQueue, keyId: number, ready: boolean) {
  const [draft, setDraft] = useState<string | null>(null);
  const [dirty, setDirty] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
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

  const flush = useCallback(() => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    setDirty(false);
    const note = value.current;
    if (note === null) return;
    const state = queue.stateOf(keyId);
    const shown = state ? applyPending(state, queue.pendingFor(keyId)) : null;
    if (shown && shown.note !== note) queue.enqueue(keyId, { type: 'note', note });
  }, [queue, keyId]);

  useEffect(() => () => flush(), [flush]);

  function change(note: string) {
    setDraft(note);
    value.current = note;
    setDirty(true);
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(flush, NOTE_DELAY_MS);
  }

  /** The server's note, after a conflict: shown unless the annotator is typing one. */
  const adoptServerNote = useCallback(
    (note: string) => {
      if (timer.current !== null || queue.pendingFor(keyId).some((w) => w.op.type === 'note')) {
        return;
      }
      setDraft(note);
      value.current = note;
    },
    [queue, keyId],
  );

  return { draft, dirty, change, flush, adoptServerNote };
}
