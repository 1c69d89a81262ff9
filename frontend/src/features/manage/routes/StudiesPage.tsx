import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../api/queryKeys';
import { ImportForm } from '../components/ImportForm';

export function StudiesPage() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const studies = useQuery({ queryKey: manageKeys.studies(), queryFn: () => api.admin.studies() });
  const data = studies.data;
  return (
    <section>
      <h1>{t('manage.studies')}</h1>
      {studies.isPending && <Loading />}
      {studies.isError && (
        <p role="alert" className="alert">
          {errorMessage(studies.error, t)}
        </p>
      )}
      {data !== undefined && data.length === 0 && (
        <div className="card">
          <p>{t('manage.noStudies')}</p>
          <Link to="/manage/mining">{t('manage.startMining')}</Link>
        </div>
      )}
      {data !== undefined && data.length > 0 && (
        <table className="assignments" data-testid="studies">
          <thead>
            <tr>
              <th scope="col">{t('manage.study')}</th>
              <th scope="col">{t('manage.model')}</th>
              <th scope="col">{t('manage.corpus')}</th>
              <th scope="col">{t('manage.keys')}</th>
              <th scope="col">{t('manage.valueTokens')}</th>
              <th scope="col">{t('manage.state')}</th>
            </tr>
          </thead>
          <tbody>
            {data.map((study) => (
              <tr key={study.id}>
                <th scope="row">
                  <Link to={`/manage/studies/${study.id}`}>{study.name}</Link>
                </th>
                <td>{study.model_name}</td>
                <td>{study.corpus}</td>
                <td>{study.key_count}</td>
                <td>{study.show_value_tokens ? t('manage.shown') : t('manage.hidden')}</td>
                <td>{study.archived ? t('manage.archived') : t('manage.live')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {/* An import makes a new study: its form belongs beside the list of studies. */}
      <ImportForm
        onImported={() => void queryClient.invalidateQueries({ queryKey: manageKeys.studies() })}
      />
    </section>
  );
}
