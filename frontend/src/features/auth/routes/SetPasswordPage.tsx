import { useMutation } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import { useAuth } from '../../../lib/auth';

type LinkState =
  { kind: 'checking' } | { kind: 'valid'; username: string } | { kind: 'invalid'; message: string };

/**
 * The page of a one-time link an admin made (an invitation or a password reset): the
 * person chooses a password, is signed in, and the link is spent.
 */
export function SetPasswordPage() {
  // The link carries its token in the fragment (#uid/token), which never reaches a server.
  const { hash } = useLocation();
  const [uid = '', token = ''] = hash.replace(/^#/, '').split('/');
  const { t } = useTranslation();
  const { refresh } = useAuth();
  const navigate = useNavigate();
  const baseId = useId();
  const [link, setLink] = useState<LinkState>({ kind: 'checking' });
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [tried, setTried] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const setting = useMutation({
    mutationFn: async (chosen: string) => {
      await api.setPassword(uid, token, chosen);
      await refresh();
    },
    onSuccess: () => navigate('/', { replace: true }),
    onError: (failure) => setError(errorMessage(failure, t)),
  });
  // Still submitting once set: the page is on its way home.
  const submitting = setting.isPending || setting.isSuccess;

  useEffect(() => {
    let cancelled = false;
    api.passwordLinkOwner(uid, token).then(
      (owner) => !cancelled && setLink({ kind: 'valid', username: owner.username }),
      (failure: unknown) =>
        !cancelled && setLink({ kind: 'invalid', message: errorMessage(failure, t) }),
    );
    return () => {
      cancelled = true;
    };
  }, [uid, token, t]);

  if (link.kind === 'checking') {
    return (
      <p className="loading" role="status">
        {t('setPassword.checking')}
      </p>
    );
  }
  if (link.kind === 'invalid') {
    return (
      <section className="login card">
        <h1>{t('setPassword.heading')}</h1>
        <p role="alert" className="alert">
          {link.message}
        </p>
      </section>
    );
  }

  const mismatch = tried && repeat !== password ? t('setPassword.mismatch') : null;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setTried(true);
    setError(null);
    if (password !== repeat) return;
    setting.mutate(password);
  }

  const problem = mismatch ?? error;
  return (
    <section className="login card" aria-labelledby={`${baseId}-heading`}>
      <h1 id={`${baseId}-heading`}>{t('setPassword.heading')}</h1>
      <p className="muted">{t('setPassword.intro', { name: link.username })}</p>
      <form noValidate onSubmit={onSubmit}>
        {/* For password managers: the account the new password belongs to. */}
        <input type="hidden" name="username" autoComplete="username" value={link.username} />
        <div className="field">
          <label htmlFor={`${baseId}-password`}>{t('setPassword.password')}</label>
          <input
            id={`${baseId}-password`}
            type="password"
            autoComplete="new-password"
            required
            // The page's one task: its first field takes focus, as a sign-in form's should.
            // eslint-disable-next-line jsx-a11y/no-autofocus
            autoFocus
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={`${baseId}-repeat`}>{t('setPassword.repeat')}</label>
          <input
            id={`${baseId}-repeat`}
            type="password"
            autoComplete="new-password"
            required
            value={repeat}
            onChange={(event) => setRepeat(event.target.value)}
          />
        </div>
        {problem && (
          <p role="alert" className="alert">
            {problem}
          </p>
        )}
        <button type="submit" className="primary" disabled={submitting}>
          {submitting ? t('setPassword.submitting') : t('setPassword.submit')}
        </button>
      </form>
    </section>
  );
}
