import { useRef } from 'react';
import { useTranslation } from 'react-i18next';

import { Modal } from '../../../components/Modal';

/** Asked when Ctrl+Enter would submit a key that has no pattern. */
export function ConfirmEmptySubmit({
  onSubmit,
  onCancel,
}: {
  onSubmit: () => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const cancelRef = useRef<HTMLButtonElement>(null);
  return (
    <Modal labelledBy="confirm-empty-heading" onClose={onCancel} initialFocus={cancelRef}>
      <h2 id="confirm-empty-heading">{t('workspace.confirmEmpty.heading')}</h2>
      <p>{t('workspace.confirmEmpty.text')}</p>
      <div className="composer-actions">
        <button type="button" className="primary" onClick={onSubmit}>
          {t('workspace.confirmEmpty.submit')}
        </button>
        <button ref={cancelRef} type="button" onClick={onCancel}>
          {t('workspace.confirmEmpty.cancel')}
        </button>
      </div>
    </Modal>
  );
}
