import { skipToken, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api, urls } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { ExportFormat, ExportJob } from '../../../api/types';
import { ProgressBar } from '../../../components/ProgressBar';
import { reportKeys } from '../api/queryKeys';

export const FORMATS: readonly ExportFormat[] = ['jsonl', 'csv', 'parquet'];
/** Up to this many keys a direct (streamed) download is offered; above, a job. */
export const DIRECT_EXPORT_MAX_KEYS = 5_000;
export const EXPORT_POLL_MS = 1_000;

const FINISHED = new Set<ExportJob['status']>(['done', 'failed']);

/** JSONL / CSV / Parquet: direct links for small studies, and a background job. */
export function ExportSection({ studyId, keyCount }: { studyId: number; keyCount: number }) {
  const { t } = useTranslation();
  const direct = keyCount <= DIRECT_EXPORT_MAX_KEYS;
  const queryClient = useQueryClient();
  const [jobId, setJobId] = useState<number | null>(null);

  // The job as created, then polled about once a second until it is done or failed;
  // a failed poll is not a failed export, so polling goes on after one.
  const query = useQuery({
    queryKey: reportKeys.exportJob(jobId),
    queryFn: jobId === null ? skipToken : () => api.admin.exportJob(jobId),
    // The job's state comes from the polls alone, the first a second after it was made.
    staleTime: Infinity,
    refetchInterval: (q) => {
      const job = q.state.data;
      return job && !FINISHED.has(job.status) ? EXPORT_POLL_MS : false;
    },
  });
  const job = query.data;
  const pollError = query.isError ? errorMessage(query.error, t) : null;

  const prepare = useMutation({
    mutationFn: (format: ExportFormat) => api.admin.createExport(studyId, format),
    onSuccess: (created) => {
      queryClient.setQueryData(reportKeys.exportJob(created.id), created);
      setJobId(created.id);
    },
  });
  const busy = prepare.isPending;
  const error = prepare.isError ? errorMessage(prepare.error, t) : null;

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
            onClick={() => prepare.mutate(format)}
            aria-label={t('report.export.prepareNamed', {
              format: t(`report.export.formats.${format}`),
            })}
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
              label={t('report.export.progressLabel', {
                format: t(`report.export.formats.${job.format}`),
              })}
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
            <a
              href={job.download_url ?? urls.exportDownload(job.id)}
              download
              data-testid="export-download"
            >
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
      {(error ?? pollError) && (
        <p role="alert" className="alert">
          {error ?? pollError}
        </p>
      )}
    </div>
  );
}
