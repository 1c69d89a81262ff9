import type { ReportEstimate } from '../../../api/types';

export const DASH = '—';

/** `[3, 4, 5, 9]` as "3–5, 9". */
export function layerRanges(layers: readonly number[]): string {
  const parts: string[] = [];
  let start: number | null = null;
  let prev: number | null = null;
  for (const layer of [...layers, null]) {
    if (layer !== null && prev !== null && layer === prev + 1) {
      prev = layer;
      continue;
    }
    if (start !== null && prev !== null)
      parts.push(start === prev ? String(start) : `${start}–${prev}`);
    start = layer;
    prev = layer;
  }
  return parts.join(', ');
}

export function makeFormatters(language: string) {
  const percent = new Intl.NumberFormat(language, {
    style: 'percent',
    minimumFractionDigits: 1,
    maximumFractionDigits: 1,
  });
  const decimal = new Intl.NumberFormat(language, {
    minimumFractionDigits: 3,
    maximumFractionDigits: 3,
  });
  const twoDecimals = new Intl.NumberFormat(language, {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  });
  // §4's rates sit near 0 (the paper: 3.5% at best): two decimals keep 0.33% from 0.3%.
  const finePercent = new Intl.NumberFormat(language, {
    style: 'percent',
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  });
  const count = new Intl.NumberFormat(language, { maximumFractionDigits: 1 });
  const small = new Intl.NumberFormat(language, { maximumSignificantDigits: 3 });
  const orDash =
    (format: Intl.NumberFormat) =>
    (value: number | null | undefined): string =>
      value === null || value === undefined || Number.isNaN(value) ? DASH : format.format(value);
  return {
    percent: orDash(percent),
    finePercent: orDash(finePercent),
    decimal: orDash(decimal),
    twoDecimals: orDash(twoDecimals),
    count: orDash(count),
    /** Tiny numbers such as 1/|V| without rounding them to 0. */
    small: orDash(small),
    /** "0.743 [0.612, 0.851]"; the interval is left out when the bootstrap gave none. */
    estimate: (estimate: ReportEstimate): string => {
      const value = orDash(decimal)(estimate.value);
      if (estimate.value === null || estimate.low === null || estimate.high === null) return value;
      return `${value} [${decimal.format(estimate.low)}, ${decimal.format(estimate.high)}]`;
    },
  };
}

export type Formatters = ReturnType<typeof makeFormatters>;
