import { useMutation } from '@tanstack/react-query';
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
  const signingOut = useMutation({
    mutationFn: logout,
    onSuccess: () => navigate('/login', { replace: true }),
  });
  const error = signingOut.isError
    ? `${t('errors.signOutFailed')} ${errorMessage(signingOut.error, t)}`
    : null;

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
            <button
              type="button"
              onClick={() => signingOut.mutate()}
              disabled={signingOut.isPending}
            >
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
