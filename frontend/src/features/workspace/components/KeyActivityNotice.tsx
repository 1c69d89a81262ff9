import { useTranslation } from 'react-i18next';

import type { TriggerPrefix } from '../../../api/types';
import { activeCount, isAlmostNeverActive } from '../lib/keyActivity';

/** Says so on a key that barely fires (rule: keyActivity.ts); nothing for any other. */
export function KeyActivityNotice({ prefixes }: { prefixes: readonly TriggerPrefix[] }) {
  const { t } = useTranslation();
  if (!isAlmostNeverActive(prefixes)) return null;
  return (
    <div className="notice quiet-key" data-testid="almost-never-active">
      <p>
        <strong>{t('workspace.quietKey')}</strong>{' '}
        {t('workspace.quietKeyWhy', { count: activeCount(prefixes), total: prefixes.length })}
      </p>
    </div>
  );
}
