import { useMutation } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AdminAnnotator, AnnotatorWithLink } from '../../../api/types';

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
export function NewPasswordLink({
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
