import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { api } from '../../../api/client';
import type { ReportQuery } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { StudyReport } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../../manage/api/queryKeys';
import { reportKeys } from '../api/queryKeys';
import { ExportSection } from '../components/ExportSection';
import { ReportFilters } from '../components/ReportFilters';
import { ReportBody } from '../components/ReportBody';

export const DEFAULT_QUERY: ReportQuery = {
  annotators: null,
  layers: null,
  submittedOnly: true,
  goldAsCoder: false,
};

/** The annotators a report names (its per-annotator figures and its coders). */
export function annotatorsOf(report: StudyReport): string[] {
  // Gold counted as a coder is no annotator to filter by.
  const gold = report.agreement.gold_as_coder ? report.agreement.gold_coder : null;
  const names = new Set<string>(report.agreement.coders.filter((name) => name !== gold));
  for (const block of report.figure2.per_annotator) names.add(block.annotator);
  return [...names].sort((a, b) => a.localeCompare(b));
}

export function ReportPage() {
  const { studyId } = useParams();
  const id = Number(studyId);
  const { t } = useTranslation();
  const study = useQuery({ queryKey: manageKeys.study(id), queryFn: () => api.admin.study(id) });
  const [query, setQuery] = useState<ReportQuery>(DEFAULT_QUERY);
  // The report on screen stays there while the next one (other filters) loads.
  const report = useQuery({
    queryKey: reportKeys.report(id, query),
    queryFn: () => api.admin.report(id, query),
    placeholderData: keepPreviousData,
  });
  // The last report answered, still shown under the message when the next one fails; and
  // every annotator seen in a report of this study: the first (unfiltered) report names
  // them all, and a filter must not make the others disappear from the choice.
  const [last, setLast] = useState<StudyReport | null>(null);
  const [knownAnnotators, setKnownAnnotators] = useState<string[]>([]);
  if (report.data !== undefined && !report.isPlaceholderData && report.data !== last) {
    const data = report.data;
    setLast(data);
    setKnownAnnotators((known) => [...new Set([...known, ...annotatorsOf(data)])].sort());
  }

  if (study.data === undefined) {
    return study.isError ? (
      <p role="alert" className="alert">
        {errorMessage(study.error, t)}
      </p>
    ) : (
      <Loading />
    );
  }
  const shown = report.data ?? last;
  return (
    <section className="stack report">
      <Link to={`/manage/studies/${id}`} className="back-link">
        {t('manage.backToStudy')}
      </Link>
      <h1>{t('report.heading', { name: study.data.name })}</h1>
      <p className="link-row">
        <Link to={`/manage/studies/${id}/annotators`} data-testid="annotator-table-link">
          {t('report.annotatorTable')}
        </Link>
        <Link to={`/manage/studies/${id}/causal`} data-testid="causal-link">
          {t('causal.open')}
        </Link>
      </p>
      <ReportFilters
        study={study.data}
        annotators={knownAnnotators}
        value={query}
        busy={report.isFetching}
        onApply={setQuery}
      />
      {report.isFetching && <Loading />}
      {report.isError && (
        <p role="alert" className="alert">
          {errorMessage(report.error, t)}
        </p>
      )}
      {shown && <ReportBody report={shown} studyId={id} query={query} />}
      <h2>{t('report.data')}</h2>
      <ExportSection studyId={id} keyCount={study.data.key_count} />
    </section>
  );
}
