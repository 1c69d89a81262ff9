import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AdminAnnotator } from '../../../api/types';
import { DeactivateDialog } from './DeactivateDialog';

/** An annotator with no unfinished key: nothing to hand over, so no replacement. */
export function DeactivateAlone({
  annotator,
  onDone,
}: {
  annotator: AdminAnnotator;
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const [asking, setAsking] = useState(false);
  const deactivating = useMutation({
    mutationFn: () => api.admin.deactivate(annotator.id, null, false),
    onSuccess: onDone,
  });
  const busy = deactivating.isPending;
  const error = deactivating.isError ? errorMessage(deactivating.error, t) : null;
  const names = { name: annotator.username };
  const confirm = () => deactivating.mutate();

  if (!asking) {
    return (
      <button type="button" onClick={() => setAsking(true)}>
        {t('annotators.deactivateAlone')}
      </button>
    );
  }
  return (
    <div className="stack">
      <p>{t('annotators.confirmDeactivateAlone', names)}</p>
      <div className="inline-fields">
        <button type="button" disabled={busy} onClick={confirm}>
          {t('annotators.confirmDeactivate', names)}
        </button>
        <button type="button" onClick={() => setAsking(false)}>
          {t('annotators.cancel')}
        </button>
      </div>
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
    </div>
  );
}

export function Deactivate({
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
