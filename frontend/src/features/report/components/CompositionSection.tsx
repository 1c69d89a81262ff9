import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';

import type {
  ReportComposition,
  ReportCompositionLayer,
  ReportQuartiles,
} from '../../../api/types';
import { compositionState, hasReadings, pick, READINGS } from '../lib/composition';
import type { Reading } from '../lib/composition';
// Okabe–Ito colours, apart for every kind of colour blindness (and in grey, by their
// lightness and the lines' dashes).
import PALETTE from '../lib/compositionPalette.json';
import type { Formatters } from '../lib/format';
import { safeFileName } from '../lib/svgExport';
import { ChartFigure } from './ChartFigure';
import type { FigureColumn, FigureTable } from './ChartFigure';
import { CompositionJobPanel } from './CompositionJobPanel';
import type { ChartPoint } from './LayerChart';

const QUARTILES = ['mean', 'q1', 'median', 'q3'] as const;
const CHANGE = ['residual', 'ffn', 'neither'] as const;

/** A distribution's mean as the point, q1–q3 as its range. */
export function meanWithRange(q: ReportQuartiles | undefined): ChartPoint | null {
  return q ? { value: q.mean, low: q.q1, high: q.q3 } : null;
}

/** The columns of a distribution (mean, q1, median, q3) of one series. */
export function useQuartileColumns(f: Formatters) {
  const { t } = useTranslation();
  return (series: string, csvPrefix: string): FigureColumn[] =>
    QUARTILES.map((stat) => ({
      name: t('report.chart.columnOf', { series, column: t(`report.chart.columns.${stat}`) }),
      csv: `${csvPrefix}_${stat}`,
      format: f.percent,
    }));
}

/**
 * §5 (docs/composition.md): per layer, how many memories are active, how often the layer's
 * prediction is none of theirs, what the residual already predicts, where the FFN moves
 * the top token, and the residual's probability of the final prediction; with the job that
 * computes them. The study's model on its own corpus: never the paper's figures.
 */
export function CompositionSection({
  composition,
  studyId,
  studyName,
  f,
}: {
  composition: ReportComposition;
  studyId: number;
  studyName: string;
  f: Formatters;
}) {
  const { t } = useTranslation();
  const state = compositionState(composition);
  return (
    <section
      className="stack"
      aria-labelledby="composition-heading"
      data-testid="composition-section"
      data-state={state}
    >
      <h2 id="composition-heading">{t('report.composition.heading')}</h2>
      <p className="notice" data-testid="composition-note">
        {t('report.composition.note')}
      </p>
      {state === 'encoder' && (
        <p className="muted" data-testid="composition-encoder">
          {t('report.composition.encoder')}
        </p>
      )}
      {state === 'not_computed' && (
        <p className="muted" data-testid="composition-not-computed">
          {t('report.composition.notComputed')}
        </p>
      )}
      {state === 'no_layers' && (
        <p className="muted" data-testid="composition-no-layers">
          {t('report.composition.noLayers')}
        </p>
      )}
      {state !== 'encoder' && state !== 'not_computed' && (
        <SliceFacts composition={composition} f={f} />
      )}
      {state === 'figures' && (
        <CompositionFigures composition={composition} studyName={studyName} f={f} />
      )}
      {state !== 'encoder' && <CompositionJobPanel studyId={studyId} f={f} />}
    </section>
  );
}

/** Which prefixes the figures are over, and when they were computed. */
function SliceFacts({ composition, f }: { composition: ReportComposition; f: Formatters }) {
  const { t, i18n } = useTranslation();
  const dates = useMemo(
    () => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }),
    [i18n.language],
  );
  const slice = composition.slice;
  const readings = composition.final_norm?.includes(true) ?? hasReadings(composition);
  return (
    <dl className="facts" data-testid="composition-slice">
      <dt>{t('report.composition.slice.prefixes')}</dt>
      <dd data-testid="composition-prefixes">
        {f.count(slice?.prefixes ?? composition.n_prefixes)}
      </dd>
      {slice && (
        <>
          <dt>{t('report.composition.slice.heldOut')}</dt>
          <dd data-testid="composition-held-out">{f.count(slice.held_out)}</dd>
          <dt>{t('report.composition.slice.fromMined')}</dt>
          <dd data-testid="composition-from-mined">
            {f.count(slice.from_mined)}
            {/* The server's note, in the reader's words: it is made of these two numbers. */}
            {slice.note !== null && slice.from_mined > 0 && (
              <>
                {' '}
                <span className="muted" data-testid="composition-slice-note">
                  {t('report.composition.slice.note', {
                    held: f.count(slice.held_out),
                    mined: f.count(slice.from_mined),
                  })}
                </span>
              </>
            )}
          </dd>
          <dt>{t('report.composition.slice.seed')}</dt>
          <dd>{slice.seed}</dd>
        </>
      )}
      <dt>{t('report.composition.slice.finalNorm')}</dt>
      <dd>
        {readings
          ? t('report.composition.slice.finalNormBoth')
          : t('report.composition.slice.finalNormNone')}
      </dd>
      {composition.gated !== undefined && (
        <>
          <dt>{t('report.composition.slice.memories')}</dt>
          <dd>
            {composition.gated
              ? t('report.composition.slice.gated')
              : t('report.composition.slice.notGated')}
          </dd>
        </>
      )}
      {composition.computed_at && (
        <>
          <dt>{t('report.composition.slice.computed')}</dt>
          <dd data-testid="composition-computed">
            <time dateTime={composition.computed_at}>
              {t('report.composition.slice.computedAt', {
                time: dates.format(new Date(composition.computed_at)),
                job: composition.job ?? '—',
              })}
            </time>
          </dd>
        </>
      )}
    </dl>
  );
}

function CompositionFigures({
  composition,
  studyName,
  f,
}: {
  composition: ReportComposition;
  studyName: string;
  f: Formatters;
}) {
  const { t } = useTranslation();
  const quartileColumns = useQuartileColumns(f);
  const split = hasReadings(composition);
  const [chosen, setChosen] = useState<Reading>('with_final_norm');
  // A model without a final norm has one reading, given as plain numbers.
  const reading: Reading = split ? chosen : 'without_final_norm';
  const rows = composition.layers;
  const layers = rows.map((row) => row.layer);
  const gated = rows.some((row) => row.active_share_tenth !== undefined);
  const readingName = t(`report.values.variants.${reading}`);
  const titled = (title: string) =>
    split ? t('report.chart.withReading', { title, reading: readingName }) : title;
  const base = safeFileName(studyName);
  const file = (id: string, withReading = true) =>
    `${base}-composition-${id}${split && withReading ? `-${reading}` : ''}`;
  const common = {
    layers,
    shortLayer: (layer: number) => t('report.figure2.layerShort', { layer }),
    format: (value: number) => f.percent(value),
  };
  const value = (row: ReportCompositionLayer, field: ValueField) => pick(row[field], reading);
  const shareColumn = (name: string, csv: string): FigureColumn => ({
    name,
    csv,
    format: f.percent,
  });
  /** The table of one figure that is one value a layer. */
  const single = (field: ValueField, column: FigureColumn): FigureTable => ({
    columns: [column],
    rows: rows.map((row) => ({ layer: row.layer, values: [value(row, field)] })),
  });

  // Figure 7: m_i > 0, and for a gated model |m_i| above a tenth of the peak.
  const positive = t('report.composition.figures.active.positive');
  const tenth = t('report.composition.figures.active.tenth');
  const activeTable: FigureTable = {
    columns: [
      ...quartileColumns(positive, 'active_share'),
      ...(gated ? quartileColumns(tenth, 'active_share_tenth') : []),
    ],
    rows: rows.map((row) => ({
      layer: row.layer,
      values: [
        ...QUARTILES.map((stat) => row.active_share[stat]),
        ...(gated ? QUARTILES.map((stat) => row.active_share_tenth?.[stat] ?? null) : []),
      ],
    })),
  };

  const none = t('report.composition.figures.agreement.none');
  const stopword = t('report.composition.figures.agreement.stopword');
  const changeNames = Object.fromEntries(
    CHANGE.map((part) => [part, t(`report.composition.figures.change.${part}`)]),
  ) as Record<(typeof CHANGE)[number], string>;
  const residualSeries = t('report.composition.figures.residual.series');
  const probSeries = t('report.composition.figures.finalProb.series');

  return (
    <>
      {split && (
        <fieldset className="view-switch" data-testid="composition-reading">
          <legend>{t('report.composition.reading')}</legend>
          {READINGS.map((each) => (
            <label key={each} className="radio">
              <input
                type="radio"
                name="composition-reading"
                value={each}
                checked={reading === each}
                onChange={() => setChosen(each)}
              />
              {t(`report.values.variants.${each}`)}
            </label>
          ))}
        </fieldset>
      )}
      {split && <p className="muted">{t('report.composition.readingHint')}</p>}
      <div className="figure-grid">
        <ChartFigure
          id="active"
          heading={t('report.composition.figures.active.heading')}
          caption={t('report.composition.figures.active.paper')}
          fileBase={file('active', false)}
          table={activeTable}
          chart={{
            ...common,
            title: t('report.composition.figures.active.title', { name: studyName }),
            axisTitle: t('report.composition.figures.active.axis'),
            data: {
              kind: 'points',
              series: [
                {
                  id: 'active_share',
                  name: positive,
                  color: PALETTE.first,
                  points: rows.map((row) => meanWithRange(row.active_share)),
                },
                ...(gated
                  ? [
                      {
                        id: 'active_share_tenth',
                        name: tenth,
                        color: PALETTE.second,
                        dashed: true,
                        points: rows.map((row) => meanWithRange(row.active_share_tenth)),
                      },
                    ]
                  : []),
              ],
            },
          }}
        >
          {gated && (
            <p className="muted" data-testid="composition-gated-note">
              {t('report.composition.figures.active.gatedNote')}
            </p>
          )}
        </ChartFigure>
        <ChartFigure
          id="agreement"
          heading={t('report.composition.figures.agreement.heading')}
          caption={t('report.composition.figures.agreement.paper')}
          fileBase={file('agreement')}
          table={{
            columns: [
              shareColumn(none, 'none_agree_share'),
              shareColumn(stopword, 'agree_stopword_share'),
            ],
            rows: rows.map((row) => ({
              layer: row.layer,
              values: [value(row, 'none_agree_share'), value(row, 'agree_stopword_share')],
            })),
          }}
          chart={{
            ...common,
            title: titled(t('report.composition.figures.agreement.title', { name: studyName })),
            axisTitle: t('report.composition.figures.agreement.axis'),
            data: {
              kind: 'points',
              series: [
                {
                  id: 'none_agree_share',
                  name: none,
                  color: PALETTE.first,
                  points: rows.map((row) => ({ value: value(row, 'none_agree_share') })),
                },
                {
                  id: 'agree_stopword_share',
                  name: stopword,
                  color: PALETTE.second,
                  dashed: true,
                  points: rows.map((row) => ({ value: value(row, 'agree_stopword_share') })),
                },
              ],
            },
          }}
        />
        <ChartFigure
          id="residual"
          heading={t('report.composition.figures.residual.heading')}
          caption={t('report.composition.figures.residual.paper')}
          fileBase={file('residual')}
          table={single(
            'residual_final_share',
            shareColumn(residualSeries, 'residual_final_share'),
          )}
          chart={{
            ...common,
            title: titled(t('report.composition.figures.residual.title', { name: studyName })),
            axisTitle: t('report.composition.figures.residual.axis'),
            data: {
              kind: 'points',
              series: [
                {
                  id: 'residual_final_share',
                  name: residualSeries,
                  color: PALETTE.first,
                  points: rows.map((row) => ({ value: value(row, 'residual_final_share') })),
                },
              ],
            },
          }}
        />
        <ChartFigure
          id="change"
          heading={t('report.composition.figures.change.heading')}
          caption={t('report.composition.figures.change.paper')}
          fileBase={file('change')}
          table={{
            columns: CHANGE.map((part) => shareColumn(changeNames[part], `change_${part}`)),
            rows: rows.map((row) => {
              const change = pick(row.change, reading);
              return { layer: row.layer, values: CHANGE.map((part) => change[part]) };
            }),
          }}
          chart={{
            ...common,
            title: titled(t('report.composition.figures.change.title', { name: studyName })),
            axisTitle: t('report.composition.figures.change.axis'),
            data: {
              kind: 'stack',
              parts: CHANGE.map((part) => ({
                id: part,
                name: changeNames[part],
                color: PALETTE[part],
              })),
              bars: rows.map((row) => pick(row.change, reading)),
            },
          }}
        />
        <ChartFigure
          id="final-prob"
          heading={t('report.composition.figures.finalProb.heading')}
          caption={t('report.composition.figures.finalProb.paper')}
          fileBase={file('final-prob')}
          table={single('final_prob_mean', {
            name: probSeries,
            csv: 'final_prob_mean',
            format: f.decimal,
          })}
          chart={{
            ...common,
            title: titled(t('report.composition.figures.finalProb.title', { name: studyName })),
            axisTitle: t('report.composition.figures.finalProb.axis'),
            axis: 'number',
            format: (v: number) => f.decimal(v),
            data: {
              kind: 'points',
              series: [
                {
                  id: 'final_prob_mean',
                  name: probSeries,
                  color: PALETTE.first,
                  points: rows.map((row) => ({ value: value(row, 'final_prob_mean') })),
                },
              ],
            },
          }}
        />
      </div>
    </>
  );
}

type ValueField =
  'none_agree_share' | 'agree_stopword_share' | 'residual_final_share' | 'final_prob_mean';
