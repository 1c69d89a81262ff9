import { useTranslation } from 'react-i18next';

import type { ValueToken } from '../../api/types';
import { exactNumber, formatProbability } from './numbers';
import { TokenText } from './tokenDisplay';

/** The value's top tokens with their probabilities, readable however small (numbers.ts). */
export function ValueTokens({ tokens }: { tokens: readonly ValueToken[] }) {
  const { t, i18n } = useTranslation();
  return (
    <section className="card" data-testid="value-tokens">
      <h2>{t('workspace.valueTokens')}</h2>
      <ol className="value-tokens">
        {tokens.map((token, index) => (
          <li key={index}>
            <TokenText token={token.token} />{' '}
            <span
              className="muted probability"
              title={t('workspace.probability', { value: exactNumber(token.probability) })}
              data-testid="value-token-probability"
            >
              {formatProbability(token.probability, i18n.language)}
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}
