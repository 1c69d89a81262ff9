import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../api/client';
import { errorMessage } from '../../api/errorMessage';
import type { AdminAnnotator } from '../../api/types';
import { Loading } from '../../components/Loading';
import { useLoad } from './useLoad';

export function AnnotatorsPage() {
  const { t } = useTranslation();
  const [state, reload] = useLoad(() => api.admin.annotators(), []);
  return (
    <section className="stack">
      <h1>{t('manage.annotators')}</h1>
      {state.kind === 'loading' && <Loading />}
      {state.kind === 'failed' && (
        <p role="alert" className="alert">
          {state.message}
        </p>
      )}
      {state.kind === 'loaded' && (
        <table className="assignments" data-testid="annotators">
          <thead>
            <tr>
              <th scope="col">{t('annotators.username')}</th>
              <th scope="col">{t('annotators.keys')}</th>
              <th scope="col">{t('annotators.active')}</th>
              <th scope="col">{t('annotators.deactivate')}</th>
            </tr>
          </thead>
          <tbody>
            {state.data.map((annotator) => (
              <tr key={annotator.id}>
                <th scope="row">{annotator.username}</th>
                <td>
                  {t('progress.submittedOf', {
                    submitted: annotator.keys_submitted,
                    total: annotator.keys_assigned,
                  })}
                </td>
                <td>{annotator.is_active ? t('annotators.yes') : t('annotators.no')}</td>
                <td>
                  {annotator.is_active && (
                    <Deactivate annotator={annotator} others={state.data} onDone={reload} />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Deactivate({
  annotator,
  others,
  onDone,
}: {
  annotator: AdminAnnotator;
  others: AdminAnnotator[];
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const candidates = others.filter((other) => other.is_active && other.id !== annotator.id);
  const [target, setTarget] = useState<string>('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const selectId = `reassign-${annotator.id}`;

  async function run() {
    if (!target) return;
    setBusy(true);
    setError(null);
    try {
      await api.admin.deactivate(annotator.id, Number(target));
      onDone();
    } catch (failure) {
      setError(errorMessage(failure, t));
      setBusy(false);
    }
  }

  return (
    <div className="inline-fields">
      <label htmlFor={selectId} className="visually-hidden">
        {t('annotators.reassignTo', { name: annotator.username })}
      </label>
      <select id={selectId} value={target} onChange={(e) => setTarget(e.target.value)}>
        <option value="">{t('annotators.pick')}</option>
        {candidates.map((other) => (
          <option key={other.id} value={other.id}>
            {other.username}
          </option>
        ))}
      </select>
      <button type="button" disabled={!target || busy} onClick={() => void run()}>
        {t('annotators.deactivateAndReassign')}
      </button>
      {error && (
        <span role="alert" className="alert">
          {error}
        </span>
      )}
    </div>
  );
}
