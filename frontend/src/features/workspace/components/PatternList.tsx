import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';

import type { DisplayPattern } from '../../../components/patternEditor/labels';
import { markBidiControls, VisibleText } from '../../../components/patternEditor/tokenDisplay';
import { PatternEvidence } from '../../../components/evidence/PatternEvidence';

/** A pattern just deleted, whose delete can still be taken back. */
export interface DeletedPattern {
  /** Changes with every delete, so that each one moves focus to its Undo. */
  id: string;
  name: string;
  description: string;
  onUndo: () => void;
}

interface PatternListProps {
  patterns: readonly DisplayPattern[];
  readOnly: boolean;
  onEdit: (pattern: DisplayPattern) => void;
  onDelete: (pattern: DisplayPattern) => void;
  onShow: (pattern: DisplayPattern) => void;
  deleted?: DeletedPattern | null;
}

export function PatternList({
  patterns,
  readOnly,
  onEdit,
  onDelete,
  onShow,
  deleted = null,
}: PatternListProps) {
  const { t } = useTranslation();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const undoRef = useRef<HTMLButtonElement>(null);
  const deletedId = deleted?.id ?? null;
  const offered = useRef(false);

  // After a delete, focus goes to its Undo (a second Enter takes it back instead of
  // deleting the next pattern); when the offer ends, to the list's heading, if focus
  // was lost with the button.
  useEffect(() => {
    if (deletedId !== null) {
      offered.current = true;
      undoRef.current?.focus();
      return;
    }
    if (!offered.current) return;
    offered.current = false;
    if (!document.activeElement || document.activeElement === document.body) {
      headingRef.current?.focus();
    }
  }, [deletedId]);

  return (
    <section className="patterns card" aria-labelledby="patterns-heading">
      <h2 id="patterns-heading" ref={headingRef} tabIndex={-1}>
        {t('patterns.heading', { count: patterns.length })}
      </h2>
      <div role="status" className="undo-status">
        {deleted && (
          <p className="notice undo-delete" data-testid="undo-delete">
            {t('patterns.deleted', {
              name: deleted.name,
              description: markBidiControls(deleted.description),
            })}{' '}
            <button ref={undoRef} type="button" className="link-button" onClick={deleted.onUndo}>
              {t('patterns.undo')}
            </button>
          </p>
        )}
      </div>
      {patterns.length === 0 ? (
        <p className="muted">{t('patterns.empty')}</p>
      ) : (
        <ol className="pattern-list" data-testid="pattern-list">
          {patterns.map((pattern) => {
            const name = t('workspace.patternNumber', { number: pattern.number });
            return (
              <li key={pattern.id} data-testid="pattern-item" className="pattern-item">
                <button
                  type="button"
                  className={`chip pc-${pattern.colour}${pattern.pending ? ' pending' : ''}`}
                  onClick={() => onShow(pattern)}
                  title={t('patterns.show')}
                >
                  {name}
                </button>
                <VisibleText className="pattern-description" text={pattern.description} />
                <span className="muted pattern-meta">
                  {t(`labels.${pattern.kind}`)} ·{' '}
                  {t('patterns.covers', { count: pattern.prefix_ranks.length })}
                  {pattern.pending && ` · ${t('patterns.pending')}`}
                </span>
                <PatternEvidence pattern={pattern} />
                {!readOnly && (
                  <span className="pattern-actions">
                    <button
                      type="button"
                      aria-label={t('patterns.editNamed', { name })}
                      onClick={() => onEdit(pattern)}
                    >
                      {t('patterns.edit')}
                    </button>
                    <button
                      type="button"
                      aria-label={t('patterns.deleteNamed', { name })}
                      onClick={() => onDelete(pattern)}
                    >
                      {t('patterns.delete')}
                    </button>
                  </span>
                )}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
