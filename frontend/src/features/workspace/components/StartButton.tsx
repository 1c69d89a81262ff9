import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { Assignment } from '../../../api/types';

/** Opens the assignment's next unfinished key (GET /api/next-key/). */
export function StartButton({ assignment }: { assignment: Assignment }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const started = assignment.keys_submitted > 0;

  async function start() {
    setBusy(true);
    setMessage(null);
    try {
      const next = await api.nextKey(assignment.id);
      if (next) navigate(`/keys/${next.key_id}?assignment=${next.assignment_id}`);
      else setMessage(t('home.nothingLeft'));
    } catch (error) {
      setMessage(errorMessage(error, t));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="start-cell">
      <button
        type="button"
        className="primary"
        disabled={busy}
        aria-label={t(started ? 'home.continueNamed' : 'home.startNamed', {
          batch: assignment.batch_name,
        })}
        onClick={() => void start()}
      >
        {started ? t('home.continue') : t('home.start')}
      </button>
      {message && (
        <span role="status" className="muted">
          {message}
        </span>
      )}
    </div>
  );
}
