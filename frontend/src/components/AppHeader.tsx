import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router-dom';

import { errorMessage } from '../api/errorMessage';
import { useAuth } from '../lib/auth';
import { LanguageSwitcher } from './LanguageSwitcher';
import { markBidiControls } from './patternEditor/tokenDisplay';

export function AppHeader() {
  const { t } = useTranslation();
  const { user, logout } = useAuth();
  const navigate = useNavigate();
  const [signingOut, setSigningOut] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function signOut() {
    setSigningOut(true);
    setError(null);
    try {
      await logout();
      navigate('/login', { replace: true });
    } catch (failure) {
      setError(`${t('errors.signOutFailed')} ${errorMessage(failure, t)}`);
    } finally {
      setSigningOut(false);
    }
  }

  return (
    <header className="app-header">
      <Link to="/" className="brand">
        {t('app.name')}
      </Link>
      <nav aria-label={t('header.mainNavigation')} className="header-actions">
        {user && (user.is_curator || user.is_staff) && (
          <Link to="/manage/review" data-testid="review-link">
            {t('header.review')}
          </Link>
        )}
        {user?.is_staff && (
          // A full page load into Django's own admin, not a client-side route.
          <a href="/admin/">{t('header.djangoAdmin')}</a>
        )}
        <LanguageSwitcher />
        {user && (
          <>
            <span className="current-user" data-testid="current-user">
              {t('header.signedInAs', { name: markBidiControls(user.username) })}
            </span>
            <button type="button" onClick={() => void signOut()} disabled={signingOut}>
              {t('header.signOut')}
            </button>
          </>
        )}
      </nav>
      {error && (
        <p role="alert" className="alert header-alert">
          {error}
        </p>
      )}
    </header>
  );
}
