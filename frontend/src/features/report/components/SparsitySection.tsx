import { useTranslation } from 'react-i18next';

import type { ReportSparsity } from '../../../api/types';
import PALETTE from '../lib/compositionPalette.json';
import type { Formatters } from '../lib/format';
import { safeFileName } from '../lib/svgExport';
import { ChartFigure } from './ChartFigure';
import { meanWithRange, useQuartileColumns } from './CompositionSection';

/**
 * Sparsity per layer, from the mining pass's own counts (docs/composition.md): how often
 * a key is active, how unequal the keys' magnitudes are, and how many keys stand above a
 * tenth of a position's peak. It applies to an encoder too; the paper has no such figure.
 */
export function SparsitySection({
  sparsity,
  studyName,
  f,
}: {
  sparsity: ReportSparsity;
  studyName: string;
  f: Formatters;
}) {
  const { t } = useTranslation();
  const quartileColumns = useQuartileColumns(f);
  const rows = sparsity.layers;
  const common = {
    layers: rows.map((row) => row.layer),
    shortLayer: (layer: number) => t('report.figure2.layerShort', { layer }),
    format: (value: number) => f.percent(value),
  };
  const base = `${safeFileName(studyName)}-sparsity`;
  const density = t('report.sparsity.figures.density.series');
  const gini = t('report.sparsity.figures.gini.series');
  const above = t('report.sparsity.figures.aboveTenth.series');
  return (
    <section className="stack" aria-labelledby="sparsity-heading" data-testid="sparsity-section">
      <h2 id="sparsity-heading">{t('report.sparsity.heading')}</h2>
      <p className="muted" data-testid="sparsity-paper">
        {t('report.sparsity.paper')}
      </p>
      {rows.length === 0 ? (
        <p className="muted" data-testid="sparsity-empty">
          {t('report.sparsity.empty')}
        </p>
      ) : (
        <>
          {sparsity.n_positions !== undefined && (
            <p className="muted" data-testid="sparsity-positions">
              {t('report.sparsity.positions', {
                count: sparsity.n_positions,
                positions: f.count(sparsity.n_positions),
              })}
            </p>
          )}
          <div className="figure-grid">
            <ChartFigure
              id="density"
              heading={t('report.sparsity.figures.density.heading')}
              caption={t('report.sparsity.figures.density.caption')}
              fileBase={`${base}-density`}
              table={{
                columns: quartileColumns(density, 'density'),
                rows: rows.map((row) => ({
                  layer: row.layer,
                  values: [row.density.mean, row.density.q1, row.density.median, row.density.q3],
                })),
              }}
              chart={{
                ...common,
                title: t('report.sparsity.figures.density.title', { name: studyName }),
                axisTitle: t('report.sparsity.figures.density.axis'),
                data: {
                  kind: 'points',
                  series: [
                    {
                      id: 'density',
                      name: density,
                      color: PALETTE.first,
                      // The median of a skewed distribution over keys, with q1–q3.
                      points: rows.map((row) => ({
                        ...meanWithRange(row.density),
                        value: row.density.median,
                      })),
                    },
                  ],
                },
              }}
            />
            <ChartFigure
              id="gini"
              heading={t('report.sparsity.figures.gini.heading')}
              caption={t('report.sparsity.figures.gini.caption')}
              fileBase={`${base}-gini`}
              table={{
                columns: [{ name: gini, csv: 'gini', format: f.decimal }],
                rows: rows.map((row) => ({ layer: row.layer, values: [row.gini] })),
              }}
              chart={{
                ...common,
                title: t('report.sparsity.figures.gini.title', { name: studyName }),
                axisTitle: t('report.sparsity.figures.gini.axis'),
                axis: 'number',
                format: (value: number) => f.decimal(value),
                data: {
                  kind: 'points',
                  series: [
                    {
                      id: 'gini',
                      name: gini,
                      color: PALETTE.third,
                      points: rows.map((row) => ({ value: row.gini })),
                    },
                  ],
                },
              }}
            />
            <ChartFigure
              id="above-tenth"
              heading={t('report.sparsity.figures.aboveTenth.heading')}
              caption={t('report.sparsity.figures.aboveTenth.caption')}
              fileBase={`${base}-above-tenth`}
              table={{
                columns: [{ name: above, csv: 'above_tenth_of_peak', format: f.percent }],
                rows: rows.map((row) => ({ layer: row.layer, values: [row.above_tenth_of_peak] })),
              }}
              chart={{
                ...common,
                title: t('report.sparsity.figures.aboveTenth.title', { name: studyName }),
                axisTitle: t('report.sparsity.figures.aboveTenth.axis'),
                data: {
                  kind: 'points',
                  series: [
                    {
                      id: 'above_tenth_of_peak',
                      name: above,
                      color: PALETTE.second,
                      points: rows.map((row) => ({ value: row.above_tenth_of_peak })),
                    },
                  ],
                },
              }}
            />
          </div>
        </>
      )}
    </section>
  );
}
