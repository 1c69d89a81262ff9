import type { Ref } from 'react';
import { useTranslation } from 'react-i18next';

import { NoteField } from '../../../components/patternEditor/NoteField';
import { PatternComposer } from '../../../components/patternEditor/PatternComposer';
import type { PatternEditor } from '../../../components/patternEditor/usePatternEditor';
import { WorkspaceNotice } from '../../../lib/writeQueue/WorkspaceNotice';
import type { PlacedNotice } from '../../../lib/writeQueue/WorkspaceNotice';
import type { SaveStatus } from '../../../lib/writeQueue/writeQueue';
import type { GoldDisplayPattern } from '../hooks/reviewQueue';
import { GoldPatternList } from './GoldPatternList';

/**
 * The curator's gold for the key: whether it is a check key, the composer (also for an
 * annotator's pattern being adopted with changes), the gold's patterns, its note, and
 * Save gold (or Reopen). Each write's notice shows beside its control.
 */
export function GoldPanel({
  curator,
  isCheck,
  submitted,
  onCheck,
  editor,
  patterns,
  onDelete,
  note,
  noteStatus,
  message,
  noteRef,
  notice,
  onDismiss,
  onSave,
  onReopen,
}: {
  curator: string | null | undefined;
  isCheck: boolean;
  submitted: boolean;
  onCheck: (value: boolean) => void;
  editor: PatternEditor<GoldDisplayPattern>;
  patterns: readonly GoldDisplayPattern[];
  onDelete: (pattern: GoldDisplayPattern) => void;
  note: { draft: string | null; change: (value: string) => void; flush: () => void };
  noteStatus: SaveStatus;
  message: string;
  noteRef: Ref<HTMLTextAreaElement>;
  notice: PlacedNotice | null;
  onDismiss: () => void;
  onSave: () => void;
  onReopen: () => void;
}) {
  const { t } = useTranslation();
  const source = editor.composer.source;
  return (
    <section className="card gold-column review-side" data-testid="gold-column">
      <h2>{t('review.gold')}</h2>
      {curator && <p className="muted">{t('review.curator', { name: curator })}</p>}
      <label>
        <input
          type="checkbox"
          checked={isCheck}
          disabled={submitted}
          onChange={(event) => onCheck(event.target.checked)}
        />{' '}
        {t('review.checkToggle')}
      </label>
      <PatternComposer {...editor.composerProps} />
      {source && (
        <p className="muted" data-testid="adopting">
          {t('review.adopting', { annotator: source.annotator })}{' '}
          <button type="button" className="link-button" onClick={editor.cancelEdit}>
            {t('composer.cancel')}
          </button>
        </p>
      )}
      <WorkspaceNotice notice={notice} at="composer" onDismiss={onDismiss} />
      <GoldPatternList
        patterns={patterns}
        readOnly={submitted}
        onEdit={editor.edit}
        onDelete={onDelete}
      />
      <WorkspaceNotice notice={notice} at="patterns" onDismiss={onDismiss} />
      <NoteField
        id="gold-note"
        label={t('review.note')}
        ref={noteRef}
        draft={note.draft}
        status={noteStatus}
        message={message}
        readOnly={submitted}
        onChange={note.change}
        onFlush={note.flush}
      />
      <WorkspaceNotice notice={notice} at="note" onDismiss={onDismiss} />
      <div className="composer-actions submit-card">
        {submitted ? (
          <button type="button" onClick={onReopen}>
            {t('review.reopen')}
          </button>
        ) : (
          <button
            type="button"
            className="primary"
            onClick={onSave}
            aria-keyshortcuts="Control+Enter"
          >
            {t('review.saveGold')}
          </button>
        )}
      </div>
      <WorkspaceNotice notice={notice} at="submit" onDismiss={onDismiss} />
    </section>
  );
}
