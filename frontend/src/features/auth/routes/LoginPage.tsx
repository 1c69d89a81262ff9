import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Navigate, useLocation, useNavigate } from 'react-router-dom';
import type { Location } from 'react-router-dom';

import { errorMessage } from '../../../api/errorMessage';
import { useAuth } from '../../../lib/auth';
import { Loading } from '../../../components/Loading';

// Only paths inside the app: never bounce back to /login or off-site.
function returnPath(state: unknown): string {
  const from = (state as { from?: Location } | null)?.from;
  const path = from?.pathname;
  if (!path || !path.startsWith('/') || path.startsWith('//') || path === '/login') return '/';
  return `${path}${from.search ?? ''}${from.hash ?? ''}`;
}

export function LoginPage() {
  const { t } = useTranslation();
  const { status, user, login } = useAuth();
  const navigate = useNavigate();
  const location = useLocation();
  const baseId = useId();
  const errorId = `${baseId}-error`;
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const signingIn = useMutation({
    mutationFn: login,
    onSuccess: () => navigate(returnPath(location.state), { replace: true }),
    onError: () => setPassword(''),
  });
  // Still submitting once signed in: the page is on its way to where it was asked for.
  const submitting = signingIn.isPending || signingIn.isSuccess;
  const error = signingIn.isError ? errorMessage(signingIn.error, t) || t('login.failed') : null;

  if (status === 'loading') return <Loading />;
  if (user && !submitting) return <Navigate to={returnPath(location.state)} replace />;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    signingIn.mutate({ username: username.trim(), password });
  }

  return (
    <section className="login card" aria-labelledby={`${baseId}-heading`}>
      <h1 id={`${baseId}-heading`}>{t('login.heading')}</h1>
      <p className="muted">{t('login.intro')}</p>
      <form onSubmit={onSubmit}>
        <div className="field">
          <label htmlFor={`${baseId}-username`}>{t('login.username')}</label>
          <input
            id={`${baseId}-username`}
            name="username"
            autoComplete="username"
            autoCapitalize="none"
            spellCheck={false}
            required
            // The page's one task: its first field takes focus, as a sign-in form's should.
            // eslint-disable-next-line jsx-a11y/no-autofocus
            autoFocus
            value={username}
            onChange={(event) => setUsername(event.target.value)}
            aria-describedby={error ? errorId : undefined}
          />
        </div>
        <div className="field">
          <label htmlFor={`${baseId}-password`}>{t('login.password')}</label>
          <input
            id={`${baseId}-password`}
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            aria-describedby={error ? errorId : undefined}
          />
        </div>
        {error && (
          <p id={errorId} role="alert" className="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={submitting}>
          {submitting ? t('login.submitting') : t('login.submit')}
        </button>
      </form>
    </section>
  );
}
