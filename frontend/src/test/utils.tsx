import { render } from '@testing-library/react';
import { MemoryRouter } from 'react-router-dom';
import { vi } from 'vitest';

import { makeQueryClient } from '../api/queryClient';
import type { Assignment, User } from '../api/types';
import { App } from '../App';

export const alice: User = {
  id: 1,
  username: 'alice',
  is_staff: false,
  is_annotator: true,
  is_curator: false,
  display_name: 'alice',
};

export const carol: User = {
  id: 3,
  username: 'carol',
  is_staff: true,
  is_annotator: false,
  is_curator: true,
  display_name: 'Carol Admin',
};

export function makeAssignment(overrides: Partial<Assignment> = {}): Assignment {
  return {
    id: 1,
    batch_name: 'layers 1-4',
    study_id: 7,
    study_name: 'demo',
    keys_total: 40,
    keys_submitted: 10,
    created_at: '2025-03-01T09:30:00Z',
    ...overrides,
  };
}

export function json(status: number, body: unknown): Response {
  return new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: status === 204 ? {} : { 'Content-Type': 'application/json' },
  });
}

type Route = (init: RequestInit | undefined) => Response | Promise<Response>;

/**
 * Stub `fetch` with one answer per "METHOD /path"; an unexpected request fails
 * the test loudly instead of hanging. The returned mock records each call as
 * `(path, init)`: the typed client's Request (absolute same-origin URL) is taken
 * apart into one, its body read as text.
 */
export function mockApi(routes: Record<string, Route>) {
  const fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    const key = `${(init?.method ?? 'GET').toUpperCase()} ${url}`;
    const route = routes[key];
    if (!route) throw new Error(`unexpected request: ${key}`);
    return route(init);
  });
  vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) => {
    if (!(input instanceof Request)) {
      return fetchMock(typeof input === 'string' ? input : input.href, init);
    }
    const url = new URL(input.url);
    const path = url.origin === window.location.origin ? `${url.pathname}${url.search}` : input.url;
    const asked = { method: input.method, headers: input.headers, credentials: input.credentials };
    // A request without a body reaches its route at once, as a plain fetch(path) does.
    if (input.body === null) return fetchMock(path, asked);
    return input
      .clone()
      .text()
      .then((body) => fetchMock(path, { ...asked, body }));
  });
  return fetchMock;
}

export function renderApp({
  path = '/',
  user,
  retry = false,
}: { path?: string; user?: User | null; retry?: boolean } = {}) {
  // Tests see a failure at once unless they ask for the app's own retry policy.
  return render(
    <MemoryRouter initialEntries={[path]}>
      <App initialUser={user} queryClient={makeQueryClient({ retry })} />
    </MemoryRouter>,
  );
}
