import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../api/queryKeys';
import { StudyGuidelines } from '../components/StudyGuidelines';
import { CheckRateForm } from '../components/CheckRateForm';
import { BatchForm } from '../components/BatchForm';

export function StudyPage() {
  const { studyId } = useParams();
  const id = Number(studyId);
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const study = useQuery({ queryKey: manageKeys.study(id), queryFn: () => api.admin.study(id) });
  const batches = useQuery({
    queryKey: manageKeys.batches(id),
    queryFn: () => api.admin.batches(id),
  });
  // The choice shows in the click's own render (the cache update in onMutate would come
  // a tick later, and the controlled box would flip back in between), and goes back to
  // the server's value when the write settles: the saved one, or the old one if refused.
  const [choice, setChoice] = useState<boolean | null>(null);
  const valueTokens = useMutation({
    mutationFn: (show: boolean) => api.admin.updateStudy(id, { show_value_tokens: show }),
    onSuccess: (updated) => queryClient.setQueryData(manageKeys.study(id), updated),
    onSettled: () => setChoice(null),
  });
  const saving = choice !== null;
  const error = valueTokens.isError ? errorMessage(valueTokens.error, t) : null;

  if (study.data === undefined) {
    return study.isError ? (
      <p role="alert" className="alert">
        {errorMessage(study.error, t)}
      </p>
    ) : (
      <Loading />
    );
  }
  const data = study.data;
  return (
    <section className="stack">
      <Link to="/manage" className="back-link">
        {t('manage.backToStudies')}
      </Link>
      <div className="section-head">
        <h1>{data.name}</h1>
        <Link to={`/manage/studies/${id}/report`} data-testid="report-link">
          {t('report.open')}
        </Link>
        <Link to={`/manage/studies/${id}/causal`} data-testid="causal-link">
          {t('causal.open')}
        </Link>
        <Link to={`/manage/studies/${id}/annotators`} data-testid="annotator-table-link">
          {t('report.annotatorTable')}
        </Link>
      </div>
      <div className="card">
        <dl className="facts">
          <dt>{t('manage.model')}</dt>
          <dd>{data.model_name}</dd>
          <dt>{t('manage.corpus')}</dt>
          <dd>{data.corpus}</dd>
          <dt>{t('manage.shape')}</dt>
          <dd>{t('manage.shapeValue', { layers: data.n_layers, dff: data.d_ff })}</dd>
          <dt>{t('manage.topK')}</dt>
          <dd>{data.top_k}</dd>
          <dt>{t('manage.keys')}</dt>
          <dd>{data.key_count}</dd>
        </dl>
        <label className="checkbox">
          <input
            type="checkbox"
            checked={choice ?? data.show_value_tokens}
            disabled={saving}
            onChange={(event) => {
              setChoice(event.target.checked);
              valueTokens.mutate(event.target.checked);
            }}
          />
          {t('manage.showValueTokens')}
        </label>
        <p className="muted">{t('manage.showValueTokensHint')}</p>
        {error && (
          <p role="alert" className="alert">
            {error}
          </p>
        )}
      </div>

      <CheckRateForm study={data} />

      <StudyGuidelines studyId={id} />

      <h2>{t('manage.batches')}</h2>
      {batches.isPending && <Loading />}
      {batches.isError && (
        <p role="alert" className="alert">
          {errorMessage(batches.error, t)}
        </p>
      )}
      {batches.data !== undefined &&
        (batches.data.length === 0 ? (
          <p className="muted">{t('manage.noBatches')}</p>
        ) : (
          <table className="assignments" data-testid="batches">
            <thead>
              <tr>
                <th scope="col">{t('manage.batch')}</th>
                <th scope="col">{t('manage.keys')}</th>
                <th scope="col">{t('manage.assignedTo')}</th>
              </tr>
            </thead>
            <tbody>
              {batches.data.map((batch) => (
                <tr key={batch.id}>
                  <th scope="row">
                    <Link to={`/manage/studies/${id}/batches/${batch.id}`}>{batch.name}</Link>
                  </th>
                  <td>{batch.key_count}</td>
                  <td>{batch.annotators.map((a) => a.username).join(', ') || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {data.archived ? (
        <p className="card muted" data-testid="archived-notice">
          {t('manage.archivedNotice')}
        </p>
      ) : (
        <BatchForm study={data} />
      )}
    </section>
  );
}
