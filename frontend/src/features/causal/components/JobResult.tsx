import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';

import type { CausalJob } from '../../../api/causal';
import { errorMessage } from '../../../api/errorMessage';
import { Loading } from '../../../components/Loading';
import { useCausalJob } from '../hooks/useCausalJobs';
import type { CausalFormatters } from '../lib/format';
import { readResult } from '../lib/results';
import { AblationView } from './AblationView';
import { AttributionView } from './AttributionView';
import { DissociationView } from './DissociationView';
import { TraceView } from './TraceView';

/**
 * The job opened from the list: its state while it is queued or running (the list's
 * polling moves it on), its reason when it failed, its result's view once it is done.
 */
export function JobResult({
  job,
  f,
  fileBase,
}: {
  job: CausalJob;
  f: CausalFormatters;
  fileBase: string;
}) {
  const { t, i18n } = useTranslation();
  const detail = useCausalJob(job);
  const dates = useMemo(
    () => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }),
    [i18n.language],
  );
  const kind = t(`causal.kinds.${job.kind}`);
  const time = job.finished_at ?? job.started_at ?? job.created_at;
  const read = detail.data ? readResult(detail.data.kind, detail.data.result) : null;
  const base = `${fileBase}-job${job.id}`;

  return (
    <section
      className="stack"
      aria-labelledby="causal-result-heading"
      data-testid="causal-result"
      data-job={job.id}
      data-status={job.status}
    >
      <h2 id="causal-result-heading">{t('causal.result.heading', { id: job.id, kind })}</h2>
      <p role="status" data-testid="causal-result-status">
        {t(`causal.result.status.${job.status}`, { time: dates.format(new Date(time)) })}
      </p>
      {job.status === 'failed' && (
        <p role="alert" className="alert" data-testid="causal-result-error">
          {job.error || t('causal.result.failed')}
        </p>
      )}
      {job.status === 'done' && detail.isPending && <Loading />}
      {detail.isError && (
        <p role="alert" className="alert">
          {errorMessage(detail.error, t)}
        </p>
      )}
      {detail.data && !read && (
        <p className="alert" data-testid="causal-result-unknown">
          {t('causal.result.unknown', { format: String(detail.data.result.format ?? '') })}
        </p>
      )}
      {read?.kind === 'tracing' && <TraceView result={read.result} f={f} fileBase={base} />}
      {read?.kind === 'attribution' && (
        <AttributionView result={read.result} f={f} fileBase={base} />
      )}
      {read?.kind === 'ablation' && <AblationView result={read.result} f={f} fileBase={base} />}
      {read?.kind === 'dissociation' && (
        <DissociationView result={read.result} f={f} fileBase={base} />
      )}
    </section>
  );
}
