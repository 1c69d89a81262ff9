import { useTranslation } from 'react-i18next';

import type { StudyReport } from '../../../api/types';
import type { Formatters } from '../lib/format';
import { LayerRows, NoRatings, RowHead } from './LayerRows';

export function CoverageTable({ report, f }: { report: StudyReport; f: Formatters }) {
  const { t } = useTranslation();
  if (report.coverage.overall.n_prefixes === 0)
    return <NoRatings report={report} testId="coverage-empty" />;
  const rows = [...report.coverage.layers, report.coverage.overall];
  const label = {
    ratings: t('report.coverage.ratings'),
    covered: t('report.coverage.covered'),
    share: t('report.coverage.share'),
    annotations: t('report.coverage.annotations'),
    patterns: t('report.coverage.patterns'),
    perKey: t('report.coverage.perKey'),
  };
  return (
    <table className="assignments report-table" data-testid="coverage-table">
      <caption>{t('report.coverage.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.layerColumn')}</th>
          <th scope="col">{label.ratings}</th>
          <th scope="col">{label.covered}</th>
          <th scope="col">{label.share}</th>
          <th scope="col">{label.annotations}</th>
          <th scope="col">{label.patterns}</th>
          <th scope="col">{label.perKey}</th>
        </tr>
      </thead>
      <tbody>
        <LayerRows
          rows={rows}
          isEmpty={(row) => row.n_prefixes === 0}
          columns={7}
          why={t('report.foldedWhy.noRatings')}
          render={(row) => (
            <tr>
              <RowHead layer={row.layer} />
              <td data-label={label.ratings}>{f.count(row.n_prefixes)}</td>
              <td data-label={label.covered}>{f.count(row.covered)}</td>
              <td data-label={label.share} data-testid="coverage-share">
                {f.percent(row.share_covered)}
              </td>
              <td data-label={label.annotations}>{f.count(row.n_annotations)}</td>
              <td data-label={label.patterns}>{f.count(row.n_patterns)}</td>
              <td data-label={label.perKey}>{f.twoDecimals(row.mean_patterns_per_key)}</td>
            </tr>
          )}
        />
        <tr className="paper-row">
          <th scope="row">{t('report.coverage.paper')}</th>
          <td data-label={label.ratings}>{'—'}</td>
          <td data-label={label.covered}>{'—'}</td>
          <td data-label={label.share}>{t('report.coverage.paperShare')}</td>
          <td data-label={label.annotations}>{'—'}</td>
          <td data-label={label.patterns}>{'—'}</td>
          <td data-label={label.perKey}>{t('report.coverage.paperPerKey')}</td>
        </tr>
      </tbody>
    </table>
  );
}

export function JaccardTable({ report, f }: { report: StudyReport; f: Formatters }) {
  const { t } = useTranslation();
  const jaccard = report.pattern_jaccard;
  if (jaccard.pairs.length === 0 || jaccard.overall.n_keys === 0) {
    // A key annotated by two annotators has every prefix rated by both: no prefix with
    // two coders means no shared key.
    const sharedKeys = report.agreement.labels.overall.krippendorff_alpha.n_units > 0;
    return (
      <p className="muted" data-testid="jaccard-empty">
        {sharedKeys ? t('report.empty.noSharedPatterns') : t('report.empty.noSharedKeyPatterns')}
      </p>
    );
  }
  const pooled = [...jaccard.layers, jaccard.overall];
  const pooledLabel = t('report.jaccard.pooled');
  const cellOf = (pair: (typeof jaccard.pairs)[number], layer: number | null) =>
    layer === null ? pair.overall : pair.layers.find((each) => each.layer === layer);
  return (
    <table className="assignments report-table" data-testid="jaccard-table">
      <caption>{t('report.jaccard.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.layerColumn')}</th>
          <th scope="col">{pooledLabel}</th>
          {jaccard.pairs.map((pair) => (
            <th scope="col" key={pair.annotators.join('|')}>
              {pair.annotators.join(' · ')}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        <LayerRows
          rows={pooled}
          isEmpty={(row) =>
            row.n_keys === 0 &&
            jaccard.pairs.every((pair) => (cellOf(pair, row.layer)?.n_keys ?? 0) === 0)
          }
          columns={2 + jaccard.pairs.length}
          why={t('report.foldedWhy.noKeyCompared')}
          render={(row) => (
            <tr>
              <RowHead layer={row.layer} />
              <td data-label={pooledLabel}>
                {t('report.jaccard.cell', { mean: f.decimal(row.mean), count: row.n_keys })}
              </td>
              {jaccard.pairs.map((pair) => {
                const cell = cellOf(pair, row.layer);
                return (
                  <td key={pair.annotators.join('|')} data-label={pair.annotators.join(' · ')}>
                    {cell
                      ? t('report.jaccard.cell', { mean: f.decimal(cell.mean), count: cell.n_keys })
                      : '—'}
                  </td>
                );
              })}
            </tr>
          )}
        />
      </tbody>
    </table>
  );
}

export function PerturbationTable({ report, f }: { report: StudyReport; f: Formatters }) {
  const { t } = useTranslation();
  const perturbation = report.perturbation;
  if (perturbation.overall.n_keys === 0) {
    return (
      <p className="muted" data-testid="perturbation-none">
        {t('report.perturbation.notMeasured')}
      </p>
    );
  }
  const rows = [...perturbation.layers, perturbation.overall];
  const label = {
    keys: t('report.perturbation.keys'),
    first: t('report.perturbation.first'),
    last: t('report.perturbation.last'),
    random: t('report.perturbation.random'),
  };
  return (
    <table className="assignments report-table" data-testid="perturbation-table">
      <caption>{t('report.perturbation.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.layerColumn')}</th>
          <th scope="col">{label.keys}</th>
          <th scope="col">{label.first}</th>
          <th scope="col">{label.last}</th>
          <th scope="col">{label.random}</th>
        </tr>
      </thead>
      <tbody>
        <LayerRows
          rows={rows}
          isEmpty={(row) => row.n_keys === 0}
          columns={5}
          why={t('report.foldedWhy.notMeasured')}
          render={(row) => (
            <tr>
              <RowHead layer={row.layer} />
              <td data-label={label.keys}>{f.count(row.n_keys)}</td>
              <td data-label={label.first}>{f.decimal(row.first)}</td>
              <td data-label={label.last}>{f.decimal(row.last)}</td>
              <td data-label={label.random}>{f.decimal(row.random)}</td>
            </tr>
          )}
        />
      </tbody>
    </table>
  );
}

/** Coverage of the submitted gold annotations, per layer (a layer without gold: dashes). */
export function GoldCoverageTable({ report, f }: { report: StudyReport; f: Formatters }) {
  const { t } = useTranslation();
  const gold = report.coverage.gold;
  if (gold.overall.n_annotations === 0)
    return (
      <p className="muted" data-testid="gold-coverage-empty">
        {t('report.gold.none')}
      </p>
    );
  const label = {
    keys: t('report.coverage.goldKeys'),
    covered: t('report.coverage.covered'),
    share: t('report.coverage.share'),
    perKey: t('report.coverage.perKey'),
  };
  return (
    <table className="assignments report-table" data-testid="gold-coverage-table">
      <caption>{t('report.coverage.goldCaption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.layerColumn')}</th>
          <th scope="col">{label.keys}</th>
          <th scope="col">{label.covered}</th>
          <th scope="col">{label.share}</th>
          <th scope="col">{label.perKey}</th>
        </tr>
      </thead>
      <tbody>
        <LayerRows
          rows={[...gold.layers, gold.overall]}
          isEmpty={(row) => row.n_annotations === 0}
          columns={5}
          why={t('report.foldedWhy.noGold')}
          render={(row) => (
            <tr>
              <RowHead layer={row.layer} />
              <td data-label={label.keys}>{f.count(row.n_annotations)}</td>
              <td data-label={label.covered}>{f.count(row.covered)}</td>
              <td data-label={label.share} data-testid="gold-coverage-share">
                {f.percent(row.share_covered)}
              </td>
              <td data-label={label.perKey}>{f.twoDecimals(row.mean_patterns_per_key)}</td>
            </tr>
          )}
        />
      </tbody>
    </table>
  );
}

/** Each annotator against gold (κ, raw agreement) and on check keys. */
export function GoldAgreementTable({ report, f }: { report: StudyReport; f: Formatters }) {
  const { t } = useTranslation();
  const checks = new Map(report.check_accuracy.map((row) => [row.annotator, row]));
  const names = [
    ...new Set([
      ...report.agreement_with_gold.map((row) => row.annotator),
      ...report.check_accuracy.map((row) => row.annotator),
    ]),
  ].sort((a, b) => a.localeCompare(b));
  const gold = new Map(report.agreement_with_gold.map((row) => [row.annotator, row]));
  if (names.length === 0) return <NoRatings report={report} testId="gold-agreement-empty" />;
  const label = {
    kappa: t('report.gold.kappa'),
    raw: t('report.gold.raw'),
    units: t('report.gold.units'),
    checks: t('report.gold.checks'),
    checkAccuracy: t('report.gold.checkAccuracy'),
    checkKappa: t('report.gold.checkKappa'),
  };
  return (
    <table className="assignments report-table" data-testid="gold-agreement-table">
      <caption>{t('report.gold.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.gold.annotator')}</th>
          <th scope="col">{label.kappa}</th>
          <th scope="col">{label.raw}</th>
          <th scope="col">{label.units}</th>
          <th scope="col">{label.checks}</th>
          <th scope="col">{label.checkAccuracy}</th>
          <th scope="col">{label.checkKappa}</th>
        </tr>
      </thead>
      <tbody>
        {names.map((name) => {
          const withGold = gold.get(name);
          const check = checks.get(name);
          return (
            <tr key={name} data-annotator={name}>
              <th scope="row">{name}</th>
              <td className="number" data-label={label.kappa}>
                {f.decimal(withGold?.kappa)}
              </td>
              <td className="number" data-label={label.raw}>
                {f.percent(withGold?.raw_agreement)}
              </td>
              <td data-label={label.units}>{f.count(withGold?.n_units)}</td>
              <td data-label={label.checks}>{f.count(check?.n_checks ?? 0)}</td>
              <td className="number" data-label={label.checkAccuracy}>
                {f.percent(check?.raw_agreement)}
              </td>
              <td className="number" data-label={label.checkKappa}>
                {f.decimal(check?.kappa)}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
