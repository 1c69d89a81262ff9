import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../api/queryKeys';
import { AssignForm } from '../components/AssignForm';
import { ExtendForm } from '../components/ExtendForm';
import { BatchKeys } from '../components/BatchKeys';
import { ProgressDashboard } from '../components/ProgressDashboard';

export function BatchPage() {
  const { studyId, batchId } = useParams();
  const study = Number(studyId);
  const id = Number(batchId);
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const batches = useQuery({
    queryKey: manageKeys.batches(study),
    queryFn: () => api.admin.batches(study),
  });
  const progress = useQuery({
    queryKey: manageKeys.batchProgress(id),
    queryFn: () => api.admin.batchProgress(id),
  });
  // Kept here, not in the forms: the form that sent the request is replaced once the
  // batch reloads (assigned → the extension form; more annotators → a fresh one).
  const [notice, setNotice] = useState<string | null>(null);
  function done(text: string) {
    setNotice(text);
    for (const queryKey of [
      manageKeys.batches(study),
      manageKeys.batchProgress(id),
      manageKeys.batchKeys(id),
      manageKeys.annotators(),
    ]) {
      void queryClient.invalidateQueries({ queryKey });
    }
  }

  const batch = batches.data?.find((each) => each.id === id);
  // A list from before the batch was made: wait for the fresh one before saying "no such batch".
  if (batches.isPending || (!batch && batches.isFetching)) return <Loading />;
  if (batches.data === undefined) {
    return (
      <p role="alert" className="alert">
        {errorMessage(batches.error, t)}
      </p>
    );
  }
  if (!batch) {
    return (
      <p role="alert" className="alert">
        {t('manage.batchNotFound')}
      </p>
    );
  }
  return (
    <section className="stack">
      <Link to={`/manage/studies/${study}`} className="back-link">
        {t('manage.backToStudy')}
      </Link>
      <h1>{t('manage.batchHeading', { name: batch.name })}</h1>
      <p className="muted">{t('manage.batchKeys', { count: batch.key_count })}</p>
      <div className="card">
        <h2>{t('manage.assignedTo')}</h2>
        {batch.annotators.length === 0 ? (
          <p className="muted">{t('manage.nobodyYet')}</p>
        ) : (
          <ul data-testid="batch-annotators">
            {batch.annotators.map((annotator) => (
              <li key={annotator.id}>{annotator.username}</li>
            ))}
          </ul>
        )}
      </div>
      {batch.annotators.length === 0 ? (
        <AssignForm batch={batch} onAssigned={done} />
      ) : progress.data !== undefined ? (
        <ExtendForm
          key={`${batch.annotators.length}-${progress.data.annotators_per_key_min}`}
          batch={batch}
          currentOverlap={progress.data.annotators_per_key_min}
          onExtended={done}
        />
      ) : null}
      {notice && (
        <p role="status" className="success" data-testid="assign-done">
          {notice}
        </p>
      )}
      <div className="section-head">
        <h2>{t('progress.heading')}</h2>
        <button type="button" onClick={() => void progress.refetch()}>
          {t('progress.refresh')}
        </button>
      </div>
      {progress.isPending && <Loading />}
      {/* A failed refresh says so above the figures it could not bring up to date. */}
      {progress.isError && (
        <p role="alert" className="alert">
          {errorMessage(progress.error, t)}
        </p>
      )}
      {progress.data !== undefined && <ProgressDashboard progress={progress.data} />}
      <BatchKeys batch={batch} />
    </section>
  );
}
