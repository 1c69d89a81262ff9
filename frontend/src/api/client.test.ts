import { describe, expect, expectTypeOf, it, vi } from 'vitest';

import { json, mockApi } from '../test/utils';
import { api, ApiError, client, request, urls } from './client';
import type { AnnotationState, NextKey, StudyReport, User } from './types';

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
    expect(new Headers(postInit?.headers).get('X-CSRFToken')).toBe('tok=123');
    expect(new Headers(getInit?.headers).get('X-CSRFToken')).toBeNull();
  });

  it('sends a Request with the cookies, the CSRF token and a JSON body from the typed client', async () => {
    document.cookie = 'csrftoken=tok%3D456';
    const sent: Request[] = [];
    vi.stubGlobal('fetch', async (input: RequestInfo | URL) => {
      if (!(input instanceof Request)) throw new Error('expected a Request');
      sent.push(input.clone());
      return json(200, { state: 'submitted' });
    });
    await api.submit(10, 3);
    const [post] = sent;
    expect(post?.method).toBe('POST');
    expect(post?.url).toBe(`${window.location.origin}/api/keys/10/submit/`);
    expect(post?.credentials).toBe('same-origin');
    expect(post?.headers.get('X-CSRFToken')).toBe('tok=456');
    expect(post?.headers.get('Content-Type')).toBe('application/json');
    expect(post?.headers.get('Accept')).toBe('application/json');
    expect(await post?.json()).toEqual({ version: 3 });
  });

  it('puts path parameters and queries where the schema says', async () => {
    const fetchMock = mockApi({
      'GET /api/next-key/': () => json(204, null),
      'GET /api/next-key/?assignment=4': () => json(204, null),
      'GET /api/admin/batches/5/keys/?limit=50&offset=100': () => json(200, { count: 0 }),
      'DELETE /api/keys/10/patterns/50/?version=3': () => json(200, { version: 4 }),
      'GET /api/admin/studies/7/report/?annotators=a%20b,carol&layers=1,3': () => json(200, {}),
    });
    expect(await api.nextKey()).toBeUndefined();
    expect(await api.nextKey(4)).toBeUndefined();
    await api.admin.batchKeys(5, 100);
    await api.deletePattern(10, 50, 3);
    await api.admin.report(7, {
      annotators: ['a b', 'carol'],
      layers: [3, 1],
      submittedOnly: true,
    });
    expect(fetchMock).toHaveBeenCalledTimes(5);
    expect(urls.reportCsv(7, { annotators: null, layers: [2], submittedOnly: false })).toBe(
      '/api/admin/studies/7/report.csv?layers=2&submitted_only=false',
    );
    expect(urls.export(7, 'jsonl')).toBe('/api/studies/7/export?format=jsonl');
    expect(urls.exportDownload(9)).toBe('/api/admin/exports/9/download');
  });

  it('keeps the code and body of an error and reads no body that is not JSON', async () => {
    mockApi({
      'POST /api/keys/10/submit/': () =>
        json(409, {
          detail: 'Someone saved first.',
          code: 'stale_version',
          current: { version: 5 },
        }),
      'GET /api/auth/me/': () => new Response('hello', { status: 200 }),
    });
    const error = await api.submit(10, 3).catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 409,
      detail: 'Someone saved first.',
      code: 'stale_version',
      body: { current: { version: 5 } },
    });
    expect(await api.me()).toBeUndefined();
  });

  it('reports an answer cut short as status 0', async () => {
    mockApi({
      'GET /api/auth/me/': () =>
        new Response('{"id": 1, "user', { headers: { 'Content-Type': 'application/json' } }),
    });
    await expect(api.me()).rejects.toMatchObject({ status: 0, detail: '' });
  });

  it('types every path, parameter, query, body and answer from the schema', () => {
    // `npm run typecheck` holds these; the calls below are never made.
    expectTypeOf(api.me).returns.resolves.toEqualTypeOf<User>();
    expectTypeOf(api.nextKey).returns.resolves.toEqualTypeOf<NextKey | undefined>();
    expectTypeOf(api.submit).returns.resolves.toEqualTypeOf<AnnotationState>();
    expectTypeOf(api.admin.report).returns.resolves.toEqualTypeOf<StudyReport>();
    const wrong = () => [
      // @ts-expect-error: a path the API does not have
      client.GET('/api/keys/{key_id}/annotations/', { params: { path: { key_id: 1 } } }),
      client.GET('/api/assignments/{assignment_id}/keys/', {
        // @ts-expect-error: a query parameter the path does not take
        params: { path: { assignment_id: 1 }, query: { page: 2 } },
      }),
      client.GET('/api/keys/{key_id}/', {
        // @ts-expect-error: a path parameter of the wrong type
        params: { path: { key_id: 'ten' } },
      }),
      client.POST('/api/keys/{key_id}/submit/', {
        params: { path: { key_id: 1 } },
        // @ts-expect-error: a body without its `version`
        body: {},
      }),
    ];
    expect(wrong).toBeTypeOf('function');
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
