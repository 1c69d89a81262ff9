import { useTranslation } from 'react-i18next';

import { PatternScores } from './PatternScores';
import type { Scores } from './PatternScores';

/** A pattern's rule (where it has one) and its scores (where the response has them). */
export function PatternEvidence({
  pattern,
}: {
  pattern: {
    source?: string | null;
    rule?: { type: string; value: string } | null;
    scores?: Scores | null;
  };
}) {
  const { t } = useTranslation();
  const type = pattern.rule?.type as 'token' | 'ngram' | 'suffix' | undefined;
  return (
    <>
      {(pattern.source === 'suggestion' || (pattern.rule && type)) && (
        <p className="muted" data-testid="pattern-rule">
          {pattern.source === 'suggestion' && (
            <span className="badge" data-testid="suggestion-badge">
              {t('evidence.badge')}
            </span>
          )}{' '}
          {pattern.rule &&
            type &&
            `${t('evidence.ruleLabel')}: ${t(`evidence.rule.${type}`, {
              value: pattern.rule.value,
              interpolation: { escapeValue: false },
            })}`}
        </p>
      )}
      <PatternScores scores={pattern.scores} />
    </>
  );
}
