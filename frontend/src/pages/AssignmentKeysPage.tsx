import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { api } from '../api/client';
import { errorMessage } from '../api/errorMessage';
import type { AssignmentKey } from '../api/types';
import { Loading } from '../components/Loading';

type State =
  | { kind: 'loading' }
  | { kind: 'failed'; message: string }
  | { kind: 'loaded'; keys: AssignmentKey[] };

/** One assignment's keys, each with the annotator's own status, to open any of them. */
export function AssignmentKeysPage() {
  const { assignmentId } = useParams();
  const id = Number(assignmentId);
  const { t } = useTranslation();
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    let cancelled = false;
    api.assignmentKeys(id).then(
      (keys) => !cancelled && setState({ kind: 'loaded', keys }),
      (error: unknown) =>
        !cancelled && setState({ kind: 'failed', message: errorMessage(error, t) }),
    );
    return () => {
      cancelled = true;
    };
  }, [id, t]);

  return (
    <section>
      <Link to="/" className="back-link">
        {t('notFound.back')}
      </Link>
      <h1>{t('keys.heading')}</h1>
      {state.kind === 'loading' && <Loading />}
      {state.kind === 'failed' && (
        <p role="alert" className="alert">
          {state.message}
        </p>
      )}
      {state.kind === 'loaded' && (
        <table className="assignments" data-testid="assignment-keys">
          <thead>
            <tr>
              <th scope="col">{t('keys.key')}</th>
              <th scope="col">{t('keys.status')}</th>
              <th scope="col">{t('keys.patterns')}</th>
            </tr>
          </thead>
          <tbody>
            {state.keys.map((key) => (
              <tr key={key.id} data-testid="assignment-key-row">
                <th scope="row">
                  <Link to={`/keys/${key.id}?assignment=${id}`}>
                    {t('workspace.heading', { layer: key.layer, index: key.index })}
                  </Link>
                </th>
                <td>
                  <span className={`status-badge status-${key.status ?? 'new'}`}>
                    {t(`status.${key.status ?? 'new'}`)}
                  </span>
                </td>
                <td>{key.pattern_count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
