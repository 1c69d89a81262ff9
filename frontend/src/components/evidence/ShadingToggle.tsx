import { useTranslation } from 'react-i18next';

import type { CSSProperties } from 'react';

import { SHADE_SCHEMES, cssRgb } from './shading';

function swatch(sign: 'positive' | 'negative'): CSSProperties {
  return {
    '--shade-light': cssRgb(SHADE_SCHEMES.light[sign]),
    '--shade-dark': cssRgb(SHADE_SCHEMES.dark[sign]),
  } as CSSProperties;
}

/**
 * The switch for token shading, with the scale's legend (which hue is which sign). The
 * page's shortcut (where it has one) toggles the same state.
 */
export function ShadingToggle({
  on,
  onChange,
  shortcut,
}: {
  on: boolean;
  onChange: (on: boolean) => void;
  /** The key that toggles it (aria-keyshortcuts), when the page's shortcuts are on. */
  shortcut?: string;
}) {
  const { t } = useTranslation();
  return (
    <span className="shading-toggle">
      <label>
        <input
          type="checkbox"
          checked={on}
          onChange={(event) => onChange(event.target.checked)}
          aria-keyshortcuts={shortcut}
          data-testid="shading-toggle"
        />{' '}
        {t('evidence.shading')}
      </label>
      {on && (
        <span className="shade-legend" data-testid="shade-legend">
          <span className="shade-swatch" style={swatch('positive')} aria-hidden="true" />
          {t('evidence.positive')}{' '}
          <span className="shade-swatch" style={swatch('negative')} aria-hidden="true" />
          {t('evidence.negative')}
        </span>
      )}
    </span>
  );
}
