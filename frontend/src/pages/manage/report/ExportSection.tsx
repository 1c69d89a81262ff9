import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api, urls } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { ExportFormat, ExportJob } from '../../../api/types';
import { ProgressBar } from '../../../components/ProgressBar';

export const FORMATS: readonly ExportFormat[] = ['jsonl', 'csv', 'parquet'];
/** Up to this many keys a direct (streamed) download is offered; above, a job. */
export const DIRECT_EXPORT_MAX_KEYS = 5_000;
export const EXPORT_POLL_MS = 1_000;

const FINISHED = new Set<ExportJob['status']>(['done', 'failed']);

/** JSONL / CSV / Parquet: direct links for small studies, and a background job. */
export function ExportSection({ studyId, keyCount }: { studyId: number; keyCount: number }) {
  const { t } = useTranslation();
  const direct = keyCount <= DIRECT_EXPORT_MAX_KEYS;
  const [job, setJob] = useState<ExportJob | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  // Poll the job about once a second until it is done or failed.
  const jobId = job?.id;
  const jobFinished = job ? FINISHED.has(job.status) : true;
  useEffect(() => {
    if (jobId === undefined || jobFinished) return;
    let stopped = false;
    timer.current = setTimeout(async () => {
      try {
        const next = await api.admin.exportJob(jobId);
        if (!stopped) {
          setJob(next);
          setError(null);
        }
      } catch (failure) {
        if (!stopped) {
          setError(errorMessage(failure, t));
          // keep polling: a failed poll is not a failed export
          setJob((current) => (current ? { ...current } : current));
        }
      }
    }, EXPORT_POLL_MS);
    return () => {
      stopped = true;
      if (timer.current) clearTimeout(timer.current);
    };
  }, [job, jobId, jobFinished, t]);

  async function prepare(format: ExportFormat) {
    setBusy(true);
    setError(null);
    try {
      setJob(await api.admin.createExport(studyId, format));
    } catch (failure) {
      setError(errorMessage(failure, t));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="card stack" data-testid="export-section">
      <h3>{t('report.export.heading')}</h3>
      <p className="muted">{t('report.export.tables')}</p>
      {direct ? (
        <p className="download-row">
          <span>{t('report.export.direct')}</span>
          {FORMATS.map((format) => (
            <a key={format} href={urls.export(studyId, format)} download className="button-link">
              {t(`report.export.formats.${format}`)}
            </a>
          ))}
        </p>
      ) : (
        <p className="muted">{t('report.export.tooLarge', { count: keyCount })}</p>
      )}
      <p className="download-row">
        <span>{t('report.export.prepare')}</span>
        {FORMATS.map((format) => (
          <button
            key={format}
            type="button"
            disabled={busy}
            onClick={() => void prepare(format)}
            aria-label={t('report.export.prepareNamed', { format: t(`report.export.formats.${format}`) })}
          >
            {t(`report.export.formats.${format}`)}
          </button>
        ))}
      </p>
      {job && (
        <div className="export-job" data-testid="export-job" data-status={job.status}>
          <div className="progress-cell">
            <ProgressBar
              value={job.keys_done}
              max={job.keys_total}
              label={t('report.export.progressLabel', { format: t(`report.export.formats.${job.format}`) })}
            />
            <span className="progress-text" data-testid="export-progress">
              {t('report.export.progress', {
                done: job.keys_done,
                total: job.keys_total,
                status: t(`report.export.status.${job.status}`),
              })}
            </span>
          </div>
          {job.status === 'done' && (
            <a href={job.download_url ?? urls.exportDownload(job.id)} download data-testid="export-download">
              {t('report.export.download', { format: t(`report.export.formats.${job.format}`) })}
            </a>
          )}
          {job.status === 'failed' && (
            <p role="alert" className="alert">
              {job.error || t('report.export.failed')}
            </p>
          )}
        </div>
      )}
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
    </div>
  );
}
