import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';

import type { QueuedWrite } from './writeQueue';

/** Where a notice shows: beside the control whose write it is about (not in a banner far from it). */
export type NoticePlace = 'top' | 'composer' | 'patterns' | 'note' | 'submit';

export interface PlacedNotice {
  kind: 'conflict' | 'rejected';
  text: string;
  changes: string[];
  /** Unset: at the top of the workspace. */
  place?: NoticePlace;
}

const PLACE_OF_WRITE: Record<QueuedWrite['op']['type'], NoticePlace> = {
  create: 'composer',
  update: 'composer',
  delete: 'patterns',
  note: 'note',
  submit: 'submit',
  reopen: 'submit',
  check: 'note',
};

/**
 * The place of a notice about ``writes``: that of the latest one, the control the
 * annotator used last (a dropped pattern's text goes back into the composer, so its
 * notice shows there too); the top of the page when no write of this tab is concerned.
 */
export function placeOf(writes: readonly QueuedWrite[]): NoticePlace {
  const last = writes[writes.length - 1];
  return last ? PLACE_OF_WRITE[last.op.type] : 'top';
}

interface WorkspaceNoticeProps {
  notice: PlacedNotice | null;
  /** This slot's place: the notice renders here only if it is its place. */
  at: NoticePlace;
  onDismiss: () => void;
}

/** One slot of the workspace's notice; brought on screen when it appears. */
export function WorkspaceNotice({ notice, at, onDismiss }: WorkspaceNoticeProps) {
  const { t } = useTranslation();
  const ref = useRef<HTMLDivElement>(null);
  const shown = notice !== null && (notice.place ?? 'top') === at;

  useEffect(() => {
    const element = ref.current;
    if (shown && element && typeof element.scrollIntoView === 'function') {
      element.scrollIntoView({ block: 'nearest' });
    }
  }, [shown, notice]);

  if (!shown) return null;
  return (
    <div
      ref={ref}
      role="alert"
      className={`${notice.kind === 'conflict' ? 'notice' : 'alert'} notice-${at}`}
      data-testid="notice"
      data-place={at}
    >
      <p>{notice.text}</p>
      {notice.changes.length > 0 && (
        <ul>
          {notice.changes.map((change) => (
            <li key={change}>{change}</li>
          ))}
        </ul>
      )}
      <button type="button" className="link-button" onClick={onDismiss}>
        {t('conflict.dismiss')}
      </button>
    </div>
  );
}
