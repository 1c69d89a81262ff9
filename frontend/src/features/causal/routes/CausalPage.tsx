import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import type { CausalJob } from '../../../api/causal';
import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../../manage/api/queryKeys';
import { safeFileName } from '../../report/lib/svgExport';
import { JobList } from '../components/JobList';
import { JobResult } from '../components/JobResult';
import { ProbeTabs } from '../components/ProbeForms';
import { useCausalJobs } from '../hooks/useCausalJobs';
import { makeCausalFormatters } from '../lib/format';

/**
 * A study's causal probes (docs/causal.md): a form per probe, the study's jobs
 * (polled while one is queued or running), and the job opened from the list below them; a
 * job just run opens by itself, and its result shows when it is done.
 */
export function CausalPage() {
  const { studyId } = useParams();
  const id = Number(studyId);
  const { t, i18n } = useTranslation();
  const study = useQuery({ queryKey: manageKeys.study(id), queryFn: () => api.admin.study(id) });
  const jobs = useCausalJobs(id);
  const [selected, setSelected] = useState<number | null>(null);
  const f = useMemo(() => makeCausalFormatters(i18n.language), [i18n.language]);

  if (study.data === undefined) {
    return study.isError ? (
      <p role="alert" className="alert">
        {errorMessage(study.error, t)}
      </p>
    ) : (
      <Loading />
    );
  }
  const opened = jobs.data?.find((job) => job.id === selected) ?? null;
  const open = (job: CausalJob) => setSelected(job.id);

  return (
    <section className="stack report causal">
      <Link to={`/manage/studies/${id}`} className="back-link">
        {t('manage.backToStudy')}
      </Link>
      <div className="section-head">
        <h1>{t('causal.heading', { name: study.data.name })}</h1>
        <Link to={`/manage/studies/${id}/report`} data-testid="causal-report-link">
          {t('report.open')}
        </Link>
      </div>
      <p className="muted">{t('causal.intro')}</p>
      <p className="notice" data-testid="causal-note">
        {t('causal.note', { model: study.data.model_name })}
      </p>

      <section className="stack" aria-labelledby="causal-run-heading">
        <h2 id="causal-run-heading">{t('causal.form.heading')}</h2>
        {study.data.is_causal ? (
          <ProbeTabs study={study.data} onStarted={open} />
        ) : (
          <p className="muted" data-testid="causal-encoder">
            {t('causal.encoder')}
          </p>
        )}
      </section>

      <section className="stack" aria-labelledby="causal-jobs-heading">
        <h2 id="causal-jobs-heading">{t('causal.jobs.heading')}</h2>
        {jobs.isPending && <Loading />}
        {jobs.isError && (
          <p role="alert" className="alert">
            {errorMessage(jobs.error, t)}
          </p>
        )}
        {jobs.data && <JobList jobs={jobs.data} selected={selected} onOpen={open} />}
      </section>

      {opened ? (
        <JobResult key={opened.id} job={opened} f={f} fileBase={safeFileName(study.data.name)} />
      ) : (
        jobs.data &&
        jobs.data.length > 0 && (
          <p className="muted" data-testid="causal-result-none">
            {t('causal.result.none')}
          </p>
        )
      )}
    </section>
  );
}
