import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AnnotatorWithLink } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../api/queryKeys';
import { CreateAnnotator } from '../components/CreateAnnotator';
import { LinkNotice, NewPasswordLink } from '../components/PasswordLink';
import { Deactivate, DeactivateAlone } from '../components/Deactivate';

export function AnnotatorsPage() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const annotators = useQuery({
    queryKey: manageKeys.annotators(),
    queryFn: () => api.admin.annotators(),
  });
  const data = annotators.data;
  const reload = () => void queryClient.invalidateQueries({ queryKey: manageKeys.annotators() });
  // The last link made (by a create or a reset), shown once where the admin is looking.
  const [made, setMade] = useState<{ link: AnnotatorWithLink; created: boolean } | null>(null);
  function linkMade(link: AnnotatorWithLink, created: boolean) {
    setMade({ link, created });
    reload();
  }
  return (
    <section className="stack">
      <h1>{t('manage.annotators')}</h1>
      <CreateAnnotator onCreated={(link) => linkMade(link, true)} />
      {made && <LinkNotice link={made.link} created={made.created} />}
      {annotators.isPending && <Loading />}
      {annotators.isError && (
        <p role="alert" className="alert">
          {errorMessage(annotators.error, t)}
        </p>
      )}
      {data !== undefined && (
        <table className="assignments" data-testid="annotators">
          <thead>
            <tr>
              <th scope="col">{t('annotators.username')}</th>
              <th scope="col">{t('annotators.keys')}</th>
              <th scope="col">{t('annotators.active')}</th>
              <th scope="col">{t('annotators.password')}</th>
              <th scope="col">{t('annotators.deactivate')}</th>
            </tr>
          </thead>
          <tbody>
            {data.map((annotator) => (
              <tr key={annotator.id}>
                <th scope="row">{annotator.username}</th>
                <td>
                  {t('progress.submittedOf', {
                    submitted: annotator.keys_submitted,
                    total: annotator.keys_assigned,
                  })}
                </td>
                <td>{annotator.is_active ? t('annotators.yes') : t('annotators.no')}</td>
                <td>
                  {annotator.is_active && (
                    <NewPasswordLink
                      annotator={annotator}
                      onMade={(link) => linkMade(link, false)}
                    />
                  )}
                </td>
                <td>
                  {annotator.is_active &&
                    (annotator.keys_assigned > annotator.keys_submitted ? (
                      <Deactivate annotator={annotator} others={data} onDone={reload} />
                    ) : (
                      <DeactivateAlone annotator={annotator} onDone={reload} />
                    ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
