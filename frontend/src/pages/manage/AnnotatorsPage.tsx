import { useEffect, useRef, useState } from 'react';
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
  const [asking, setAsking] = useState(false);
  const selectId = `reassign-${annotator.id}`;
  const replacement = candidates.find((other) => String(other.id) === target);

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
      <button type="button" disabled={!replacement} onClick={() => setAsking(true)}>
        {t('annotators.deactivateAndReassign')}
      </button>
      {asking && replacement && (
        <DeactivateDialog
          annotator={annotator}
          replacement={replacement}
          onCancel={() => setAsking(false)}
          onDone={onDone}
        />
      )}
    </div>
  );
}

/**
 * Asks whether the drafts go along, and says what the replacement will see either way.
 * Off by default: annotators are blind to each other's work (DESIGN §4.1).
 */
export function DeactivateDialog({
  annotator,
  replacement,
  onCancel,
  onDone,
}: {
  annotator: AdminAnnotator;
  replacement: AdminAnnotator;
  onCancel: () => void;
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const [transferDrafts, setTransferDrafts] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const firstRef = useRef<HTMLInputElement>(null);
  const names = { name: annotator.username, target: replacement.username };
  const headingId = `deactivate-heading-${annotator.id}`;

  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    firstRef.current?.focus();
    return () => previous?.focus?.();
  }, []);

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await api.admin.deactivate(annotator.id, replacement.id, transferDrafts);
      onDone();
    } catch (failure) {
      setError(errorMessage(failure, t));
      setBusy(false);
    }
  }

  return (
    <div className="overlay" onClick={onCancel}>
      <div
        className="dialog card stack"
        role="dialog"
        aria-modal="true"
        aria-labelledby={headingId}
        onClick={(event) => event.stopPropagation()}
        onKeyDown={(event) => {
          if (event.key === 'Escape') onCancel();
        }}
      >
        <h2 id={headingId}>{t('annotators.dialogHeading', names)}</h2>
        <p>{t('annotators.dialogIntro', names)}</p>
        <label className="checkbox">
          <input
            ref={firstRef}
            type="checkbox"
            checked={transferDrafts}
            onChange={(e) => setTransferDrafts(e.target.checked)}
          />
          {t('annotators.transferDrafts', names)}
        </label>
        <p data-testid="deactivate-outcome">
          {transferDrafts
            ? t('annotators.outcomeTransfer', names)
            : t('annotators.outcomeBlank', names)}
        </p>
        <div className="inline-fields">
          <button type="button" disabled={busy} onClick={() => void confirm()}>
            {t('annotators.confirmDeactivate', names)}
          </button>
          <button type="button" onClick={onCancel}>
            {t('annotators.cancel')}
          </button>
        </div>
        {error && (
          <p role="alert" className="alert">
            {error}
          </p>
        )}
      </div>
    </div>
  );
}
