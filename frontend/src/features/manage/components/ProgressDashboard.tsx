import { useTranslation } from 'react-i18next';

import type { BatchProgress, ProgressCounts } from '../../../api/types';
import { ProgressBar } from '../../../components/ProgressBar';

export function CountsCells({ counts, label }: { counts: ProgressCounts; label: string }) {
  const { t } = useTranslation();
  return (
    <>
      <td>
        <div className="progress-cell">
          <ProgressBar value={counts.submitted} max={counts.keys_assigned} label={label} />
          <span className="progress-text">
            {t('progress.submittedOf', {
              submitted: counts.submitted,
              total: counts.keys_assigned,
            })}
          </span>
        </div>
      </td>
      <td>{counts.draft}</td>
      <td>{counts.new}</td>
    </>
  );
}

export function ProgressDashboard({ progress }: { progress: BatchProgress }) {
  const { t } = useTranslation();
  const head = (first: string) => (
    <thead>
      <tr>
        <th scope="col">{first}</th>
        <th scope="col">{t('progress.submitted')}</th>
        <th scope="col">{t('progress.draft')}</th>
        <th scope="col">{t('progress.new')}</th>
      </tr>
    </thead>
  );
  return (
    <div className="stack" data-testid="batch-progress">
      <p>
        {t('progress.overlap', {
          min: progress.annotators_per_key_min,
          max: progress.annotators_per_key_max,
          keys: progress.keys_total,
        })}
      </p>
      <table className="assignments">
        <caption>{t('progress.perAnnotator')}</caption>
        {head(t('progress.annotator'))}
        <tbody>
          <tr>
            <th scope="row">{t('progress.total')}</th>
            <CountsCells counts={progress.total} label={t('progress.total')} />
          </tr>
          {progress.per_annotator.map((row) => (
            <tr key={row.annotator_id} data-testid="progress-annotator">
              <th scope="row">
                {row.username}
                {!row.is_active && <span className="muted"> ({t('progress.inactive')})</span>}
              </th>
              <CountsCells counts={row} label={row.username} />
            </tr>
          ))}
        </tbody>
      </table>
      <table className="assignments">
        <caption>{t('progress.perLayer')}</caption>
        {head(t('progress.layer'))}
        <tbody>
          {progress.per_layer.map((row) => (
            <tr key={row.layer} data-testid="progress-layer">
              <th scope="row">{t('progress.layerN', { layer: row.layer })}</th>
              <CountsCells counts={row} label={t('progress.layerN', { layer: row.layer })} />
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
