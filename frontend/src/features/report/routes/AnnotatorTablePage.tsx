import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { api, urls } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AnnotatorTableRow } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { reportKeys } from '../api/queryKeys';
import { DASH, makeFormatters } from '../lib/format';
import type { Formatters } from '../lib/format';

type Column = Exclude<
  keyof AnnotatorTableRow,
  'alpha_units' | 'gold_units' | 'gold_keys' | 'check_kappa'
>;

const COLUMNS: readonly Column[] = [
  'username',
  'keys_done',
  'median_active_seconds',
  'patterns_per_key',
  'coverage',
  'alpha_with_others',
  'kappa_with_gold',
  'raw_agreement_with_gold',
  'checks_n',
  'check_accuracy',
  'flags',
  'quality_flags',
];

/** The admins' table of a study's annotators (`/manage/studies/:id/annotators`). */
export function AnnotatorTablePage() {
  const { studyId } = useParams();
  const id = Number(studyId);
  const { t, i18n } = useTranslation();
  const f = useMemo(() => makeFormatters(i18n.language), [i18n.language]);
  const table = useQuery({
    queryKey: reportKeys.annotatorTable(id),
    queryFn: () => api.admin.annotatorTable(id),
  });

  if (table.data === undefined) {
    return table.isError ? (
      <p role="alert" className="alert">
        {errorMessage(table.error, t)}
      </p>
    ) : (
      <Loading />
    );
  }
  const data = table.data;
  const seconds = (value: number | null) =>
    value === null ? f.count(value) : t('annotatorTable.seconds', { value: f.count(value) });
  return (
    <section className="stack report">
      <Link to={`/manage/studies/${id}`} className="back-link">
        {t('manage.backToStudy')}
      </Link>
      <div className="section-head">
        <h1>{t('annotatorTable.heading', { name: data.study.name })}</h1>
        <a
          href={urls.annotatorTableCsv(id)}
          download
          className="button-link"
          data-testid="annotator-table-csv"
        >
          {t('annotatorTable.downloadCsv')}
        </a>
      </div>
      <p className="muted" data-testid="study-median">
        {t('annotatorTable.studyMedian', { value: seconds(data.study_median_active_seconds) })}
      </p>
      {data.annotators.length === 0 ? (
        <p className="muted" data-testid="annotator-table-empty">
          {t('annotatorTable.empty')}
        </p>
      ) : (
        <table className="assignments report-table" data-testid="annotator-table">
          <caption>{t('annotatorTable.caption')}</caption>
          <thead>
            <tr>
              {COLUMNS.map((column) => (
                <th scope="col" key={column}>
                  {t(`annotatorTable.columns.${column}`)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.annotators.map((row) => (
              <tr key={row.username} data-annotator={row.username}>
                <th scope="row">{row.username}</th>
                <Cells row={row} f={f} seconds={seconds} />
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <details className="card definitions">
        <summary>{t('annotatorTable.definitions')}</summary>
        <dl className="facts">
          {Object.entries(data.definitions).map(([term, text]) => (
            <div key={term} className="definition" data-term={term}>
              <dt>
                {t(`annotatorTable.columns.${term}`, {
                  defaultValue: t(`annotatorTable.quality.${term}`, { defaultValue: term }),
                })}
              </dt>
              <dd>{t(`annotatorTable.definitionTexts.${term}`, { defaultValue: text })}</dd>
            </div>
          ))}
        </dl>
      </details>
    </section>
  );
}

function Cells({
  row,
  f,
  seconds,
}: {
  row: AnnotatorTableRow;
  f: Formatters;
  seconds: (value: number | null) => string;
}) {
  const { t } = useTranslation();
  // Each cell names its column (shown beside it where the table reflows into cards).
  const label = (column: Column) => t(`annotatorTable.columns.${column}`);
  return (
    <>
      <td data-label={label('keys_done')}>{f.count(row.keys_done)}</td>
      <td data-label={label('median_active_seconds')} data-testid="median-active">
        {seconds(row.median_active_seconds)}
      </td>
      <td data-label={label('patterns_per_key')}>{f.twoDecimals(row.patterns_per_key)}</td>
      <td data-label={label('coverage')}>{f.percent(row.coverage)}</td>
      <td className="number" data-label={label('alpha_with_others')}>
        {f.decimal(row.alpha_with_others)}
      </td>
      <td className="number" data-label={label('kappa_with_gold')} data-testid="kappa-with-gold">
        {row.kappa_with_gold === null
          ? f.decimal(row.kappa_with_gold)
          : t('annotatorTable.withKeys', {
              value: f.decimal(row.kappa_with_gold),
              count: row.gold_keys,
            })}
      </td>
      <td className="number" data-label={label('raw_agreement_with_gold')}>
        {f.percent(row.raw_agreement_with_gold)}
      </td>
      <td data-label={label('checks_n')}>{f.count(row.checks_n)}</td>
      <td className="number" data-label={label('check_accuracy')}>
        {f.percent(row.check_accuracy)}
      </td>
      <td data-label={label('flags')}>{f.count(row.flags)}</td>
      <td data-label={label('quality_flags')} data-testid="quality-flags">
        {row.quality_flags.length > 0
          ? row.quality_flags.map((flag) => t(`annotatorTable.quality.${flag}`)).join(', ')
          : DASH}
      </td>
    </>
  );
}
