import { useTranslation } from 'react-i18next';

import type { GoldDisplayPattern } from '../hooks/reviewQueue';
import { PatternEvidence } from '../../../components/evidence/PatternEvidence';

/** The gold's patterns, each with where it came from (adopted from whom, or written). */
export function GoldPatternList({
  patterns,
  readOnly,
  onEdit,
  onDelete,
}: {
  patterns: readonly GoldDisplayPattern[];
  readOnly: boolean;
  onEdit: (pattern: GoldDisplayPattern) => void;
  onDelete: (pattern: GoldDisplayPattern) => void;
}) {
  const { t } = useTranslation();
  if (patterns.length === 0) return <p className="muted">{t('review.noGoldPatterns')}</p>;
  return (
    <ul className="pattern-cards" data-testid="gold-patterns">
      {patterns.map((pattern) => (
        <li
          key={pattern.id}
          className={`pattern-card${pattern.pending ? ' pending' : ''}`}
          data-testid="gold-pattern"
        >
          <p>
            <span className={`chip pc-${pattern.colour}`}>
              {t('workspace.patternNumber', { number: pattern.number })}
            </span>{' '}
            {pattern.description}
          </p>
          <p className="muted">
            {t(`labels.${pattern.kind}`)} ·{' '}
            {t('review.ranks', { ranks: pattern.prefix_ranks.join(', ') })} ·{' '}
            {pattern.source === 'adopted' && pattern.source_annotator
              ? t('review.adoptedFrom', { annotator: pattern.source_annotator })
              : t('review.written')}
          </p>
          <PatternEvidence pattern={pattern} />
          {!readOnly && (
            <div className="composer-actions">
              <button
                type="button"
                onClick={() => onEdit(pattern)}
                aria-label={t('review.editNamed', { description: pattern.description })}
              >
                {t('review.edit')}
              </button>
              <button
                type="button"
                onClick={() => onDelete(pattern)}
                aria-label={t('review.deleteNamed', { description: pattern.description })}
              >
                {t('review.delete')}
              </button>
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}
