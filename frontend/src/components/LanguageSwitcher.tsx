import { useId } from 'react';
import { useTranslation } from 'react-i18next';

import { chooseLanguage, LANGUAGES } from '../i18n';
import type { Language } from '../i18n';

export function LanguageSwitcher() {
  const { t, i18n } = useTranslation();
  const id = useId();
  return (
    <div className="language-switcher">
      <label htmlFor={id}>{t('header.language')}</label>
      <select
        id={id}
        value={i18n.resolvedLanguage ?? i18n.language}
        onChange={(event) => void chooseLanguage(event.target.value as Language)}
      >
        {LANGUAGES.map(({ code, nativeName }) => (
          <option key={code} value={code} lang={code}>
            {nativeName}
          </option>
        ))}
      </select>
    </div>
  );
}
