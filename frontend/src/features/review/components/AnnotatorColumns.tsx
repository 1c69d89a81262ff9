import { useTranslation } from 'react-i18next';

import type { ReviewAnnotation, ReviewPattern } from '../../../api/review';
import { columnLetter } from './ReviewGrid';
import { PatternEvidence } from '../../../components/evidence/PatternEvidence';

/**
 * One column per annotator: their status, note and patterns, each pattern with Adopt
 * (once) and "Edit, then adopt". A card takes focus so that `a` adopts it.
 */
export function AnnotatorColumns({
  annotations,
  adoptedIds,
  readOnly,
  characterKeys,
  onAdopt,
  onEditThenAdopt,
}: {
  annotations: readonly ReviewAnnotation[];
  /** The annotator patterns already in the gold. */
  adoptedIds: ReadonlySet<number | null | undefined>;
  readOnly: boolean;
  characterKeys: boolean;
  onAdopt: (pattern: ReviewPattern) => void;
  onEditThenAdopt: (annotation: ReviewAnnotation, pattern: ReviewPattern) => void;
}) {
  const { t } = useTranslation();
  return (
    <div className="review-columns">
      {annotations.map((annotation, column) => (
        <section
          key={annotation.id}
          className="card annotator-column"
          data-testid="annotator-column"
          data-annotator={annotation.annotator}
        >
          <h2>
            <span className="column-letter">{columnLetter(column)}</span> {annotation.annotator}
          </h2>
          <p className="muted">{t(`status.${annotation.status as 'draft' | 'submitted'}`)}</p>
          {annotation.note && <p className="annotator-note">{annotation.note}</p>}
          {annotation.patterns.length === 0 ? (
            <p className="muted">{t('review.noPatterns')}</p>
          ) : (
            <ul className="pattern-cards">
              {annotation.patterns.map((pattern) => (
                <li
                  key={pattern.id}
                  // The card takes focus so that `a` adopts it.
                  // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex
                  tabIndex={0}
                  className="pattern-card"
                  data-adopt-id={pattern.id}
                  data-testid="annotator-pattern"
                >
                  <p>{pattern.description}</p>
                  <p className="muted">
                    {t(`labels.${pattern.kind}`)} ·{' '}
                    {t('review.ranks', { ranks: pattern.prefix_ranks.join(', ') })}
                  </p>
                  <PatternEvidence pattern={pattern} />
                  {adoptedIds.has(pattern.id) && (
                    <p className="muted" id={`adopted-${pattern.id}`}>
                      {t('review.alreadyAdopted')}
                    </p>
                  )}
                  <div className="composer-actions">
                    <button
                      type="button"
                      // Adopted once is enough; "Edit, then adopt" can still make a variant.
                      disabled={readOnly || adoptedIds.has(pattern.id)}
                      aria-describedby={
                        adoptedIds.has(pattern.id) ? `adopted-${pattern.id}` : undefined
                      }
                      aria-keyshortcuts={characterKeys ? 'a' : undefined}
                      onClick={() => onAdopt(pattern)}
                      aria-label={t('review.adoptNamed', {
                        annotator: annotation.annotator,
                        description: pattern.description,
                      })}
                    >
                      {t('review.adopt')}
                    </button>
                    <button
                      type="button"
                      disabled={readOnly}
                      onClick={() => onEditThenAdopt(annotation, pattern)}
                      aria-label={t('review.editThenAdoptNamed', {
                        annotator: annotation.annotator,
                        description: pattern.description,
                      })}
                    >
                      {t('review.editThenAdopt')}
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )}
        </section>
      ))}
    </div>
  );
}
