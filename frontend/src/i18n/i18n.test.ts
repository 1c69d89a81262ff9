import { describe, expect, it, vi } from 'vitest';

import en from './en.json';
import i18n, { chooseLanguage, detectLanguage, LANGUAGE_STORAGE_KEY, matchLanguage } from './index';
import zhCN from './zh-CN.json';

type Tree = { [key: string]: string | Tree };

function flatten(tree: Tree, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') out[path] = value;
    else Object.assign(out, flatten(value, path));
  }
  return out;
}

function placeholders(text: string): string[] {
  return [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((match) => match[1] ?? '').sort();
}

const enFlat = flatten(en);
const zhFlat = flatten(zhCN);

describe('translation catalogues', () => {
  it('have the same keys in English and Simplified Chinese', () => {
    expect(Object.keys(zhFlat).sort()).toEqual(Object.keys(enFlat).sort());
  });

  it('have no empty strings', () => {
    for (const [key, value] of Object.entries({ ...enFlat, ...zhFlat })) {
      expect(value.trim(), key).not.toBe('');
    }
  });

  it('use the same interpolation variables in both languages', () => {
    for (const key of Object.keys(enFlat)) {
      expect(placeholders(zhFlat[key] ?? ''), key).toEqual(placeholders(enFlat[key] ?? ''));
    }
  });
});

describe('language detection', () => {
  it('maps any Chinese tag to zh-CN and English tags to en', () => {
    expect(matchLanguage('zh')).toBe('zh-CN');
    expect(matchLanguage('zh-Hans-CN')).toBe('zh-CN');
    expect(matchLanguage('en-GB')).toBe('en');
    expect(matchLanguage('fr-FR')).toBeNull();
  });

  it('follows the browser when nothing was chosen', () => {
    vi.spyOn(navigator, 'languages', 'get').mockReturnValue(['fr-FR', 'zh-CN', 'en']);
    expect(detectLanguage()).toBe('zh-CN');
  });

  it('falls back to English for unsupported browser languages', () => {
    vi.spyOn(navigator, 'languages', 'get').mockReturnValue(['de-DE']);
    vi.spyOn(navigator, 'language', 'get').mockReturnValue('de-DE');
    expect(detectLanguage()).toBe('en');
  });

  it('prefers a saved choice over the browser and sets <html lang>', async () => {
    vi.spyOn(navigator, 'languages', 'get').mockReturnValue(['en-US']);
    await chooseLanguage('zh-CN');
    expect(window.localStorage.getItem(LANGUAGE_STORAGE_KEY)).toBe('zh-CN');
    expect(detectLanguage()).toBe('zh-CN');
    expect(i18n.language).toBe('zh-CN');
    expect(document.documentElement.lang).toBe('zh-CN');
  });
});
