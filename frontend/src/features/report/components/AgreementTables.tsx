import { useTranslation } from 'react-i18next';

import type {
  ReportAgreementBlock,
  ReportAgreementRow,
  ReportEstimate,
  StudyReport,
} from '../../../api/types';
import type { Formatters } from '../lib/format';
import { LayerRows, NoRatings, RowHead } from './LayerRows';

const AGREEMENT_COLUMNS = [
  'krippendorff_alpha',
  'fleiss_kappa',
  'cohen_kappa_mean',
  'raw_agreement',
] as const satisfies ReadonlyArray<keyof ReportAgreementRow>;

function EstimateCell({
  estimate,
  f,
  label,
}: {
  estimate: ReportEstimate;
  f: Formatters;
  label: string;
}) {
  const { t } = useTranslation();
  return (
    <td
      className="number"
      data-label={label}
      title={
        estimate.n_units === 0
          ? t('report.empty.noSharedPrefixInLayer')
          : t('report.agreement.units', { count: estimate.n_units })
      }
    >
      {/* One element: the cell's value beside its label where the table reflows. */}
      <span>
        {f.estimate(estimate)}
        {estimate.few_keys && (
          <span className="few-keys" data-testid="few-keys">
            {t('report.agreement.fewKeys', { count: estimate.n_keys })}
          </span>
        )}
      </span>
    </td>
  );
}

function AgreementBlockTable({
  block,
  caption,
  testId,
  minKeys,
  f,
}: {
  block: ReportAgreementBlock;
  caption: string;
  testId: string;
  /** The fewest keys an interval may rest on without a warning. */
  minKeys: number;
  f: Formatters;
}) {
  const { t } = useTranslation();
  const rows = [...block.layers, block.overall];
  const unitsLabel = t('report.agreement.unitsColumn');
  const fewKeys = rows.some((row) => AGREEMENT_COLUMNS.some((column) => row[column].few_keys));
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
            <th scope="col">{unitsLabel}</th>
          </tr>
        </thead>
        <tbody>
          <LayerRows
            rows={rows}
            isEmpty={(row) => row.krippendorff_alpha.n_units === 0}
            columns={AGREEMENT_COLUMNS.length + 2}
            why={t('report.foldedWhy.noSharedKey')}
            render={(row) => (
              <tr>
                <RowHead layer={row.layer} />
                {AGREEMENT_COLUMNS.map((column) => (
                  <EstimateCell
                    key={column}
                    estimate={row[column]}
                    f={f}
                    label={t(`report.agreement.${column}`)}
                  />
                ))}
                <td data-label={unitsLabel}>{f.count(row.krippendorff_alpha.n_units)}</td>
              </tr>
            )}
          />
        </tbody>
      </table>
      {fewKeys && (
        <p className="muted" data-testid={`${testId}-few-keys`}>
          {t('report.agreement.fewKeysNote', { min: minKeys })}
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
                <th scope="col">{unitsLabel}</th>
              </tr>
            </thead>
            <tbody>
              {block.cohen_kappa_pairs.map((pair) => (
                <tr key={pair.annotators.join('|')}>
                  <th scope="row">{pair.annotators.join(' · ')}</th>
                  <td data-label={t('report.agreement.cohen_kappa')}>{f.decimal(pair.value)}</td>
                  <td data-label={unitsLabel}>{f.count(pair.n_units)}</td>
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
        minKeys={agreement.bootstrap_min_keys}
        f={f}
      />
      <AgreementBlockTable
        block={agreement.binary}
        caption={t('report.agreement.binaryCaption')}
        testId="agreement-binary-table"
        minKeys={agreement.bootstrap_min_keys}
        f={f}
      />
    </div>
  );
}
