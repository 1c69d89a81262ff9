import { useMemo, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { errorMessage } from '../../../api/errorMessage';
import type { CompositionJob } from '../../../api/types';
import { isActive, useCompositionJob } from '../hooks/useCompositionJob';
import type { Formatters } from '../lib/format';

/** The server's defaults, until its answer names them (docs/composition.md). */
const DEFAULT_PREFIXES = 4000;
const MAX_PREFIXES = 50_000;

/** A whole number from 1 to `max`, or null for anything else in the box. */
export function parsePrefixes(text: string, max: number): number | null {
  if (!/^\d+$/.test(text.trim())) return null;
  const n = Number(text.trim());
  return n >= 1 && n <= max ? n : null;
}

/** When the job reached its state: queued when made, running when started, else finished. */
function stateTime(job: CompositionJob): string {
  if (job.status === 'queued') return job.created_at;
  if (job.status === 'running') return job.started_at ?? job.created_at;
  return job.finished_at ?? job.started_at ?? job.created_at;
}

/**
 * The §5 analysis as a job: its latest state (polled while queued or running) and a form
 * for a new one over a slice of another size. The button waits while a job is queued or
 * running; the server refuses a second one anyway (`composition_refused`).
 */
export function CompositionJobPanel({ studyId, f }: { studyId: number; f: Formatters }) {
  const { t, i18n } = useTranslation();
  const { status, start } = useCompositionJob(studyId);
  const dates = useMemo(
    () => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }),
    [i18n.language],
  );
  const [text, setText] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const job = status.data?.job ?? null;
  const max = status.data?.max_prefixes ?? MAX_PREFIXES;
  // The box shows the server's default until someone types.
  const value = text ?? String(status.data?.default_prefixes ?? DEFAULT_PREFIXES);
  const active = isActive(job);
  const busy = start.isPending || active;
  const refused = start.isError ? errorMessage(start.error, t) : null;
  const pollError = status.isError ? errorMessage(status.error, t) : null;

  function run(event: FormEvent) {
    event.preventDefault();
    const prefixes = parsePrefixes(value, max);
    if (prefixes === null) {
      setProblem(t('report.composition.job.invalid', { max: f.count(max) }));
      return;
    }
    setProblem(null);
    start.mutate(prefixes);
  }

  return (
    <div className="card stack composition-job" data-testid="composition-job">
      <h3>{t('report.composition.job.heading')}</h3>
      <p
        role="status"
        data-testid="composition-job-status"
        data-status={job?.status ?? 'none'}
        className={job?.status === 'done' ? 'success' : undefined}
      >
        {job
          ? t(`report.composition.job.status.${job.status}`, {
              time: dates.format(new Date(stateTime(job))),
              prefixes: f.count(job.prefixes),
            })
          : status.isSuccess
            ? t('report.composition.job.none')
            : null}
      </p>
      {job?.status === 'failed' && (
        <p role="alert" className="alert" data-testid="composition-job-error">
          {job.error || t('report.composition.job.failed')}
        </p>
      )}
      <form aria-label={t('report.composition.job.form')} noValidate onSubmit={run}>
        <div className="inline-fields">
          <div className="field">
            <label htmlFor="composition-prefixes">{t('report.composition.job.prefixes')}</label>
            <input
              id="composition-prefixes"
              type="number"
              inputMode="numeric"
              min={1}
              max={max}
              step={1}
              value={value}
              aria-invalid={problem !== null}
              aria-describedby="composition-prefixes-hint"
              onChange={(event) => {
                setText(event.target.value);
                setProblem(null);
              }}
            />
          </div>
          <button type="submit" className="primary" disabled={busy}>
            {t('report.composition.job.run')}
          </button>
        </div>
        <p id="composition-prefixes-hint" className="muted">
          {active
            ? t('report.composition.job.busy')
            : t('report.composition.job.hint', { max: f.count(max) })}
        </p>
      </form>
      {(problem ?? refused ?? pollError) && (
        <p role="alert" className="alert" data-testid="composition-job-problem">
          {problem ?? refused ?? pollError}
        </p>
      )}
    </div>
  );
}
