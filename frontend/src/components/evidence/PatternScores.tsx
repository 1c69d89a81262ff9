import { useTranslation } from 'react-i18next';

import { exactNumber } from '../patternEditor/numbers';

/** A pattern's scores on held-out examples (docs/evidence.md, "Scores"); null: none. */
export interface Scores {
  detection?: number | null;
  embedding?: number | null;
  shuffled_detection?: number | null;
  shuffled_embedding?: number | null;
}

const FIELDS = [
  ['detection', 'evidence.detection'],
  ['embedding', 'evidence.embedding'],
  ['shuffled_detection', 'evidence.shuffledDetection'],
  ['shuffled_embedding', 'evidence.shuffledEmbedding'],
] as const;

/**
 * A pattern's four scores, two decimals (a balanced accuracy or an AUROC: 0.5 is
 * chance), the exact value on hover; a dash where a score is null (no rule, not computed
 * yet). Nothing at all where the pattern has no scores.
 */
export function PatternScores({ scores }: { scores: Scores | null | undefined }) {
  const { t, i18n } = useTranslation();
  if (!scores) return null;
  const format = new Intl.NumberFormat(i18n.language, {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  });
  return (
    <dl className="scores" data-testid="pattern-scores" title={t('evidence.scoresHint')}>
      {FIELDS.map(([field, label]) => {
        const value = scores[field];
        const known = typeof value === 'number';
        return (
          <div key={field}>
            <dt>{t(label)}</dt>
            <dd
              data-testid={`score-${field}`}
              data-value={known ? value : ''}
              title={known ? exactNumber(value) : undefined}
            >
              {known ? format.format(value) : t('evidence.noScore')}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}
