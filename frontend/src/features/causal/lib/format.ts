// How the probes' numbers read: the report's formatters, and the signed ones a change needs.
import { DASH, makeFormatters } from '../../report/lib/format';
import type { Interval } from './results';

export function makeCausalFormatters(language: string) {
  const base = makeFormatters(language);
  // A change of log p: three decimals and its sign ("−0.412", "+0.031").
  const delta = new Intl.NumberFormat(language, {
    minimumFractionDigits: 3,
    maximumFractionDigits: 3,
    signDisplay: 'exceptZero',
  });
  // A relative change of p: "−29.0%", "+1.5%".
  const change = new Intl.NumberFormat(language, {
    style: 'percent',
    minimumFractionDigits: 1,
    maximumFractionDigits: 1,
    signDisplay: 'exceptZero',
  });
  // A probability or an indirect effect (ROME gives its effects as percentages of p): three
  // significant digits ("8.7%", "0.0312%"), and below 0.01% two decimals at most, so that a
  // difference of 1e-12 reads "0%" rather than as a row of zeros.
  const significant = new Intl.NumberFormat(language, {
    style: 'percent',
    maximumSignificantDigits: 3,
  });
  const tiny = new Intl.NumberFormat(language, { style: 'percent', maximumFractionDigits: 2 });
  const probability = (value: number): string =>
    Math.abs(value) >= 1e-4
      ? significant.format(value)
      : tiny.format(Math.abs(value) < 5e-5 ? 0 : value);
  const number = new Intl.NumberFormat(language, { maximumSignificantDigits: 4 });
  const orDash =
    (format: Intl.NumberFormat) =>
    (value: number | null | undefined): string =>
      value === null || value === undefined || Number.isNaN(value) ? DASH : format.format(value);
  const signed = orDash(delta);
  return {
    ...base,
    delta: signed,
    change: orDash(change),
    probability: (value: number | null | undefined): string =>
      value === null || value === undefined || Number.isNaN(value) ? DASH : probability(value),
    /** Scores and coefficients: four significant digits. */
    number: orDash(number),
    /** "−0.412 [−0.530, −0.301]", or a dash where no example counts. */
    interval: (interval: Interval | null | undefined): string =>
      interval
        ? `${signed(interval.mean)} [${signed(interval.low)}, ${signed(interval.high)}]`
        : DASH,
  };
}

export type CausalFormatters = ReturnType<typeof makeCausalFormatters>;
