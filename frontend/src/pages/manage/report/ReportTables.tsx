import { useTranslation } from 'react-i18next';

import type {
  ReportAgreementBlock,
  ReportAgreementRow,
  ReportEstimate,
  StudyReport,
} from '../../../api/types';
import type { Formatters } from './format';

/** "Layer 3", or "All layers" for the overall row (layer null). */
function useLayerName() {
  const { t } = useTranslation();
  return (layer: number | null) =>
    layer === null ? t('report.allLayers') : t('report.layer', { layer });
}

export function RowHead({ layer }: { layer: number | null }) {
  const layerName = useLayerName();
  return (
    <th scope="row" className={layer === null ? 'overall' : undefined}>
      {layerName(layer)}
    </th>
  );
}

/** Why a report has no ratings at all: nothing (submitted) matches its filters. */
export function NoRatings({ report, testId }: { report: StudyReport; testId: string }) {
  const { t } = useTranslation();
  return (
    <p className="muted" data-testid={testId}>
      {report.filters.submitted_only
        ? t('report.empty.noSubmittedRatings')
        : t('report.empty.noRatings')}
    </p>
  );
}

export function CoverageTable({ report, f }: { report: StudyReport; f: Formatters }) {
  const { t } = useTranslation();
  if (report.coverage.overall.n_prefixes === 0)
    return <NoRatings report={report} testId="coverage-empty" />;
  const rows = [...report.coverage.layers, report.coverage.overall];
  return (
    <table className="assignments report-table" data-testid="coverage-table">
      <caption>{t('report.coverage.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.layerColumn')}</th>
          <th scope="col">{t('report.coverage.ratings')}</th>
          <th scope="col">{t('report.coverage.covered')}</th>
          <th scope="col">{t('report.coverage.share')}</th>
          <th scope="col">{t('report.coverage.annotations')}</th>
          <th scope="col">{t('report.coverage.patterns')}</th>
          <th scope="col">{t('report.coverage.perKey')}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.layer ?? 'all'}>
            <RowHead layer={row.layer} />
            <td>{f.count(row.n_prefixes)}</td>
            <td>{f.count(row.covered)}</td>
            <td data-testid="coverage-share">{f.percent(row.share_covered)}</td>
            <td>{f.count(row.n_annotations)}</td>
            <td>{f.count(row.n_patterns)}</td>
            <td>{f.twoDecimals(row.mean_patterns_per_key)}</td>
          </tr>
        ))}
        <tr className="paper-row">
          <th scope="row">{t('report.coverage.paper')}</th>
          <td>{'—'}</td>
          <td>{'—'}</td>
          <td>{t('report.coverage.paperShare')}</td>
          <td>{'—'}</td>
          <td>{'—'}</td>
          <td>{t('report.coverage.paperPerKey')}</td>
        </tr>
      </tbody>
    </table>
  );
}

const AGREEMENT_COLUMNS = [
  'krippendorff_alpha',
  'fleiss_kappa',
  'cohen_kappa_mean',
  'raw_agreement',
] as const satisfies ReadonlyArray<keyof ReportAgreementRow>;

function EstimateCell({ estimate, f }: { estimate: ReportEstimate; f: Formatters }) {
  const { t } = useTranslation();
  return (
    <td
      className="number"
      title={
        estimate.n_units === 0
          ? t('report.empty.noSharedPrefixInLayer')
          : t('report.agreement.units', { count: estimate.n_units })
      }
    >
      {f.estimate(estimate)}
    </td>
  );
}

function AgreementBlockTable({
  block,
  caption,
  testId,
  f,
}: {
  block: ReportAgreementBlock;
  caption: string;
  testId: string;
  f: Formatters;
}) {
  const { t } = useTranslation();
  const rows = [...block.layers, block.overall];
  return (
    <>
      <table className="assignments report-table" data-testid={testId}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t('report.layerColumn')}</th>
            {AGREEMENT_COLUMNS.map((column) => (
              <th scope="col" key={column}>
                {t(`report.agreement.${column}`)}
              </th>
            ))}
            <th scope="col">{t('report.agreement.unitsColumn')}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.layer ?? 'all'}>
              <RowHead layer={row.layer} />
              {AGREEMENT_COLUMNS.map((column) => (
                <EstimateCell key={column} estimate={row[column]} f={f} />
              ))}
              <td>{f.count(row.krippendorff_alpha.n_units)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {block.layers.some((row) => row.krippendorff_alpha.n_units === 0) && (
        <p className="muted" data-testid={`${testId}-dash`}>
          {t('report.empty.dashNoSharedPrefix')}
        </p>
      )}
      {block.cohen_kappa_pairs.length > 0 && (
        <details>
          <summary>{t('report.agreement.pairs')}</summary>
          <table className="assignments report-table">
            <thead>
              <tr>
                <th scope="col">{t('report.pair')}</th>
                <th scope="col">{t('report.agreement.cohen_kappa')}</th>
                <th scope="col">{t('report.agreement.unitsColumn')}</th>
              </tr>
            </thead>
            <tbody>
              {block.cohen_kappa_pairs.map((pair) => (
                <tr key={pair.annotators.join('|')}>
                  <th scope="row">{pair.annotators.join(' · ')}</th>
                  <td>{f.decimal(pair.value)}</td>
                  <td>{f.count(pair.n_units)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </>
  );
}

export function AgreementTables({ report, f }: { report: StudyReport; f: Formatters }) {
  const { t } = useTranslation();
  const agreement = report.agreement;
  // Why there is nothing to compare: nobody's work, one annotator's, or annotators who
  // never share a key.
  let empty: string | null = null;
  if (agreement.coders.length === 0) {
    return <NoRatings report={report} testId="agreement-empty" />;
  } else if (agreement.coders.length === 1) {
    empty = t('report.empty.oneAnnotator', { name: agreement.coders[0] });
  } else if (agreement.labels.overall.krippendorff_alpha.n_units === 0) {
    empty = t('report.empty.noSharedKey');
  }
  if (empty !== null) {
    return (
      <p className="muted" data-testid="agreement-empty">
        {empty}
      </p>
    );
  }
  return (
    <div className="stack">
      <p className="muted" data-testid="agreement-note">
        {t('report.agreement.note', {
          coders: agreement.coders.join(', '),
          replicates: agreement.bootstrap_replicates,
          seed: agreement.bootstrap_seed,
        })}
      </p>
      <AgreementBlockTable
        block={agreement.labels}
        caption={t('report.agreement.labelsCaption')}
        testId="agreement-table"
        f={f}
      />
      <AgreementBlockTable
        block={agreement.binary}
        caption={t('report.agreement.binaryCaption')}
        testId="agreement-binary-table"
        f={f}
      />
    </div>
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
  return (
    <table className="assignments report-table" data-testid="jaccard-table">
      <caption>{t('report.jaccard.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.layerColumn')}</th>
          <th scope="col">{t('report.jaccard.pooled')}</th>
          {jaccard.pairs.map((pair) => (
            <th scope="col" key={pair.annotators.join('|')}>
              {pair.annotators.join(' · ')}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {pooled.map((row) => (
          <tr key={row.layer ?? 'all'}>
            <RowHead layer={row.layer} />
            <td>{t('report.jaccard.cell', { mean: f.decimal(row.mean), count: row.n_keys })}</td>
            {jaccard.pairs.map((pair) => {
              const cell =
                row.layer === null
                  ? pair.overall
                  : pair.layers.find((each) => each.layer === row.layer);
              return (
                <td key={pair.annotators.join('|')}>
                  {cell
                    ? t('report.jaccard.cell', { mean: f.decimal(cell.mean), count: cell.n_keys })
                    : '—'}
                </td>
              );
            })}
          </tr>
        ))}
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
  return (
    <table className="assignments report-table" data-testid="perturbation-table">
      <caption>{t('report.perturbation.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.layerColumn')}</th>
          <th scope="col">{t('report.perturbation.keys')}</th>
          <th scope="col">{t('report.perturbation.first')}</th>
          <th scope="col">{t('report.perturbation.last')}</th>
          <th scope="col">{t('report.perturbation.random')}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.layer ?? 'all'}>
            <RowHead layer={row.layer} />
            <td>{f.count(row.n_keys)}</td>
            <td>
              {row.n_keys === 0 ? t('report.perturbation.notMeasuredShort') : f.decimal(row.first)}
            </td>
            <td>
              {row.n_keys === 0 ? t('report.perturbation.notMeasuredShort') : f.decimal(row.last)}
            </td>
            <td>
              {row.n_keys === 0 ? t('report.perturbation.notMeasuredShort') : f.decimal(row.random)}
            </td>
          </tr>
        ))}
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
  return (
    <table className="assignments report-table" data-testid="gold-coverage-table">
      <caption>{t('report.coverage.goldCaption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.layerColumn')}</th>
          <th scope="col">{t('report.coverage.goldKeys')}</th>
          <th scope="col">{t('report.coverage.covered')}</th>
          <th scope="col">{t('report.coverage.share')}</th>
          <th scope="col">{t('report.coverage.perKey')}</th>
        </tr>
      </thead>
      <tbody>
        {[...gold.layers, gold.overall].map((row) => (
          <tr key={row.layer ?? 'all'}>
            <RowHead layer={row.layer} />
            <td>{f.count(row.n_annotations)}</td>
            <td>{f.count(row.covered)}</td>
            <td data-testid="gold-coverage-share">{f.percent(row.share_covered)}</td>
            <td>{f.twoDecimals(row.mean_patterns_per_key)}</td>
          </tr>
        ))}
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
  return (
    <table className="assignments report-table" data-testid="gold-agreement-table">
      <caption>{t('report.gold.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.gold.annotator')}</th>
          <th scope="col">{t('report.gold.kappa')}</th>
          <th scope="col">{t('report.gold.raw')}</th>
          <th scope="col">{t('report.gold.units')}</th>
          <th scope="col">{t('report.gold.checks')}</th>
          <th scope="col">{t('report.gold.checkAccuracy')}</th>
          <th scope="col">{t('report.gold.checkKappa')}</th>
        </tr>
      </thead>
      <tbody>
        {names.map((name) => {
          const withGold = gold.get(name);
          const check = checks.get(name);
          return (
            <tr key={name} data-annotator={name}>
              <th scope="row">{name}</th>
              <td className="number">{f.decimal(withGold?.kappa)}</td>
              <td className="number">{f.percent(withGold?.raw_agreement)}</td>
              <td>{f.count(withGold?.n_units)}</td>
              <td>{f.count(check?.n_checks ?? 0)}</td>
              <td className="number">{f.percent(check?.raw_agreement)}</td>
              <td className="number">{f.decimal(check?.kappa)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
