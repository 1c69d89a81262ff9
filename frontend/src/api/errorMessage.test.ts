import { afterEach, describe, expect, it } from 'vitest';

import en from '../i18n/en.json';
import i18n from '../i18n';
import zhCN from '../i18n/zh-CN.json';
import { ApiError } from './client';
import { ERROR_CODE_KEYS, errorMessage, FIELD_CODE_KEYS } from './errorMessage';

const zh = i18n.getFixedT('zh-CN');
const enT = i18n.getFixedT('en');

function apiError(status: number, body: Record<string, unknown>): ApiError {
  return new ApiError(status, typeof body.detail === 'string' ? body.detail : '', body);
}

function lookup(catalogue: unknown, key: string): unknown {
  return key
    .split('.')
    .reduce<unknown>(
      (node, part) => (node as Record<string, unknown> | undefined)?.[part],
      catalogue,
    );
}

afterEach(async () => {
  await i18n.changeLanguage('en');
});

describe('errorMessage', () => {
  it('shows a wrong password in Chinese, not the server English', () => {
    const error = apiError(400, {
      detail: 'Invalid username or password.',
      code: 'invalid_credentials',
    });
    expect(error.code).toBe('invalid_credentials');
    expect(errorMessage(error, zh)).toBe('用户名或密码错误。');
    expect(errorMessage(error, enT)).toBe('Invalid username or password.');
  });

  it('falls back to the server detail for a code it does not know', () => {
    const error = apiError(400, { detail: 'A rule from a newer server.', code: 'brand_new' });
    expect(errorMessage(error, zh)).toBe('A rule from a newer server.');
  });

  it('falls back to the detail, then a generic line, when there is no code', () => {
    expect(errorMessage(new ApiError(502, 'Bad gateway.'), zh)).toBe('Bad gateway.');
    expect(errorMessage(new ApiError(502, ''), zh)).toBe('服务器出错（HTTP 502）。');
    expect(errorMessage(new ApiError(0, ''), zh)).toBe('无法连接服务器，请检查网络后重试。');
  });

  it('brings the server detail into a code that names what only the server knows', () => {
    const error = apiError(400, {
      detail: 'line 2: not valid JSON',
      code: 'import_refused',
      errors: ['line 2: not valid JSON'],
    });
    expect(errorMessage(error, zh)).toBe('无法导入该文件：line 2: not valid JSON');
  });

  it('says how long to wait when throttled', () => {
    const error = apiError(429, {
      detail: 'Request was throttled. Expected available in 42 seconds.',
      code: 'throttled',
      wait: 42,
    });
    expect(errorMessage(error, zh)).toBe('尝试次数过多。请在 42 秒后重试。');
    const noWait = apiError(429, {
      detail: 'Request was throttled.',
      code: 'throttled',
      wait: null,
    });
    expect(errorMessage(noWait, enT)).toBe('Too many attempts. Try again later.');
  });

  it('translates the first field error of a validation error by its code', () => {
    const error = apiError(400, {
      detail: 'username: This field is required.',
      code: 'invalid',
      fields: {
        username: [{ message: 'This field is required.', code: 'required' }],
        password: [{ message: 'This field is required.', code: 'required' }],
      },
    });
    expect(errorMessage(error, zh)).toBe('username：此项为必填。');
  });

  it("keeps a field error's own words when its code says nothing more", () => {
    const message = 'This key has no trigger prefix of rank 26 (its ranks are 1 to 25).';
    const error = apiError(400, {
      detail: `prefix_ranks: ${message}`,
      code: 'invalid',
      fields: { prefix_ranks: [{ message, code: 'invalid' }] },
    });
    expect(errorMessage(error, enT)).toBe(`prefix_ranks: ${message}`);
    const nested = apiError(400, {
      detail: 'annotators.0: No user "x".',
      code: 'invalid',
      fields: { annotators: { '0': [{ message: 'No user "x".', code: 'invalid' }] } },
    });
    expect(errorMessage(nested, enT)).toBe('annotators.0: No user "x".');
    const general = apiError(400, {
      detail: 'Not a list.',
      code: 'invalid',
      fields: { non_field_errors: [{ message: 'Not a list.', code: 'not_a_list' }] },
    });
    expect(errorMessage(general, zh)).toBe('此处需要一个列表。');
  });

  it('has a line in both languages for every code, and Chinese that is not the English', () => {
    const keys = [...Object.values(ERROR_CODE_KEYS), ...Object.values(FIELD_CODE_KEYS)];
    for (const key of keys) {
      const english = lookup(en, key);
      const chinese = lookup(zhCN, key);
      expect(typeof english, key).toBe('string');
      expect(typeof chinese, key).toBe('string');
      expect(chinese, key).not.toBe(english);
    }
  });
});
