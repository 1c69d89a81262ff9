import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { api } from '../../api/client';
import { errorMessage } from '../../api/errorMessage';
import type { Batch, BatchProgress, ProgressCounts } from '../../api/types';
import { Loading } from '../../components/Loading';
import { ProgressBar } from '../../components/ProgressBar';
import { useLoad } from './useLoad';

export function BatchPage() {
  const { studyId, batchId } = useParams();
  const study = Number(studyId);
  const id = Number(batchId);
  const { t } = useTranslation();
  const [batches, reloadBatches] = useLoad(() => api.admin.batches(study), [study]);
  const [progress, reloadProgress] = useLoad(() => api.admin.batchProgress(id), [id]);

  if (batches.kind === 'loading') return <Loading />;
  if (batches.kind === 'failed') {
    return (
      <p role="alert" className="alert">
        {batches.message}
      </p>
    );
  }
  const batch = batches.data.find((each) => each.id === id);
  if (!batch) {
    return (
      <p role="alert" className="alert">
        {t('manage.batchNotFound')}
      </p>
    );
  }
  return (
    <section className="stack">
      <Link to={`/manage/studies/${study}`} className="back-link">
        {t('manage.backToStudy')}
      </Link>
      <h1>{t('manage.batchHeading', { name: batch.name })}</h1>
      <p className="muted">{t('manage.batchKeys', { count: batch.key_count })}</p>
      <div className="card">
        <h2>{t('manage.assignedTo')}</h2>
        {batch.annotators.length === 0 ? (
          <p className="muted">{t('manage.nobodyYet')}</p>
        ) : (
          <ul data-testid="batch-annotators">
            {batch.annotators.map((annotator) => (
              <li key={annotator.id}>{annotator.username}</li>
            ))}
          </ul>
        )}
      </div>
      <AssignForm
        batch={batch}
        onAssigned={() => {
          reloadBatches();
          reloadProgress();
        }}
      />
      <div className="section-head">
        <h2>{t('progress.heading')}</h2>
        <button type="button" onClick={reloadProgress}>
          {t('progress.refresh')}
        </button>
      </div>
      {progress.kind === 'loading' && <Loading />}
      {progress.kind === 'failed' && (
        <p role="alert" className="alert">
          {progress.message}
        </p>
      )}
      {progress.kind === 'loaded' && <ProgressDashboard progress={progress.data} />}
    </section>
  );
}

function AssignForm({ batch, onAssigned }: { batch: Batch; onAssigned: () => void }) {
  const { t } = useTranslation();
  const [annotators] = useLoad(() => api.admin.annotators(), []);
  const [chosen, setChosen] = useState<number[]>([]);
  const [overlap, setOverlap] = useState('1');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  async function assign(event: FormEvent) {
    event.preventDefault();
    setMessage(null);
    if (chosen.length === 0) {
      setMessage({ ok: false, text: t('assignForm.pickSomeone') });
      return;
    }
    setBusy(true);
    try {
      await api.admin.assign(batch.id, { annotators: chosen, overlap: Number(overlap) });
      setMessage({ ok: true, text: t('assignForm.done') });
      setChosen([]);
      onAssigned();
    } catch (failure) {
      setMessage({ ok: false, text: errorMessage(failure, t) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card form-grid" onSubmit={(event) => void assign(event)} aria-labelledby="assign-heading">
      <h2 id="assign-heading">{t('assignForm.heading')}</h2>
      {annotators.kind === 'loading' && <Loading />}
      {annotators.kind === 'failed' && (
        <p role="alert" className="alert">
          {annotators.message}
        </p>
      )}
      {annotators.kind === 'loaded' && (
        <fieldset>
          <legend>{t('assignForm.annotators')}</legend>
          {annotators.data
            .filter((annotator) => annotator.is_active)
            .map((annotator) => (
              <label key={annotator.id} className="checkbox">
                <input
                  type="checkbox"
                  checked={chosen.includes(annotator.id)}
                  onChange={(e) =>
                    setChosen((current) =>
                      e.target.checked
                        ? [...current, annotator.id]
                        : current.filter((each) => each !== annotator.id),
                    )
                  }
                />
                {annotator.username}
              </label>
            ))}
        </fieldset>
      )}
      <div className="field narrow">
        <label htmlFor="assign-overlap">{t('assignForm.overlap')}</label>
        <input
          id="assign-overlap"
          type="number"
          min={1}
          max={Math.max(1, chosen.length)}
          value={overlap}
          onChange={(e) => setOverlap(e.target.value)}
        />
        <span className="muted">{t('assignForm.overlapHint')}</span>
      </div>
      {message && (
        <p role={message.ok ? 'status' : 'alert'} className={message.ok ? 'success' : 'alert'}>
          {message.text}
        </p>
      )}
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {t('assignForm.assign')}
        </button>
      </div>
    </form>
  );
}

function CountsCells({ counts, label }: { counts: ProgressCounts; label: string }) {
  const { t } = useTranslation();
  return (
    <>
      <td>
        <div className="progress-cell">
          <ProgressBar value={counts.submitted} max={counts.keys_assigned} label={label} />
          <span className="progress-text">
            {t('progress.submittedOf', { submitted: counts.submitted, total: counts.keys_assigned })}
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
