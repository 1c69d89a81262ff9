import { useTranslation } from 'react-i18next';

import type { SaveStatus } from './writeQueue';

interface SaveStateProps {
  status: SaveStatus;
  message: string;
  /** Offers "Retry now" while offline or refused. */
  onRetry?: () => void;
  /** The page's save state is announced; a local copy (beside the note) is not, twice. */
  live?: boolean;
  id?: string;
  testId?: string;
}

export function SaveState({
  status,
  message,
  onRetry,
  live = true,
  id,
  testId = 'save-state',
}: SaveStateProps) {
  const { t } = useTranslation();
  return (
    <div className={`save-state save-${status}`}>
      <span id={id} role={live ? 'status' : undefined} data-testid={testId} data-state={status}>
        {status === 'error' ? t('save.error', { message }) : t(`save.${status}`)}
      </span>
      {onRetry && (status === 'offline' || status === 'error') && (
        <button type="button" className="link-button" onClick={onRetry}>
          {t('save.retryNow')}
        </button>
      )}
    </div>
  );
}
