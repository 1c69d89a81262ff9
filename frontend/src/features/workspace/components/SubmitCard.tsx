import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/**
 * Submit (and move to the next key), or for a submitted key Reopen and Next; while the
 * submit waits for the queue, says so. `children` is the card's notice.
 */
export function SubmitCard({
  submitted,
  advancing,
  waiting,
  onSubmit,
  onReopen,
  children,
}: {
  submitted: boolean;
  advancing: boolean;
  /** The submit waits for writes the server does not have yet. */
  waiting: boolean;
  onSubmit: () => void;
  onReopen: () => void;
  children?: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <section className="card submit-card">
      {submitted ? (
        <>
          <p>{t('workspace.submittedHint')}</p>
          <div className="composer-actions">
            <button type="button" onClick={onReopen}>
              {t('workspace.reopen')}
            </button>
            <button type="button" className="primary" onClick={onSubmit} disabled={advancing}>
              {t('workspace.next')}
            </button>
          </div>
        </>
      ) : (
        <button
          type="button"
          className="primary"
          onClick={onSubmit}
          disabled={advancing}
          aria-keyshortcuts="Control+Enter"
        >
          {t('workspace.submit')}
        </button>
      )}
      {advancing && waiting && <p className="muted">{t('workspace.submitWaiting')}</p>}
      {children}
    </section>
  );
}
