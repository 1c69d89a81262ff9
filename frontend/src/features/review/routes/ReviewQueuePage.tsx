import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link, useParams, useSearchParams } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { ReviewQueueStatus } from '../../../api/review';
import { Loading } from '../../../components/Loading';
import { FlagList } from '../components/FlagList';
import { reviewKeys } from '../api/queryKeys';

export const QUEUE_PAGE_SIZE = 50;
const STATUSES: readonly ReviewQueueStatus[] = ['unreviewed', 'curated', 'flagged', 'all'];

function positiveInt(value: string | null): number | null {
  const number = Number(value);
  return value !== null && Number.isInteger(number) && number >= 0 ? number : null;
}

/**
 * A study's review queue: ready keys, most disagreed-on first (the server's order), with
 * their flags and gold status. The filters live in the address (?layer=&batch=&status=
 * &offset=), so a filtered queue can be reloaded and shared. Status "flagged" lists every
 * flagged key, whether or not its annotators have all submitted (such a key says so).
 */
export function ReviewQueuePage() {
  const { t } = useTranslation();
  const studyId = Number(useParams().studyId);
  const [params, setParams] = useSearchParams();
  const layer = positiveInt(params.get('layer'));
  const batch = positiveInt(params.get('batch'));
  const statusParam = params.get('status') as ReviewQueueStatus | null;
  const status: ReviewQueueStatus =
    statusParam && STATUSES.includes(statusParam) ? statusParam : 'unreviewed';
  const offset = positiveInt(params.get('offset')) ?? 0;

  const studies = useQuery({ queryKey: reviewKeys.studies(), queryFn: api.review.studies });
  const query = useQuery({
    queryKey: reviewKeys.queue(studyId, layer, batch, status, offset),
    queryFn: () =>
      api.review.queue(studyId, { layer, batch, status, offset, limit: QUEUE_PAGE_SIZE }),
    placeholderData: keepPreviousData,
    enabled: Number.isInteger(studyId) && studyId > 0,
  });
  const studyName = studies.data?.find((study) => study.id === studyId)?.name;

  function setFilter(name: string, value: string) {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    next.delete('offset');
    setParams(next);
  }

  function goTo(newOffset: number) {
    const next = new URLSearchParams(params);
    if (newOffset > 0) next.set('offset', String(newOffset));
    else next.delete('offset');
    setParams(next);
  }

  if (query.isPending) return <Loading />;
  if (query.isError) {
    return (
      <p role="alert" className="alert">
        {errorMessage(query.error, t)}
      </p>
    );
  }
  const page = query.data;
  // The server's order is the queue's; kept stable here should a page come unsorted.
  const rows = [...page.results].sort((a, b) => b.disagreement - a.disagreement);
  const last = Math.min(page.count, page.offset + page.results.length);

  return (
    <section className="card">
      <Link to="/manage/review" className="back-link">
        {t('review.backToStudies')}
      </Link>
      <h1>{t('review.queueHeading', { study: studyName ?? `#${studyId}` })}</h1>
      <div className="filters" data-testid="queue-filters">
        <label>
          {t('review.layer')}{' '}
          <select value={layer ?? ''} onChange={(event) => setFilter('layer', event.target.value)}>
            <option value="">{t('review.allLayers')}</option>
            {page.layers.map((each) => (
              <option key={each} value={each}>
                {each}
              </option>
            ))}
          </select>
        </label>{' '}
        <label>
          {t('review.batch')}{' '}
          <select value={batch ?? ''} onChange={(event) => setFilter('batch', event.target.value)}>
            <option value="">{t('review.allBatches')}</option>
            {page.batches.map((each) => (
              <option key={each.id} value={each.id}>
                {each.name}
              </option>
            ))}
          </select>
        </label>{' '}
        <label>
          {t('review.status')}{' '}
          <select
            value={status}
            onChange={(event) =>
              setFilter('status', event.target.value === 'unreviewed' ? '' : event.target.value)
            }
          >
            {STATUSES.map((each) => (
              <option key={each} value={each}>
                {t(`review.statuses.${each}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {rows.length === 0 ? (
        <p className="muted" data-testid="queue-empty">
          {t('review.queueEmpty')}
        </p>
      ) : (
        <table className="assignments review-table" data-testid="review-queue">
          <thead>
            <tr>
              <th scope="col">{t('review.key')}</th>
              <th scope="col">{t('review.annotators')}</th>
              <th scope="col">{t('review.disagreement')}</th>
              <th scope="col">{t('review.alpha')}</th>
              <th scope="col">{t('review.gold')}</th>
              <th scope="col">{t('review.flags')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.key_id} data-testid="queue-row" data-key={row.key_id}>
                <th scope="row">
                  <Link to={`/manage/review/keys/${row.key_id}`}>
                    {t('workspace.heading', { layer: row.layer, index: row.index })}
                  </Link>
                  {row.is_check && (
                    <>
                      {' '}
                      <span className="status-badge">{t('review.checkKey')}</span>
                    </>
                  )}
                  {!row.ready && (
                    <>
                      {' '}
                      <span className="status-badge status-draft" data-testid="not-ready">
                        {t('review.notReady')}
                      </span>
                    </>
                  )}
                </th>
                <td data-label={t('review.annotators')}>{row.annotators.join(', ')}</td>
                <td data-label={t('review.disagreement')} data-testid="disagreement">
                  {Math.round(row.disagreement * 100)}%
                </td>
                <td data-label={t('review.alpha')}>
                  {row.alpha === null ? '—' : row.alpha.toFixed(2)}
                </td>
                <td data-label={t('review.gold')}>
                  <span
                    className={`status-badge status-${row.gold_status ?? 'new'}`}
                    data-testid="gold-status"
                  >
                    {t(`review.goldStatus.${row.gold_status ?? 'none'}`)}
                  </span>
                </td>
                <td data-label={t('review.flags')}>
                  {row.flags.length > 0 && <FlagList flags={row.flags} testId="queue-flags" />}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="pagination">
        <span className="muted" data-testid="queue-range">
          {t('review.range', {
            from: page.count === 0 ? 0 : page.offset + 1,
            to: last,
            total: page.count,
          })}
        </span>{' '}
        <button
          type="button"
          disabled={page.offset === 0}
          onClick={() => goTo(Math.max(0, page.offset - QUEUE_PAGE_SIZE))}
        >
          {t('review.previousPage')}
        </button>{' '}
        <button
          type="button"
          disabled={last >= page.count}
          onClick={() => goTo(page.offset + QUEUE_PAGE_SIZE)}
        >
          {t('review.nextPage')}
        </button>
      </div>
    </section>
  );
}
