import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';

import en from './en.json';
import zhCN from './zh-CN.json';

export const resources = {
  en: { translation: en },
  'zh-CN': { translation: zhCN },
} as const;

export type Language = keyof typeof resources;

// Each language is named in itself, so a reader can find theirs whatever the
// current language is; these names are deliberately not translated.
export const LANGUAGES: ReadonlyArray<{ code: Language; nativeName: string }> = [
  { code: 'en', nativeName: 'English' },
  { code: 'zh-CN', nativeName: '简体中文' },
];

export const LANGUAGE_STORAGE_KEY = 'ffkv.language';

function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && Object.hasOwn(resources, value);
}

/** Map a BCP 47 tag to a language we ship: any Chinese reads zh-CN, the rest en. */
export function matchLanguage(tag: string | null | undefined): Language | null {
  if (!tag) return null;
  const lower = tag.toLowerCase();
  if (lower === 'zh' || lower.startsWith('zh-')) return 'zh-CN';
  if (lower === 'en' || lower.startsWith('en-')) return 'en';
  return null;
}

function storedLanguage(): Language | null {
  try {
    const value = window.localStorage.getItem(LANGUAGE_STORAGE_KEY);
    return isLanguage(value) ? value : null;
  } catch {
    return null; // storage can be disabled (privacy modes); fall back to the browser
  }
}

/** The saved choice first, then the browser's preferences in order, then English. */
export function detectLanguage(): Language {
  const saved = storedLanguage();
  if (saved) return saved;
  const preferred = navigator.languages?.length ? navigator.languages : [navigator.language];
  for (const tag of preferred) {
    const match = matchLanguage(tag);
    if (match) return match;
  }
  return 'en';
}

/** Switch language and remember the choice for the next visit. */
export async function chooseLanguage(language: Language): Promise<void> {
  try {
    window.localStorage.setItem(LANGUAGE_STORAGE_KEY, language);
  } catch {
    // not persisted, but the switch itself still works
  }
  await i18n.changeLanguage(language);
}

function reflectOnDocument(language: string): void {
  document.documentElement.lang = language;
  document.title = i18n.t('app.title');
}

i18n.on('languageChanged', reflectOnDocument);

export function initI18n(language: Language = detectLanguage()) {
  if (!i18n.isInitialized) {
    void i18n.use(initReactI18next).init({
      resources,
      lng: language,
      fallbackLng: 'en',
      supportedLngs: Object.keys(resources),
      interpolation: { escapeValue: false }, // React escapes
      returnNull: false,
      initAsync: false,
    });
  } else if (i18n.language !== language) {
    void i18n.changeLanguage(language);
  }
  reflectOnDocument(i18n.language);
  return i18n;
}

export default i18n;
