import { useTranslation } from 'react-i18next';

import { isCharacterKey, KEYMAP, keyLabel } from './keymap';
import type { KeyAction, KeymapEntry } from './keymap';
import { Modal } from '../Modal';

export function KeyboardHelp({
  onClose,
  characterKeys,
  keymap = KEYMAP,
  describe,
}: {
  onClose: () => void;
  /** Whether single-character shortcuts are on: those that are off say so. */
  characterKeys: boolean;
  /** Another screen's keys (the review screen's); the workspace's by default. */
  keymap?: readonly KeymapEntry[];
  /** That screen's words for each action; the workspace's help texts by default. */
  describe?: (action: KeyAction) => string;
}) {
  const { t } = useTranslation();
  return (
    <Modal
      labelledBy="keyboard-help-heading"
      onClose={onClose}
      closeKeys={characterKeys ? ['?'] : []}
      testId="keyboard-help"
    >
      <h2 id="keyboard-help-heading">{t('help.heading')}</h2>
      <table className="shortcuts">
        <tbody>
          {keymap.map(({ action, bindings }) => (
            <tr key={action}>
              <th scope="row">
                {bindings.map((binding, index) => {
                  const off = !characterKeys && isCharacterKey(binding);
                  return (
                    <span key={keyLabel(binding)}>
                      {index > 0 && ' / '}
                      <kbd
                        className={off ? 'off' : undefined}
                        title={off ? t('help.off') : undefined}
                      >
                        {keyLabel(binding)}
                      </kbd>
                    </span>
                  );
                })}
              </th>
              <td>
                {describe ? describe(action) : t(`help.${action as Exclude<KeyAction, 'adopt'>}`)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted">
        <kbd>{t('help.shiftClick')}</kbd> {t('help.range')}
      </p>
      {!characterKeys && <p className="muted">{t('help.characterKeysOff')}</p>}
      <button type="button" onClick={onClose}>
        {t('help.close')}
      </button>
    </Modal>
  );
}
