import { useMutation } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { KeyFlag, KeyFlagReason } from '../../../api/types';
import { Modal } from '../../../components/Modal';

export const FLAG_REASONS: readonly KeyFlagReason[] = [
  'unclear',
  'tokenization',
  'offensive',
  'other',
];

/**
 * The annotator's own flag on the key (a problem with the key itself, for the
 * curators): what it is now, and a button (and the `f` key) that opens a dialog to
 * set, change or remove it.
 */
export function KeyFlagControl({
  keyId,
  initial,
  open,
  onOpen,
  onClose,
  characterKeys,
}: {
  keyId: number;
  initial: KeyFlag | null;
  open: boolean;
  onOpen: () => void;
  onClose: () => void;
  characterKeys: boolean;
}) {
  const { t } = useTranslation();
  const [flag, setFlag] = useState<KeyFlag | null>(initial);
  return (
    <>
      <button
        type="button"
        onClick={onOpen}
        aria-keyshortcuts={characterKeys ? 'f' : undefined}
        aria-describedby="key-flag-state"
      >
        {t('flag.open')}
      </button>
      <span id="key-flag-state" data-testid="key-flag-state" className="muted">
        {flag ? t('flag.flagged', { reason: t(`flag.reasons.${flag.reason}`) }) : t('flag.none')}
      </span>
      {open && (
        <KeyFlagDialog
          keyId={keyId}
          flag={flag}
          onClose={onClose}
          onDone={(next) => {
            setFlag(next);
            onClose();
          }}
        />
      )}
    </>
  );
}

function KeyFlagDialog({
  keyId,
  flag,
  onClose,
  onDone,
}: {
  keyId: number;
  flag: KeyFlag | null;
  onClose: () => void;
  onDone: (flag: KeyFlag | null) => void;
}) {
  const { t } = useTranslation();
  const [reason, setReason] = useState<KeyFlagReason | null>(flag?.reason ?? null);
  const [note, setNote] = useState(flag?.note ?? '');
  // What is wrong, and with what: a missing reason or note goes once it is given.
  const [error, setError] = useState<{ about: 'reason' | 'note' | 'server'; text: string } | null>(
    null,
  );
  const firstRef = useRef<HTMLInputElement>(null);
  const onServerError = (failure: unknown) =>
    setError({ about: 'server', text: errorMessage(failure, t) });
  const flagging = useMutation({
    mutationFn: (body: { reason: KeyFlagReason; note: string }) => api.flagKey(keyId, body),
    onSuccess: onDone,
    onError: onServerError,
  });
  const unflagging = useMutation({
    mutationFn: () => api.unflagKey(keyId),
    onSuccess: () => onDone(null),
    onError: onServerError,
  });
  const busy = flagging.isPending || unflagging.isPending;

  function save() {
    if (!reason) return setError({ about: 'reason', text: t('flag.reasonNeeded') });
    if (reason === 'other' && !note.trim()) {
      return setError({ about: 'note', text: t('flag.noteNeeded') });
    }
    flagging.mutate({ reason, note });
  }

  return (
    <Modal labelledBy="key-flag-heading" onClose={onClose} initialFocus={firstRef}>
      <h2 id="key-flag-heading">{t('flag.heading')}</h2>
      <p className="muted">{t('flag.hint')}</p>
      <fieldset>
        <legend>{t('flag.reason')}</legend>
        {FLAG_REASONS.map((value, index) => (
          <label key={value} className="radio-row">
            <input
              ref={index === 0 ? firstRef : undefined}
              type="radio"
              name="key-flag-reason"
              value={value}
              checked={reason === value}
              onChange={() => {
                setReason(value);
                if (error?.about !== 'server') setError(null);
              }}
            />{' '}
            {t(`flag.reasons.${value}`)}
          </label>
        ))}
      </fieldset>
      <label htmlFor="key-flag-note">{t('flag.note')}</label>
      <textarea
        id="key-flag-note"
        value={note}
        maxLength={20000}
        rows={3}
        onChange={(event) => {
          setNote(event.target.value);
          if (error?.about === 'note') setError(null);
        }}
      />
      {error && (
        <p role="alert" className="alert">
          {error.text}
        </p>
      )}
      <div className="composer-actions">
        <button type="button" className="primary" onClick={save} disabled={busy}>
          {t('flag.save')}
        </button>
        {flag && (
          <button type="button" onClick={() => unflagging.mutate()} disabled={busy}>
            {t('flag.remove')}
          </button>
        )}
        <button type="button" onClick={onClose}>
          {t('flag.cancel')}
        </button>
      </div>
    </Modal>
  );
}
