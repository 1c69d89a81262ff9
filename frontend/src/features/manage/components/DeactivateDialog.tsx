import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AdminAnnotator } from '../../../api/types';

/**
 * Asks whether the drafts go along, and says what the replacement will see either way.
 * Off by default: annotators are blind to each other's work until a curator reviews it.
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
  const deactivating = useMutation({
    mutationFn: () => api.admin.deactivate(annotator.id, replacement.id, transferDrafts),
    onSuccess: onDone,
  });
  // Still busy once done: the dialog is on its way out.
  const busy = deactivating.isPending || deactivating.isSuccess;
  const error = deactivating.isError ? errorMessage(deactivating.error, t) : null;
  const firstRef = useRef<HTMLInputElement>(null);
  const names = { name: annotator.username, target: replacement.username };
  const headingId = `deactivate-heading-${annotator.id}`;

  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    firstRef.current?.focus();
    return () => previous?.focus?.();
  }, []);

  const confirm = () => deactivating.mutate();

  return (
    // The backdrop only catches a click outside the dialog and an Escape from inside it;
    // the dialog's own buttons are how a keyboard answers it.
    <div
      className="overlay"
      role="presentation"
      onClick={(event) => {
        if (event.target === event.currentTarget) onCancel();
      }}
      onKeyDown={(event) => {
        if (event.key === 'Escape') onCancel();
      }}
    >
      <div
        className="dialog card stack"
        role="dialog"
        aria-modal="true"
        aria-labelledby={headingId}
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
          <button type="button" disabled={busy} onClick={confirm}>
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
