import { describe, expect, it } from 'vitest';

import { json, mockApi } from '../test/utils';
import { api, ApiError, request } from './client';

describe('api client', () => {
  it('sends the CSRF token from the cookie on unsafe methods only', async () => {
    document.cookie = 'csrftoken=tok%3D123';
    const fetchMock = mockApi({
      'POST /api/auth/logout/': () => json(204, null),
      'GET /api/assignments/': () => json(200, []),
    });
    await api.logout();
    await api.assignments();
    const [, postInit] = fetchMock.mock.calls[0] ?? [];
    const [, getInit] = fetchMock.mock.calls[1] ?? [];
    expect(postInit?.credentials).toBe('same-origin');
    expect((postInit?.headers as Record<string, string>)['X-CSRFToken']).toBe('tok=123');
    expect((getInit?.headers as Record<string, string>)['X-CSRFToken']).toBeUndefined();
  });

  it('sends JSON bodies and returns parsed JSON', async () => {
    const fetchMock = mockApi({
      'POST /api/auth/login/': (init) => json(200, { echoed: JSON.parse(String(init?.body)) }),
    });
    const result = await request<{ echoed: unknown }>('POST', '/api/auth/login/', { a: 1 });
    expect(result.echoed).toEqual({ a: 1 });
    const headers = fetchMock.mock.calls[0]?.[1]?.headers as Record<string, string>;
    expect(headers['Content-Type']).toBe('application/json');
  });

  it('turns an error answer into ApiError with the detail', async () => {
    mockApi({ 'GET /api/auth/me/': () => json(403, { detail: 'Not signed in.' }) });
    const error = await api.me().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 403, detail: 'Not signed in.' });
  });

  it('folds field errors into the detail and ignores non-JSON bodies', async () => {
    mockApi({
      'POST /api/auth/login/': () => json(400, { username: ['This field is required.'] }),
      'GET /api/assignments/': () =>
        new Response('<h1>Server Error</h1>Traceback ...', {
          status: 500,
          headers: { 'Content-Type': 'text/html' },
        }),
    });
    await expect(api.login({ username: '', password: 'x' })).rejects.toMatchObject({
      status: 400,
      detail: 'username: This field is required.',
    });
    await expect(api.assignments()).rejects.toMatchObject({ status: 500, detail: '' });
  });

  it('reports a network failure as status 0', async () => {
    mockApi({
      'GET /api/auth/me/': () => {
        throw new TypeError('Failed to fetch');
      },
    });
    await expect(api.me()).rejects.toMatchObject({ status: 0, detail: '' });
  });
});
