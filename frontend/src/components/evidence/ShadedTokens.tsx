import type { CSSProperties } from 'react';
import { useTranslation } from 'react-i18next';

import { exactNumber, formatCoefficient } from '../patternEditor/numbers';
import { TokenText } from '../patternEditor/tokenDisplay';
import {
  cssRgb,
  SHADE_SCHEMES,
  shadeColour,
  shadeShare,
  triggerIndex,
  type TokenCoefficients,
} from './shading';
import './evidence.css';

/**
 * An example's tokens, each shaded by the key's coefficient there on the key's own scale
 * (`max`: its largest per-sentence coefficient over the corpus), blue above zero and
 * orange below. The trigger keeps its mark (an outline: the background is the shade's);
 * an encoder's tokens after it are the rest of the sentence, set apart as the greyed
 * suffix is without shading. Each token's value is its hover title and, in the row the
 * keyboard is on (or one that has focus), written after it (evidence.css), so that the
 * values are there without a mouse too. The caller checks `hasTokens` first.
 */
export function ShadedTokens({
  example,
  isCausal,
  max,
}: {
  example: TokenCoefficients & { trigger_token?: string };
  isCausal: boolean;
  max: number | null | undefined;
}) {
  const { t, i18n } = useTranslation();
  const tokens = example.tokens ?? [];
  const values = example.token_coefficients ?? [];
  const trigger = triggerIndex(example, isCausal);
  return (
    <span className="prefix-text shaded-text" data-testid="prefix-text" data-shaded="true">
      {tokens.map((token, index) => {
        const value = values[index] ?? 0;
        const share = shadeShare(value, max);
        const style = {
          '--shade-light': cssRgb(shadeColour(share, SHADE_SCHEMES.light)),
          '--shade-dark': cssRgb(shadeColour(share, SHADE_SCHEMES.dark)),
        } as CSSProperties;
        const written = formatCoefficient(value, i18n.language);
        const classes = [
          'shade',
          index === trigger ? 'shade-trigger' : '',
          index > trigger ? 'shade-after' : '',
        ];
        return (
          <span
            key={index}
            className={classes.filter(Boolean).join(' ')}
            style={style}
            title={t('evidence.tokenValue', { value: exactNumber(value) })}
            data-testid="shaded-token"
            data-value={value}
            data-share={share.toFixed(3)}
          >
            <TokenText token={token} className="shade-token" />
            <span className="shade-value" data-testid="shade-value">
              {written}
            </span>
          </span>
        );
      })}
    </span>
  );
}
