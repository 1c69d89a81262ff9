import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';

/** The key could not be loaded: why, a retry, and the way home. */
export function KeyLoadFailed({ message, onRetry }: { message: string; onRetry: () => void }) {
  const { t } = useTranslation();
  return (
    <section className="card">
      <p role="alert" className="alert">
        {t('workspace.loadFailed')} {message}
      </p>
      <div className="composer-actions">
        <button type="button" onClick={onRetry}>
          {t('home.retry')}
        </button>
        <Link to="/">{t('notFound.back')}</Link>
      </div>
    </section>
  );
}
