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
  display_name: 'alice',
};

export const carol: User = {
  id: 3,
  username: 'carol',
  is_staff: true,
  is_annotator: false,
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
 * the test loudly instead of hanging.
 */
export function mockApi(routes: Record<string, Route>) {
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const key = `${(init?.method ?? 'GET').toUpperCase()} ${url}`;
    const route = routes[key];
    if (!route) throw new Error(`unexpected request: ${key}`);
    return route(init);
  });
  vi.stubGlobal('fetch', fetchMock);
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
