import { useTranslation } from 'react-i18next';

import type { SaveStatus } from './writeQueue';

interface SaveStateProps {
  status: SaveStatus;
  message: string;
  /** Typed but not handed to the queue yet (the note's autosave delay). */
  dirty: boolean;
  onRetry: () => void;
}

export function SaveState({ status, message, dirty, onRetry }: SaveStateProps) {
  const { t } = useTranslation();
  const shown = status === 'saved' && dirty ? 'saving' : status;
  return (
    <div className={`save-state save-${shown}`}>
      <span role="status" data-testid="save-state" data-state={shown}>
        {shown === 'error' ? t('save.error', { message }) : t(`save.${shown}`)}
      </span>
      {(shown === 'offline' || shown === 'error') && (
        <button type="button" className="link-button" onClick={onRetry}>
          {t('save.retryNow')}
        </button>
      )}
    </div>
  );
}
