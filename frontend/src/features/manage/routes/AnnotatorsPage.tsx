import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AdminAnnotator, AnnotatorWithLink } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../api/queryKeys';

export function AnnotatorsPage() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const annotators = useQuery({
    queryKey: manageKeys.annotators(),
    queryFn: () => api.admin.annotators(),
  });
  const data = annotators.data;
  const reload = () => void queryClient.invalidateQueries({ queryKey: manageKeys.annotators() });
  // The last link made (by a create or a reset), shown once where the admin is looking.
  const [made, setMade] = useState<{ link: AnnotatorWithLink; created: boolean } | null>(null);
  function linkMade(link: AnnotatorWithLink, created: boolean) {
    setMade({ link, created });
    reload();
  }
  return (
    <section className="stack">
      <h1>{t('manage.annotators')}</h1>
      <CreateAnnotator onCreated={(link) => linkMade(link, true)} />
      {made && <LinkNotice link={made.link} created={made.created} />}
      {annotators.isPending && <Loading />}
      {annotators.isError && (
        <p role="alert" className="alert">
          {errorMessage(annotators.error, t)}
        </p>
      )}
      {data !== undefined && (
        <table className="assignments" data-testid="annotators">
          <thead>
            <tr>
              <th scope="col">{t('annotators.username')}</th>
              <th scope="col">{t('annotators.keys')}</th>
              <th scope="col">{t('annotators.active')}</th>
              <th scope="col">{t('annotators.password')}</th>
              <th scope="col">{t('annotators.deactivate')}</th>
            </tr>
          </thead>
          <tbody>
            {data.map((annotator) => (
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
                    <NewPasswordLink
                      annotator={annotator}
                      onMade={(link) => linkMade(link, false)}
                    />
                  )}
                </td>
                <td>
                  {annotator.is_active &&
                    (annotator.keys_assigned > annotator.keys_submitted ? (
                      <Deactivate annotator={annotator} others={data} onDone={reload} />
                    ) : (
                      <DeactivateAlone annotator={annotator} onDone={reload} />
                    ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function CreateAnnotator({ onCreated }: { onCreated: (link: AnnotatorWithLink) => void }) {
  const { t } = useTranslation();
  const inputId = useId();
  const [username, setUsername] = useState('');
  const creating = useMutation({
    mutationFn: (name: string) => api.admin.createAnnotator(name),
    onSuccess: (made) => {
      onCreated(made);
      setUsername('');
    },
  });
  const busy = creating.isPending;
  const error = creating.isError ? errorMessage(creating.error, t) : null;

  function create(event: FormEvent) {
    event.preventDefault();
    creating.mutate(username.trim());
  }

  return (
    <form className="card form-grid" onSubmit={create} aria-labelledby={`${inputId}-heading`}>
      <h2 id={`${inputId}-heading`}>{t('annotators.createHeading')}</h2>
      <div className="field">
        <label htmlFor={inputId}>{t('annotators.newUsername')}</label>
        <input
          id={inputId}
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          required
          maxLength={150}
          value={username}
          onChange={(e) => setUsername(e.target.value)}
        />
      </div>
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" className="primary" disabled={busy || username.trim() === ''}>
          {t('annotators.create')}
        </button>
      </div>
    </form>
  );
}

/** The one-time link just made, to copy and hand to the annotator (nothing is e-mailed). */
export function LinkNotice({ link, created }: { link: AnnotatorWithLink; created: boolean }) {
  const { t, i18n } = useTranslation();
  const inputId = useId();
  const [copied, setCopied] = useState(false);
  const ref = useRef<HTMLParagraphElement>(null);
  const url = `${window.location.origin}${link.link.path}`;
  const names = {
    name: link.annotator.username,
    expires: new Intl.DateTimeFormat(i18n.language, {
      dateStyle: 'medium',
      timeStyle: 'short',
    }).format(new Date(link.link.expires_at)),
  };

  useEffect(() => {
    ref.current?.focus();
  }, [link]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(url);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin): the link is selectable in its field.
      setCopied(false);
    }
  }

  return (
    <div className="card stack" data-testid="password-link">
      <p role="status" tabIndex={-1} ref={ref} className="success">
        {created ? t('annotators.created', names) : t('annotators.linkMade', names)}
      </p>
      <div className="inline-fields">
        <label htmlFor={inputId} className="visually-hidden">
          {t('annotators.linkLabel', names)}
        </label>
        <input
          id={inputId}
          readOnly
          value={url}
          size={Math.min(url.length, 80)}
          onFocus={(e) => e.target.select()}
        />
        <button type="button" onClick={() => void copy()}>
          {t('annotators.copy')}
        </button>
        {copied && <span className="muted">{t('annotators.copied')}</span>}
      </div>
    </div>
  );
}

/** A reset: asks first, since the annotator's current password stops working at once. */
function NewPasswordLink({
  annotator,
  onMade,
}: {
  annotator: AdminAnnotator;
  onMade: (link: AnnotatorWithLink) => void;
}) {
  const { t } = useTranslation();
  const [asking, setAsking] = useState(false);
  const making = useMutation({
    mutationFn: () => api.admin.passwordLink(annotator.id),
    onSuccess: (link) => {
      onMade(link);
      setAsking(false);
    },
  });
  const busy = making.isPending;
  const error = making.isError ? errorMessage(making.error, t) : null;
  const names = { name: annotator.username };

  if (!asking) {
    return (
      <button
        type="button"
        onClick={() => setAsking(true)}
        aria-label={t('annotators.newLinkNamed', names)}
      >
        {t('annotators.newLink')}
      </button>
    );
  }
  return (
    <div className="stack">
      <p>{t('annotators.confirmNewLink', names)}</p>
      <div className="inline-fields">
        <button type="button" disabled={busy} onClick={() => making.mutate()}>
          {t('annotators.newLinkNamed', names)}
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

/** An annotator with no unfinished key: nothing to hand over, so no replacement. */
function DeactivateAlone({ annotator, onDone }: { annotator: AdminAnnotator; onDone: () => void }) {
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
