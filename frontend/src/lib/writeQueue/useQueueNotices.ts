import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';

import type { AnnotationState } from '../../api/types';
import { markBidiControls } from '../../components/patternEditor/tokenDisplay';
import { placeOf } from './WorkspaceNotice';
import type { NoticePlace } from './WorkspaceNotice';
import type { QueuedWrite, WriteQueue } from './writeQueue';

export interface Notice {
  kind: 'conflict' | 'rejected';
  text: string;
  changes: string[];
  /** Where on the page it shows: next to the control whose write it is about. */
  place?: NoticePlace;
}

interface Handlers {
  /** A state the server answered for this key. */
  adopt: (state: AnnotationState) => void;
  /** The server's state after a conflict, which replaces what the page knew. */
  replace: (state: AnnotationState) => void;
  /** Writes the queue gave up on: their text goes back where it can. */
  restore: (writes: readonly QueuedWrite[]) => void;
  /** The server's note after a conflict. */
  serverNote: (note: string) => void;
}

/**
 * What the write queue says about this key: applied writes update the page; a
 * conflict or a refusal becomes a notice that says what happened.
 */
export function useQueueNotices(queue: WriteQueue, keyId: number, handlers: Handlers) {
  const { t } = useTranslation();
  const [notice, setNotice] = useState<Notice | null>(null);
  const { adopt, replace, restore, serverNote } = handlers;

  useEffect(
    () =>
      queue.onEvent((event) => {
        if (event.keyId !== keyId) return;
        if (event.type === 'applied') {
          adopt(event.state);
          return;
        }
        if (event.type === 'conflict') {
          replace(event.current);
          const changes = describeChanges(event.previous, event.current, t);
          if (event.dropped.length > 0) {
            changes.push(t('conflict.dropped', { count: event.dropped.length }));
            restore(event.dropped);
          }
          serverNote(event.current.note);
          setNotice({
            kind: 'conflict',
            text:
              event.current.status === 'submitted'
                ? t('conflict.submittedElsewhere')
                : t('conflict.changedElsewhere'),
            changes,
            place: placeOf(event.dropped),
          });
          return;
        }
        setNotice({
          kind: 'rejected',
          text: t('conflict.rejected', { message: event.message || t('errors.network') }),
          changes: [],
          place: placeOf([event.write]),
        });
        restore([event.write]);
      }),
    [queue, keyId, adopt, replace, restore, serverNote, t],
  );

  return { notice, setNotice };
}

/** What another tab (or person) changed, in words: pattern descriptions added or removed, the note, the status. */
export function describeChanges(
  previous: AnnotationState | undefined,
  current: AnnotationState,
  t: TFunction,
): string[] {
  if (!previous) return [];
  const changes: string[] = [];
  const before = new Map(previous.patterns.map((pattern) => [pattern.id, pattern]));
  const after = new Map(current.patterns.map((pattern) => [pattern.id, pattern]));
  for (const [id, pattern] of after) {
    const old = before.get(id);
    if (!old)
      changes.push(t('conflict.added', { description: markBidiControls(pattern.description) }));
    else if (
      old.description !== pattern.description ||
      old.kind !== pattern.kind ||
      old.prefix_ranks.join() !== pattern.prefix_ranks.join()
    ) {
      changes.push(t('conflict.changed', { description: markBidiControls(pattern.description) }));
    }
  }
  for (const [id, pattern] of before) {
    if (!after.has(id)) {
      changes.push(t('conflict.removed', { description: markBidiControls(pattern.description) }));
    }
  }
  if (previous.note !== current.note) changes.push(t('conflict.note'));
  if (previous.status !== current.status) {
    changes.push(t('conflict.status', { status: t(`status.${current.status}`) }));
  }
  return changes;
}
