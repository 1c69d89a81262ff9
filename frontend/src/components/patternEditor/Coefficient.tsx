import { useTranslation } from 'react-i18next';

import { exactNumber, formatCoefficient } from './numbers';

/**
 * A prefix's memory coefficient as a bar (its share of the largest coefficient of the key's
 * prefixes) and a number; not active (m ≤ 0) reads as such. The workspace's prefix list
 * and the review grid show the same one.
 */
export function Coefficient({ coefficient, max }: { coefficient: number; max: number }) {
  const { t, i18n } = useTranslation();
  const share = max > 0 ? Math.max(0, coefficient / max) : 0;
  return (
    <span
      className={`coefficient${coefficient > 0 ? '' : ' inactive'}`}
      title={t(coefficient > 0 ? 'workspace.coefficientValue' : 'workspace.coefficientInactive', {
        value: exactNumber(coefficient),
      })}
    >
      <span className="coef-bar" aria-hidden="true">
        <span className="coef-fill" style={{ width: `${share * 100}%` }} />
      </span>
      <span className="coef-value" data-testid="coefficient">
        {formatCoefficient(coefficient, i18n.language)}
      </span>
    </span>
  );
}
