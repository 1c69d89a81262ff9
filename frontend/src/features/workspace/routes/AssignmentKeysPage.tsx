import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link, useParams, useSearchParams } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AssignmentKeyPage } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { workspaceKeys } from '../api/queryKeys';

/** Keys per page: an assignment can have 100,000 keys, and the API answers in pages. */
export const KEYS_PER_PAGE = 100;

function pageFrom(params: URLSearchParams): number {
  const page = Number(params.get('page'));
  return Number.isInteger(page) && page > 1 ? page : 1;
}

/** One assignment's keys, a page at a time, each with the annotator's own status. */
export function AssignmentKeysPage() {
  const { assignmentId } = useParams();
  const id = Number(assignmentId);
  const { t } = useTranslation();
  const [params, setParams] = useSearchParams();
  const pageNumber = pageFrom(params);
  // The previous page stays on screen while the next one loads.
  const query = useQuery({
    queryKey: workspaceKeys.assignmentKeys(id, pageNumber),
    queryFn: () => api.assignmentKeys(id, (pageNumber - 1) * KEYS_PER_PAGE, KEYS_PER_PAGE),
    placeholderData: keepPreviousData,
  });
  const page = query.data;

  const goTo = (page: number) => setParams(page > 1 ? { page: String(page) } : {});

  return (
    <section>
      <Link to="/" className="back-link">
        {t('notFound.back')}
      </Link>
      <h1>{t('keys.heading')}</h1>
      {query.isPending && <Loading />}
      {query.isError && (
        <p role="alert" className="alert">
          {errorMessage(query.error, t)}
        </p>
      )}
      {page !== undefined && page.count === 0 && <p>{t('keys.none')}</p>}
      {page !== undefined && page.count > 0 && (
        <>
          <Pager page={page} pageNumber={pageNumber} onGo={goTo} />
          <table className="assignments" data-testid="assignment-keys">
            <thead>
              <tr>
                <th scope="col">{t('keys.key')}</th>
                <th scope="col">{t('keys.status')}</th>
                <th scope="col">{t('keys.patterns')}</th>
              </tr>
            </thead>
            <tbody>
              {page.results.map((key) => (
                <tr key={key.id} data-testid="assignment-key-row">
                  <th scope="row">
                    <Link to={`/keys/${key.id}?assignment=${id}`}>
                      {t('workspace.heading', { layer: key.layer, index: key.index })}
                    </Link>
                  </th>
                  <td data-label={t('keys.status')}>
                    <span className={`status-badge status-${key.status ?? 'new'}`}>
                      {t(`status.${key.status ?? 'new'}`)}
                    </span>
                  </td>
                  <td data-label={t('keys.patterns')}>{key.pattern_count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function Pager({
  page,
  pageNumber,
  onGo,
}: {
  page: AssignmentKeyPage;
  pageNumber: number;
  onGo: (page: number) => void;
}) {
  const { t } = useTranslation();
  const from = Math.min(page.offset + 1, page.count);
  const to = Math.min(page.offset + page.results.length, page.count);
  const hasNext = page.offset + page.results.length < page.count;
  return (
    <nav className="inline-fields pager" aria-label={t('keys.heading')}>
      <span data-testid="keys-range">
        {t('keys.range', { from, to: Math.max(from, to), count: page.count })}
      </span>
      <button type="button" disabled={pageNumber <= 1} onClick={() => onGo(pageNumber - 1)}>
        {t('keys.previous')}
      </button>
      <button type="button" disabled={!hasNext} onClick={() => onGo(pageNumber + 1)}>
        {t('keys.next')}
      </button>
    </nav>
  );
}
