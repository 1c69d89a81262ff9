import type { TFunction } from 'i18next';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';

import type { CausalJob } from '../../../api/causal';
import { answerOf, promptsOf, resolvedCount } from '../lib/params';

/**
 * The study's probes, newest first: kind, what was asked, status (a failed one with its
 * reason), when it was asked; a button opens one below.
 */
export function JobList({
  jobs,
  selected,
  onOpen,
}: {
  jobs: readonly CausalJob[];
  selected: number | null;
  onOpen: (job: CausalJob) => void;
}) {
  const { t, i18n } = useTranslation();
  const dates = useMemo(
    () => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }),
    [i18n.language],
  );
  if (jobs.length === 0) {
    return (
      <p className="muted" data-testid="causal-jobs" data-count={0}>
        {t('causal.jobs.none')}
      </p>
    );
  }
  const columns = {
    kind: t('causal.jobs.kind'),
    asked: t('causal.jobs.asked'),
    status: t('causal.jobs.status'),
    created: t('causal.jobs.created'),
  };
  return (
    <table className="assignments report-table causal-jobs" data-testid="causal-jobs">
      <thead>
        <tr>
          <th scope="col">{t('causal.jobs.job')}</th>
          <th scope="col">{columns.kind}</th>
          <th scope="col">{columns.asked}</th>
          <th scope="col">{columns.status}</th>
          <th scope="col">{columns.created}</th>
          <td />
        </tr>
      </thead>
      <tbody>
        {jobs.map((job) => {
          const kind = t(`causal.kinds.${job.kind}`);
          return (
            <tr
              key={job.id}
              data-job={job.id}
              data-status={job.status}
              className={selected === job.id ? 'selected' : undefined}
            >
              <th scope="row">{t('causal.jobs.number', { id: job.id })}</th>
              <td data-label={columns.kind}>{kind}</td>
              <td data-label={columns.asked} className="asked">
                {asked(job, t)}
              </td>
              <td data-label={columns.status}>
                {/* One box, so that a phone's card keeps the badge and the reason together. */}
                <span>
                  <span
                    className={`status-badge run-${job.status}`}
                    data-testid="causal-job-status"
                    data-status={job.status}
                  >
                    {t(`causal.jobs.statuses.${job.status}`)}
                  </span>
                  {job.status === 'failed' && job.error && (
                    <span className="job-error" data-testid="causal-job-error">
                      {' '}
                      {job.error}
                    </span>
                  )}
                </span>
              </td>
              <td data-label={columns.created}>
                <span>
                  <time dateTime={job.created_at}>{dates.format(new Date(job.created_at))}</time>
                  {job.created_by && <span className="muted"> · {job.created_by}</span>}
                </span>
              </td>
              <td>
                <button
                  type="button"
                  aria-pressed={selected === job.id}
                  aria-label={t('causal.jobs.openNamed', { id: job.id, kind })}
                  onClick={() => onOpen(job)}
                >
                  {t('causal.jobs.open')}
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** What the job was asked, in a few words. */
function asked(job: CausalJob, t: TFunction): string {
  const params = job.params;
  if (job.kind === 'tracing' || job.kind === 'attribution') {
    const prompts = promptsOf(params);
    const answer = answerOf(params);
    const first = prompts[0] ?? '';
    const prompt: string =
      prompts.length > 1
        ? t('causal.jobs.morePrompts', { first, count: prompts.length - 1 })
        : first;
    return t('causal.jobs.askedPrompt', { prompt, answer: answer ?? '' });
  }
  if (job.kind === 'ablation') {
    const n = resolvedCount(params.group);
    return n === null ? '' : t('causal.keyCount', { count: n });
  }
  const a = resolvedCount(params.group_a);
  const b = resolvedCount(params.group_b);
  if (a === null || b === null) return '';
  const groupA: string = t('causal.keyCount', { count: a });
  const groupB: string = t('causal.keyCount', { count: b });
  return t('causal.jobs.askedGroups', { a: groupA, b: groupB });
}
