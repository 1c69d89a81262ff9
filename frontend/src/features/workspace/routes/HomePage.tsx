import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, Navigate } from 'react-router-dom';

import { api, isApiError } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import { useAuth } from '../../../lib/auth';
import { AssignmentTable } from '../components/AssignmentTable';
import { Loading } from '../../../components/Loading';
import { PreparingNotice } from '../../preparing/components/PreparingNotice';
import { usePreparing } from '../../preparing/hooks/usePreparing';
import { workspaceKeys } from '../api/queryKeys';

/** The annotator's home: their own assignments and how far along each one is. */
export function HomePage() {
  const { user } = useAuth();
  const { t } = useTranslation();
  // Staff land on the management screens; the API would answer 403 to them here.
  if (user?.is_staff && !user.is_annotator) return <Navigate to="/manage" replace />;
  // Curators who neither administer nor annotate land on the review.
  if (user?.is_curator && !user.is_annotator) return <Navigate to="/manage/review" replace />;
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
  const query = useQuery({
    queryKey: workspaceKeys.assignments(),
    queryFn: () => api.assignments(),
  });
  const { error } = query;
  // Studies being mined for this annotator: shown instead of an empty list.
  const preparing = usePreparing();
  const waiting = preparing.isPending || (preparing.data?.length ?? 0) > 0;

  // A 403 here usually means the session ended; re-asking who is signed in sends an
  // expired session back to /login.
  useEffect(() => {
    if (isApiError(error) && error.status === 403) void refresh();
  }, [error, refresh]);

  return (
    <section className="home">
      <h1>{t('home.heading')}</h1>
      {user?.is_staff && (
        <p>
          <Link to="/manage">{t('home.manageLink')}</Link>
        </p>
      )}
      {query.isPending && <Loading />}
      {query.isError && (
        <div className="card">
          <p role="alert" className="alert">
            {t('home.loadFailed')} {errorMessage(error, t)}
          </p>
          <button type="button" onClick={() => void query.refetch()}>
            {t('home.retry')}
          </button>
        </div>
      )}
      <PreparingNotice runs={preparing.data ?? []} />
      {query.isSuccess && query.data.length === 0 && !waiting && (
        <div className="card empty" data-testid="assignments-empty">
          <p>{t('home.empty')}</p>
          <p className="muted">{t('home.emptyHint')}</p>
        </div>
      )}
      {query.isSuccess && query.data.length > 0 && <AssignmentTable assignments={query.data} />}
    </section>
  );
}
