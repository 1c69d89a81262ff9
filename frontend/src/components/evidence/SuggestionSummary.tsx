import { useTranslation } from 'react-i18next';

import type { Suggestion } from '../../api/types';
import { VisibleText } from '../patternEditor/tokenDisplay';
import { PatternEvidence } from './PatternEvidence';
import type { Scores } from './PatternScores';

/**
 * What the workspace and the adjudication screen both show of a suggestion: its number,
 * method, kind and prefixes, its description (a cluster has none), its rule and scores.
 */
export function SuggestionSummary({
  number,
  suggestion,
}: {
  number: number;
  suggestion: {
    method: Suggestion['method'];
    kind: Suggestion['kind'];
    prefix_ranks: number[];
    description: string;
    rule?: { type: string; value: string } | null;
    scores?: Scores | null;
  };
}) {
  const { t } = useTranslation();
  return (
    <>
      <p>
        <strong>{t('evidence.suggestionNumber', { number })}</strong>{' '}
        <span className="badge">{t(`evidence.method.${suggestion.method}`)}</span>{' '}
        <span className="muted">
          {t(`labels.${suggestion.kind}`)} ·{' '}
          {t('review.ranks', { ranks: suggestion.prefix_ranks.join(', ') })}
        </span>
      </p>
      {suggestion.description ? (
        <p>
          <VisibleText text={suggestion.description} />
        </p>
      ) : (
        <p className="muted">{t('evidence.cluster')}</p>
      )}
      <PatternEvidence pattern={suggestion} />
    </>
  );
}
