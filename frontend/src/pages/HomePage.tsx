import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, Navigate } from 'react-router-dom';

import { api, isApiError } from '../api/client';
import { errorMessage } from '../api/errorMessage';
import type { Assignment } from '../api/types';
import { useAuth } from '../auth/AuthContext';
import { AssignmentTable } from '../components/AssignmentTable';
import { Loading } from '../components/Loading';

type State =
  | { kind: 'loading' }
  | { kind: 'failed'; message: string }
  | { kind: 'loaded'; assignments: Assignment[] };

/** The annotator's home: their own assignments and how far along each one is. */
export function HomePage() {
  const { user } = useAuth();
  const { t } = useTranslation();
  // Staff land on the management screens; the API would answer 403 to them here.
  if (user?.is_staff && !user.is_annotator) return <Navigate to="/manage" replace />;
  if (user && !user.is_annotator) {
    return (
      <section className="home">
        <h1>{t('home.heading')}</h1>
        <div className="card" data-testid="not-annotator">
          <p>{t('home.notAnnotator')}</p>
        </div>
      </section>
    );
  }
  return <AssignmentsSection />;
}

function AssignmentsSection() {
  const { t } = useTranslation();
  const { refresh, user } = useAuth();
  const [state, setState] = useState<State>({ kind: 'loading' });

  const load = useCallback(
    async (signal?: { cancelled: boolean }) => {
      setState({ kind: 'loading' });
      try {
        const assignments = await api.assignments();
        if (!signal?.cancelled) setState({ kind: 'loaded', assignments });
      } catch (error) {
        if (signal?.cancelled) return;
        // A 403 here usually means the session ended; re-asking who is signed in
        // sends an expired session back to /login.
        if (isApiError(error) && error.status === 403) void refresh();
        setState({ kind: 'failed', message: errorMessage(error, t) });
      }
    },
    [refresh, t],
  );

  useEffect(() => {
    const signal = { cancelled: false };
    void load(signal);
    return () => {
      signal.cancelled = true;
    };
  }, [load]);

  return (
    <section className="home">
      <h1>{t('home.heading')}</h1>
      {user?.is_staff && (
        <p>
          <Link to="/manage">{t('home.manageLink')}</Link>
        </p>
      )}
      {state.kind === 'loading' && <Loading />}
      {state.kind === 'failed' && (
        <div className="card">
          <p role="alert" className="alert">
            {t('home.loadFailed')} {state.message}
          </p>
          <button type="button" onClick={() => void load()}>
            {t('home.retry')}
          </button>
        </div>
      )}
      {state.kind === 'loaded' && state.assignments.length === 0 && (
        <div className="card empty" data-testid="assignments-empty">
          <p>{t('home.empty')}</p>
          <p className="muted">{t('home.emptyHint')}</p>
        </div>
      )}
      {state.kind === 'loaded' && state.assignments.length > 0 && (
        <AssignmentTable assignments={state.assignments} />
      )}
    </section>
  );
}
