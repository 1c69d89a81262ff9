import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import { Loading } from '../../../components/Loading';
import { reviewKeys } from '../api/queryKeys';

/** The studies a curator can review, with how far their review has come. */
export function ReviewStudiesPage() {
  const { t } = useTranslation();
  const query = useQuery({ queryKey: reviewKeys.studies(), queryFn: api.review.studies });
  if (query.isPending) return <Loading />;
  if (query.isError) {
    return (
      <p role="alert" className="alert">
        {errorMessage(query.error, t)}
      </p>
    );
  }
  const studies = query.data;
  return (
    <section className="card">
      <h1>{t('review.heading')}</h1>
      {studies.length === 0 ? (
        <p className="muted">{t('review.noStudies')}</p>
      ) : (
        <table className="assignments review-table" data-testid="review-studies">
          <thead>
            <tr>
              <th scope="col">{t('manage.study')}</th>
              <th scope="col">{t('manage.keys')}</th>
              <th scope="col">{t('review.ready')}</th>
              <th scope="col">{t('review.curated')}</th>
              <th scope="col">{t('review.flagged')}</th>
            </tr>
          </thead>
          <tbody>
            {studies.map((study) => (
              <tr key={study.id} data-testid="review-study">
                <th scope="row">
                  <Link to={`/manage/studies/${study.id}/review`}>{study.name}</Link>
                  {study.archived && (
                    <>
                      {' '}
                      <span className="status-badge">{t('manage.archived')}</span>
                    </>
                  )}
                </th>
                <td data-label={t('manage.keys')}>{study.keys}</td>
                <td data-label={t('review.ready')}>{study.ready}</td>
                <td data-label={t('review.curated')}>{study.curated}</td>
                <td data-label={t('review.flagged')}>
                  {study.flagged > 0 ? (
                    <Link
                      to={`/manage/studies/${study.id}/review?status=flagged`}
                      aria-label={t('review.flaggedLink', {
                        count: study.flagged,
                        study: study.name,
                      })}
                    >
                      {study.flagged}
                    </Link>
                  ) : (
                    study.flagged
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
