import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

import { SaveState } from '../../lib/writeQueue/SaveState';
import type { QueueSnapshot } from '../../lib/writeQueue/writeQueue';

/**
 * The tools in a key screen's header: the queue's save state (with its retry), the
 * switch for the one-character shortcuts, then the screen's own buttons (`children`),
 * the keyboard help, and what follows it (`trailing`).
 */
export function EditorTools({
  snapshot,
  onRetry,
  characterKeys,
  onCharacterKeys,
  onHelp,
  children,
  trailing,
}: {
  snapshot: QueueSnapshot;
  onRetry: () => void;
  characterKeys: boolean;
  onCharacterKeys: (on: boolean) => void;
  onHelp: () => void;
  children?: ReactNode;
  trailing?: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <div className="workspace-tools">
      <SaveState status={snapshot.status} message={snapshot.message} onRetry={onRetry} />
      <label className="character-keys">
        <input
          type="checkbox"
          checked={characterKeys}
          onChange={(event) => onCharacterKeys(event.target.checked)}
        />{' '}
        {t('help.characterKeys')}
      </label>
      {children}
      <button type="button" onClick={onHelp} aria-keyshortcuts={characterKeys ? '?' : undefined}>
        {t('help.open')}
      </button>
      {trailing}
    </div>
  );
}
