import { useTranslation } from 'react-i18next';

import { formatCoefficient, formatProbability } from '../patternEditor/numbers';

export interface Histogram {
  edges: readonly number[];
  counts: readonly number[];
}

/** Whether the histogram is well formed: one more edge than counts, at least one bin. */
export function isHistogram(histogram: Histogram | null | undefined): histogram is Histogram {
  return (
    !!histogram &&
    histogram.counts.length > 0 &&
    histogram.edges.length === histogram.counts.length + 1
  );
}

/**
 * The key's activation histogram from mining (its coefficients over the corpus, in
 * `edges`/`counts` bins), drawn small, with its density (the share of positions where
 * it is active). The bars are also a table for screen readers.
 */
export function ActivationHistogram({
  histogram,
  density,
}: {
  histogram: Histogram | null | undefined;
  density: number | null | undefined;
}) {
  const { t, i18n } = useTranslation();
  const valid = isHistogram(histogram);
  if (!valid && (density === null || density === undefined)) return null;
  const width = 100;
  const height = 40;
  const counts = valid ? histogram.counts : [];
  const edges = valid ? histogram.edges : [];
  const top = Math.max(1, ...counts);
  const bar = counts.length > 0 ? width / counts.length : 0;
  const number = (value: number) => formatCoefficient(value, i18n.language);
  return (
    <section className="card histogram" data-testid="activation-histogram">
      <h2>{t('evidence.histogram')}</h2>
      {density !== null && density !== undefined && (
        <p className="muted" data-testid="density">
          {t('evidence.density', { value: formatProbability(density, i18n.language) })}
        </p>
      )}
      {valid && (
        <>
          <svg viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" aria-hidden="true">
            {counts.map((count, index) => {
              // A square-root scale: the tail of a few strong activations stays visible
              // beside the mass near zero.
              const h = count > 0 ? Math.max(1, (Math.sqrt(count) / Math.sqrt(top)) * height) : 0;
              return (
                <rect
                  key={index}
                  x={index * bar}
                  y={height - h}
                  width={Math.max(0.5, bar - 0.5)}
                  height={h}
                  data-testid="histogram-bar"
                  data-count={count}
                />
              );
            })}
          </svg>
          <div className="axis" aria-hidden="true">
            <span>{number(edges[0]!)}</span>
            <span>{number(edges[edges.length - 1]!)}</span>
          </div>
          <table className="visually-hidden">
            <caption>{t('evidence.histogram')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('evidence.bin')}</th>
                <th scope="col">{t('evidence.binCount')}</th>
              </tr>
            </thead>
            <tbody>
              {counts.map((count, index) => (
                <tr key={index}>
                  <td>
                    {t('evidence.range', {
                      low: number(edges[index]!),
                      high: number(edges[index + 1]!),
                    })}
                  </td>
                  <td>{count}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted">{t('evidence.histogramScale')}</p>
        </>
      )}
    </section>
  );
}
