import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';

export const SHORTCUTS = [
  ['j / ↓', 'down'],
  ['k / ↑', 'up'],
  ['Shift + ↓ / ↑', 'extend'],
  ['Space / x', 'toggle'],
  ['Shift + click', 'range'],
  ['Esc', 'clear'],
  ['1 / 2 / 3', 'kind'],
  ['d', 'describe'],
  ['a / Enter', 'add'],
  ['n', 'note'],
  ['Ctrl + Enter', 'submit'],
  ['?', 'help'],
] as const;

export function KeyboardHelp({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    closeRef.current?.focus();
    return () => previous?.focus?.();
  }, []);
  return (
    <div className="overlay" onClick={onClose}>
      <div
        className="dialog card"
        role="dialog"
        aria-modal="true"
        aria-labelledby="keyboard-help-heading"
        onClick={(event) => event.stopPropagation()}
      >
        <h2 id="keyboard-help-heading">{t('help.heading')}</h2>
        <table className="shortcuts">
          <tbody>
            {SHORTCUTS.map(([keys, action]) => (
              <tr key={action}>
                <th scope="row">
                  <kbd>{keys}</kbd>
                </th>
                <td>{t(`help.${action}`)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <button ref={closeRef} type="button" onClick={onClose}>
          {t('help.close')}
        </button>
      </div>
    </div>
  );
}
