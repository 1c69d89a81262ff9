import { useTranslation } from 'react-i18next';

import { TokenText } from '../../../components/patternEditor/tokenDisplay';
import { ChartFigure } from '../../report/components/ChartFigure';
import type { FigureColumn } from '../../report/components/ChartFigure';
import { toCsv } from '../../report/lib/composition';
import PALETTE from '../../report/lib/compositionPalette.json';
import type { CausalFormatters } from '../lib/format';
import type { AblationResult, AblationSet, Interval, Paired } from '../lib/results';
import { CsvButton } from './CsvButton';
import { KeyLink, KeyList } from './KeyLink';

/** "own" first (the keys' own trigger prefixes), then "random", then any other set. */
export function setOrder(sets: Record<string, unknown>): string[] {
  const rank = (name: string) => (name === 'own' ? 0 : name === 'random' ? 1 : 2);
  return Object.keys(sets).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

const ENDS = ['mean', 'low', 'high'] as const;

function ends(interval: Interval | null): (number | null)[] {
  return ENDS.map((end) => interval?.[end] ?? null);
}

/**
 * Key ablation: per prefix set, the mean change of log p(target) with its 95% interval,
 * overall, per layer and per key, the ablated keys beside as many random keys of the same
 * layers; per key also its value top token's change; a chart per layer.
 */
export function AblationView({
  result,
  f,
  fileBase,
}: {
  result: AblationResult;
  f: CausalFormatters;
  fileBase: string;
}) {
  const { t } = useTranslation();
  return (
    <section className="stack" aria-label={t('causal.ablation.name')} data-testid="ablation-result">
      <p className="notice" data-testid="ablation-anchor">
        {t('causal.ablation.anchor')}
      </p>
      <dl className="facts">
        <dt>{t('causal.ablation.scale')}</dt>
        <dd>
          {result.scale === 0
            ? t('causal.ablation.zeroed')
            : t('causal.ablation.scaled', { scale: f.number(result.scale) })}
        </dd>
        <dt>{t('causal.ablation.keys')}</dt>
        <dd>
          <details>
            <summary>{t('causal.keyCount', { count: result.keys.length })}</summary>
            <KeyList keys={result.keys} keyIds={result.key_ids} />
          </details>
        </dd>
        <dt>{t('causal.ablation.control')}</dt>
        <dd>
          <details>
            <summary>{t('causal.keyCount', { count: result.control_keys.length })}</summary>
            <KeyList keys={result.control_keys} keyIds={result.key_ids} />
          </details>
        </dd>
        <dt>{t('causal.seed')}</dt>
        <dd>
          {t('causal.seedValue', { seed: result.seed, replicates: f.count(result.replicates) })}
        </dd>
      </dl>
      {setOrder(result.sets).map((name) => (
        <AblationSetView
          key={name}
          name={name}
          set={result.sets[name]!}
          result={result}
          f={f}
          fileBase={fileBase}
        />
      ))}
    </section>
  );
}

function AblationSetView({
  name,
  set,
  result,
  f,
  fileBase,
}: {
  name: string;
  set: AblationSet;
  result: AblationResult;
  f: CausalFormatters;
  fileBase: string;
}) {
  const { t } = useTranslation();
  const setName = name === 'own' || name === 'random' ? t(`causal.ablation.sets.${name}`) : name;
  const headingId = `ablation-${name}-heading`;
  const layers = set.layers.filter((row) => row.n > 0);
  const keys = set.keys.filter((row) => row.n > 0);
  const columns = {
    n: t('causal.ablation.n'),
    ablated: t('causal.ablation.ablated'),
    control: t('causal.ablation.controlColumn'),
  };
  const pairCells = (pair: Paired) => (
    <>
      <td className="number" data-label={columns.ablated} data-column="ablated">
        {f.interval(pair.ablated)}
      </td>
      <td className="number" data-label={columns.control} data-column="control">
        {f.interval(pair.control)}
      </td>
    </>
  );
  const intervalColumns = (series: string, csv: string): FigureColumn[] =>
    ENDS.map((end) => ({
      name: t('report.chart.columnOf', { series, column: t(`causal.ablation.ends.${end}`) }),
      csv: `${csv}_${end}`,
      format: f.delta,
    }));
  const chartHeading = t('causal.ablation.chartHeading', { set: setName });

  return (
    <section className="stack" aria-labelledby={headingId} data-testid={`ablation-set-${name}`}>
      <h3 id={headingId}>{t('causal.ablation.setHeading', { set: setName, n: f.count(set.n) })}</h3>
      <table className="assignments report-table" data-testid={`ablation-${name}-layers`}>
        <caption>{t('causal.ablation.caption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('causal.ablation.where')}</th>
            <th scope="col">{columns.n}</th>
            <th scope="col">{columns.ablated}</th>
            <th scope="col">{columns.control}</th>
          </tr>
        </thead>
        <tbody>
          <tr data-row="overall">
            <th scope="row" className="overall">
              {t('causal.ablation.overall')}
            </th>
            <td className="number" data-label={columns.n}>
              {f.count(set.overall.n)}
            </td>
            {pairCells(set.overall)}
          </tr>
          {layers.map((row) => (
            <tr key={row.layer} data-layer={row.layer}>
              <th scope="row">{t('report.layer', { layer: row.layer })}</th>
              <td className="number" data-label={columns.n}>
                {f.count(row.n)}
              </td>
              {pairCells(row)}
            </tr>
          ))}
        </tbody>
      </table>

      {keys.length > 0 && (
        <>
          <table className="assignments report-table" data-testid={`ablation-${name}-keys`}>
            <caption>{t('causal.ablation.keysCaption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('causal.keyColumn')}</th>
                <th scope="col">{columns.n}</th>
                <th scope="col">{columns.ablated}</th>
                <th scope="col">{columns.control}</th>
                <th scope="col">{t('causal.ablation.valueTop')}</th>
                <th scope="col">{t('causal.ablation.valueTopAblated')}</th>
                <th scope="col">{t('causal.ablation.valueTopControl')}</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((row) => (
                <tr key={`${row.key[0]}:${row.key[1]}`} data-key={`${row.key[0]}:${row.key[1]}`}>
                  <th scope="row">
                    <KeyLink layer={row.key[0]} index={row.key[1]} keyIds={result.key_ids} />
                  </th>
                  <td className="number" data-label={columns.n}>
                    {f.count(row.n)}
                  </td>
                  {pairCells(row)}
                  <td data-label={t('causal.ablation.valueTop')}>
                    <span>
                      “<TokenText token={row.value_top.text} />”
                    </span>
                  </td>
                  <td
                    className="number"
                    data-label={t('causal.ablation.valueTopAblated')}
                    data-column="value-top-ablated"
                  >
                    {f.interval(row.value_top.ablated)}
                  </td>
                  <td
                    className="number"
                    data-label={t('causal.ablation.valueTopControl')}
                    data-column="value-top-control"
                  >
                    {f.interval(row.value_top.control)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CsvButton
            label={t('causal.ablation.keysCsv', { set: setName })}
            fileName={`${fileBase}-ablation-${name}-keys.csv`}
            csv={() =>
              toCsv(
                [
                  'layer',
                  'index',
                  'key_id',
                  'n',
                  ...['ablated', 'control', 'value_top_ablated', 'value_top_control'].flatMap(
                    (what) => ENDS.map((end) => `${what}_${end}`),
                  ),
                  'value_top_token',
                  'value_top_text',
                ],
                keys.map((row) => [
                  row.key[0],
                  row.key[1],
                  result.key_ids[`${row.key[0]}:${row.key[1]}`] ?? null,
                  row.n,
                  ...ends(row.ablated),
                  ...ends(row.control),
                  ...ends(row.value_top.ablated),
                  ...ends(row.value_top.control),
                  row.value_top.token,
                  row.value_top.text,
                ]),
              )
            }
          />
        </>
      )}

      {layers.length > 0 && (
        <ChartFigure
          id={`ablation-${name}`}
          heading={chartHeading}
          caption={t('causal.ablation.chartCaption')}
          fileBase={`${fileBase}-ablation-${name}`}
          chart={{
            layers: layers.map((row) => row.layer),
            title: chartHeading,
            axisTitle: t('causal.ablation.axis'),
            axis: 'signed',
            shortLayer: (layer) => t('report.figure2.layerShort', { layer }),
            format: (value) => f.delta(value),
            data: {
              kind: 'points',
              series: [
                {
                  id: 'ablated',
                  name: columns.ablated,
                  color: PALETTE.first,
                  points: layers.map((row) => ({
                    value: row.ablated?.mean ?? null,
                    low: row.ablated?.low ?? null,
                    high: row.ablated?.high ?? null,
                  })),
                },
                {
                  id: 'control',
                  name: columns.control,
                  color: PALETTE.second,
                  dashed: true,
                  points: layers.map((row) => ({
                    value: row.control?.mean ?? null,
                    low: row.control?.low ?? null,
                    high: row.control?.high ?? null,
                  })),
                },
              ],
            },
          }}
          table={{
            columns: [
              { name: columns.n, csv: 'n', format: f.count },
              ...intervalColumns(columns.ablated, 'ablated'),
              ...intervalColumns(columns.control, 'control'),
            ],
            rows: layers.map((row) => ({
              layer: row.layer,
              values: [row.n, ...ends(row.ablated), ...ends(row.control)],
            })),
          }}
        />
      )}
    </section>
  );
}
