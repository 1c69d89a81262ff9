import { useTranslation } from 'react-i18next';

import type { ReviewKeyDetail } from '../../../api/review';
import { SuggestionSummary } from '../../../components/evidence/SuggestionSummary';

/**
 * The machine's suggestions for the key as the curator sees them: each with its rule, its
 * scores, and which annotators accepted or dismissed it.
 */
export function ReviewSuggestions({
  suggestions,
}: {
  suggestions: ReviewKeyDetail['suggestions'];
}) {
  const { t } = useTranslation();
  if (suggestions.length === 0) return null;
  return (
    <section className="card" data-testid="review-suggestions">
      <h2>{t('evidence.suggestions')}</h2>
      <ol className="suggestion-list">
        {suggestions.map((suggestion, index) => (
          <li
            key={suggestion.id}
            className="suggestion"
            data-testid="review-suggestion"
            data-method={suggestion.method}
          >
            <SuggestionSummary number={index + 1} suggestion={suggestion} />
            <p className="muted" data-testid="suggestion-decisions">
              {suggestion.decisions.length === 0
                ? t('evidence.noDecisions')
                : t('evidence.decisions', {
                    count: suggestion.decisions.length,
                    list: suggestion.decisions
                      .map((d) => t(`evidence.decision.${d.decision}`, { annotator: d.annotator }))
                      .join(t('review.listSeparator')),
                  })}
            </p>
          </li>
        ))}
      </ol>
    </section>
  );
}
