/**
 * Numbers on the key workspace, readable at every scale: a memory
 * coefficient of -0.0002 is not "-0", a value-token probability of 4e-5 is not "0.0%".
 * Each formatter keeps the exact value for a title.
 */

/** Below this magnitude a coefficient is written in scientific notation, 2 digits. */
const TINY_COEFFICIENT = 0.001;
/** Probabilities under 1% get 2 significant digits (0.0095%), down to this floor. */
const SMALLEST_PERCENT = 1e-6;

export function formatCoefficient(value: number, language: string): string {
  if (value === 0 || Math.abs(value) >= TINY_COEFFICIENT) {
    return new Intl.NumberFormat(language, { maximumFractionDigits: 3 }).format(value);
  }
  return new Intl.NumberFormat(language, {
    notation: 'scientific',
    maximumSignificantDigits: 2,
  }).format(value);
}

export function formatProbability(value: number, language: string): string {
  if (value >= 0.01 || value <= 0) {
    return new Intl.NumberFormat(language, {
      style: 'percent',
      maximumFractionDigits: 1,
    }).format(Math.max(0, value));
  }
  const percent = new Intl.NumberFormat(language, {
    style: 'percent',
    maximumSignificantDigits: 2,
  });
  if (value < SMALLEST_PERCENT) return `<${percent.format(SMALLEST_PERCENT)}`;
  return percent.format(value);
}

/** The exact value, for a title: 4.1e-5 rather than 0.000041. */
export function exactNumber(value: number): string {
  return Math.abs(value) < TINY_COEFFICIENT && value !== 0 ? value.toExponential() : String(value);
}
