import { useTranslation } from 'react-i18next';

import type {
  ReportRate,
  ReportValueAgreement,
  ReportValueAgreementEveryKey,
  ValueAgreementReason,
} from '../../../api/types';
import type { Formatters } from '../lib/format';
import { LayerRows, RowHead } from './LayerRows';
import { READINGS, rateOf, ValueAgreementChart } from './ValueAgreementChart';
import type { ValueSeries } from './ValueAgreementChart';
import { useWidth } from '../hooks/useWidth';

/** "0.33% [0.10%, 0.71%] (5/1,533)": the rate, its Wilson interval, matches of n. */
function useRateText(f: Formatters) {
  const { t } = useTranslation();
  return (rate: ReportRate | undefined) =>
    rate
      ? t('report.values.rateCell', {
          rate: f.finePercent(rate.rate),
          low: f.finePercent(rate.low),
          high: f.finePercent(rate.high),
          matches: f.count(rate.matches),
          n: f.count(rate.n),
        })
      : '—';
}

function NotApplicable({
  reason,
  detail,
  testId,
}: {
  reason: ValueAgreementReason | null;
  detail?: string | null;
  testId: string;
}) {
  const { t } = useTranslation();
  return (
    <p className="muted" data-testid={testId} data-reason={reason ?? ''}>
      {t(`report.values.reasons.${reason ?? 'not_counted'}`, { detail: detail ?? '' })}
    </p>
  );
}

/** §4 over every key (a figure and a table), then over the sampled keys (a table). */
export function ValueAgreementSection({
  everyKey,
  sampled,
  gold,
  f,
}: {
  everyKey: ReportValueAgreementEveryKey;
  sampled: ReportValueAgreement;
  /** §4 over the sampled keys that have submitted gold (the gold view). */
  gold?: ReportValueAgreement;
  f: Formatters;
}) {
  const { t } = useTranslation();
  return (
    <div className="stack">
      <h3>{t('report.values.everyKeyHeading')}</h3>
      {everyKey.applicable && everyKey.overall ? (
        <EveryKey block={everyKey} f={f} />
      ) : (
        <NotApplicable
          reason={everyKey.reason}
          detail={everyKey.detail}
          testId="value-every-key-na"
        />
      )}
      <h3>{t('report.values.sampledHeading')}</h3>
      {sampled.applicable && sampled.overall ? (
        <SampledTable block={sampled} f={f} />
      ) : (
        <NotApplicable reason={sampled.reason} testId="value-sampled-na" />
      )}
      {gold?.applicable && gold.overall && gold.overall.n_keys > 0 && (
        <>
          <h3>{t('report.values.goldHeading')}</h3>
          <SampledTable
            block={gold}
            f={f}
            testId="value-agreement-gold-table"
            caption={t('report.values.goldCaption')}
          />
        </>
      )}
    </div>
  );
}

function EveryKey({ block, f }: { block: ReportValueAgreementEveryKey; f: Formatters }) {
  const { t } = useTranslation();
  const rateText = useRateText(f);
  const [chartFrame, chartWidth] = useWidth<HTMLDivElement>();
  const series: ValueSeries[] = READINGS.flatMap((reading) =>
    block.variants.map((variant) => ({
      reading,
      variant,
      name: t('report.values.series', {
        reading: t(`report.values.readings.${reading}`),
        variant: t(`report.values.variants.${variant}`),
      }),
    })),
  );
  const overall = block.overall!;
  const rows = [...block.layers, overall];
  const label = {
    keys: t('report.values.keys'),
    unknown: t('report.values.unknown'),
    ends: t('report.values.ends'),
  };
  return (
    <>
      <div className="chart-fit" ref={chartFrame}>
        <ValueAgreementChart
          rows={block.layers}
          series={series}
          baseline={block.random_baseline}
          title={t('report.values.chartTitle')}
          axisTitle={t('report.values.axis')}
          baselineLabel={t('report.values.baselineLegend', {
            baseline: f.small(block.random_baseline),
          })}
          shortLayer={(layer) => t('report.figure2.layerShort', { layer })}
          longLayer={(layer) => t('report.layer', { layer })}
          describe={rateText}
          maxWidth={chartWidth}
        />
      </div>
      <table className="assignments report-table" data-testid="value-every-key-table">
        <caption>{t('report.values.everyKeyCaption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('report.layerColumn')}</th>
            <th scope="col">{label.keys}</th>
            <th scope="col">{label.unknown}</th>
            <th scope="col">{label.ends}</th>
            {series.map((s) => (
              <th scope="col" key={`${s.reading}/${s.variant}`}>
                {s.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <LayerRows
            rows={rows}
            isEmpty={(row) => row.n_keys === 0}
            columns={4 + series.length}
            why={t('report.foldedWhy.noKeys')}
            render={(row) => (
              <tr>
                <RowHead layer={row.layer} />
                <td data-label={label.keys}>{f.count(row.n_keys)}</td>
                <td data-label={label.unknown}>{f.count(row.next_unknown)}</td>
                <td data-label={label.ends}>{f.count(row.next_end)}</td>
                {series.map((s) => (
                  <td
                    key={`${s.reading}/${s.variant}`}
                    className="number"
                    data-label={s.name}
                    data-testid={`every-key-${s.reading}-${s.variant}`}
                  >
                    {rateText(rateOf(row, s))}
                  </td>
                ))}
              </tr>
            )}
          />
        </tbody>
      </table>
      <p className="muted" data-testid="value-every-key-note">
        {t('report.values.everyKeyNote', {
          count: overall.next_unknown,
          vocab: f.count(block.vocab_size),
          baseline: f.small(block.random_baseline),
          norm: block.final_norm ?? t('report.values.noFinalNorm'),
        })}
      </p>
    </>
  );
}

/** The sampled table's caption: how many keys a layer, so how coarse a rate is. */
function useSampledCaption(f: Formatters) {
  const { t } = useTranslation();
  return (block: ReportValueAgreement) => {
    const counts = block.layers.map((row) => row.n_keys).filter((n) => n > 0);
    if (counts.length === 0) return t('report.values.caption');
    const low = Math.min(...counts);
    const high = Math.max(...counts);
    const step = f.percent(1 / high);
    return low === high
      ? t('report.values.captionKeys', { count: high, step })
      : t('report.values.captionRange', { count: high, low: f.count(low), step });
  };
}

function SampledTable({
  block,
  f,
  testId = 'value-agreement-table',
  caption,
}: {
  block: ReportValueAgreement;
  f: Formatters;
  testId?: string;
  caption?: string;
}) {
  const { t } = useTranslation();
  const rateText = useRateText(f);
  const sampledCaption = useSampledCaption(f);
  const rows = [...block.layers, block.overall!];
  const gold = testId !== 'value-agreement-table';
  const label = { keys: t('report.values.keys'), unknown: t('report.values.unknown') };
  return (
    <>
      <table className="assignments report-table" data-testid={testId}>
        <caption>{caption ?? sampledCaption(block)}</caption>
        <thead>
          <tr>
            <th scope="col">{t('report.layerColumn')}</th>
            <th scope="col">{label.keys}</th>
            <th scope="col">{label.unknown}</th>
            {READINGS.map((reading) => (
              <th scope="col" key={reading}>
                {t(`report.values.readings.${reading}`)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <LayerRows
            rows={rows}
            isEmpty={(row) => row.n_keys === 0}
            columns={3 + READINGS.length}
            why={t('report.foldedWhy.noKeys')}
            render={(row) => (
              <tr>
                <RowHead layer={row.layer} />
                <td data-label={label.keys}>{f.count(row.n_keys)}</td>
                <td data-label={label.unknown}>{f.count(row.next_unknown)}</td>
                {READINGS.map((reading) => (
                  <td
                    key={reading}
                    className="number"
                    data-label={t(`report.values.readings.${reading}`)}
                  >
                    {rateText(row[reading])}
                  </td>
                ))}
              </tr>
            )}
          />
        </tbody>
      </table>
      {!gold && (
        <p className="muted" data-testid="value-baseline">
          {t('report.values.baselineNote', {
            vocab: f.count(block.vocab_size),
            baseline: f.small(block.random_baseline),
          })}
        </p>
      )}
    </>
  );
}
