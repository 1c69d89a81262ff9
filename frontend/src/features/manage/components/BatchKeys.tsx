import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { Batch, BatchKeyStatus } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../api/queryKeys';

export const BATCH_KEYS_PAGE = 50;

export const STATUS_LABEL = {
  new: 'progress.new',
  draft: 'progress.draft',
  submitted: 'progress.submitted',
} as const satisfies Record<BatchKeyStatus, string>;

/** The batch's keys a page at a time, a column per annotator of the batch. */
export function BatchKeys({ batch }: { batch: Batch }) {
  const { t } = useTranslation();
  const [offset, setOffset] = useState(0);
  // The page on screen stays there while the next one loads.
  const query = useQuery({
    queryKey: manageKeys.batchKeysPage(batch.id, offset),
    queryFn: () => api.admin.batchKeys(batch.id, offset, BATCH_KEYS_PAGE),
    placeholderData: keepPreviousData,
  });
  const page = query.data;
  const people = batch.annotators;
  return (
    <div className="stack">
      <h2 id="batch-keys-heading">{t('batchKeys.heading')}</h2>
      {query.isPending && <Loading />}
      {query.isError && (
        <p role="alert" className="alert">
          {errorMessage(query.error, t)}
        </p>
      )}
      {page !== undefined && (
        <>
          <table
            className="assignments"
            data-testid="batch-keys"
            aria-labelledby="batch-keys-heading"
          >
            <thead>
              <tr>
                <th scope="col">{t('batchKeys.key')}</th>
                {people.map((person) => (
                  <th scope="col" key={person.id}>
                    {person.username}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {page.results.map((key) => {
                const status = new Map(key.annotators.map((a) => [a.annotator_id, a.status]));
                return (
                  <tr key={key.key_id} data-testid="batch-key">
                    <th scope="row">
                      {t('batchKeys.keyName', { layer: key.layer, index: key.index })}
                    </th>
                    {people.map((person) => {
                      const s = status.get(person.id);
                      return (
                        <td key={person.id} data-status={s ?? 'none'}>
                          {s ? (
                            t(STATUS_LABEL[s])
                          ) : (
                            <span className="muted">{t('batchKeys.notAssigned')}</span>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                );
              })}
            </tbody>
          </table>
          <div className="inline-fields">
            <button
              type="button"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - BATCH_KEYS_PAGE))}
            >
              {t('batchKeys.previous')}
            </button>
            <span data-testid="batch-keys-range">
              {t('batchKeys.range', {
                from: page.count === 0 ? 0 : page.offset + 1,
                to: page.offset + page.results.length,
                count: page.count,
              })}
            </span>
            <button
              type="button"
              disabled={offset + BATCH_KEYS_PAGE >= page.count}
              onClick={() => setOffset(offset + BATCH_KEYS_PAGE)}
            >
              {t('batchKeys.next')}
            </button>
          </div>
        </>
      )}
    </div>
  );
}
