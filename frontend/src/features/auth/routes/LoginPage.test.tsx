import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { alice, json, mockApi, renderApp } from '../../../test/utils';

describe('LoginPage', () => {
  it('shows the API message in an alert when the credentials are wrong', async () => {
    const fetchMock = mockApi({
      'POST /api/auth/login/': () => json(400, { detail: 'Invalid username or password.' }),
    });
    renderApp({ path: '/login', user: null });

    await userEvent.type(screen.getByLabelText('Username'), 'alice');
    await userEvent.type(screen.getByLabelText('Password'), 'wrong');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));

    expect(await screen.findByRole('alert')).toHaveTextContent('Invalid username or password.');
    expect(screen.getByLabelText('Password')).toHaveValue('');
    expect(screen.getByRole('heading', { name: 'Sign in to ffkv' })).toBeInTheDocument();
    expect(JSON.parse(String(fetchMock.mock.calls[0]?.[1]?.body))).toEqual({
      username: 'alice',
      password: 'wrong',
    });
  });

  it('shows the throttling message on 429', async () => {
    mockApi({
      'POST /api/auth/login/': () =>
        json(429, { detail: 'Request was throttled. Expected available in 60 seconds.' }),
    });
    renderApp({ path: '/login', user: null });
    await userEvent.type(screen.getByLabelText('Username'), 'alice');
    await userEvent.type(screen.getByLabelText('Password'), 'again{Enter}');
    expect(await screen.findByRole('alert')).toHaveTextContent('Request was throttled');
  });

  it('never shows a server error page, only a short message', async () => {
    mockApi({
      'POST /api/auth/login/': () =>
        new Response('Traceback (most recent call last): ...', {
          status: 500,
          headers: { 'Content-Type': 'text/html' },
        }),
    });
    renderApp({ path: '/login', user: null });
    await userEvent.type(screen.getByLabelText('Username'), 'alice');
    await userEvent.type(screen.getByLabelText('Password'), 'pw{Enter}');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Something went wrong on the server (HTTP 500).');
    expect(alert).not.toHaveTextContent('Traceback');
  });

  it('goes to the home page after signing in', async () => {
    mockApi({
      'POST /api/auth/login/': () => json(200, alice),
      'GET /api/assignments/': () => json(200, []),
    });
    renderApp({ path: '/login', user: null });
    await userEvent.type(screen.getByLabelText('Username'), 'alice');
    await userEvent.type(screen.getByLabelText('Password'), 'secret');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));

    expect(await screen.findByRole('heading', { name: 'My assignments' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Sign out' })).toBeInTheDocument();
  });

  it('sends a visitor who is not signed in from / to /login', async () => {
    renderApp({ path: '/', user: null });
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'My assignments' })).not.toBeInTheDocument();
  });

  it('asks the API who is signed in when the page has no bootstrap', async () => {
    const fetchMock = mockApi({
      'GET /api/auth/me/': () =>
        json(403, { detail: 'Authentication credentials were not provided.' }),
    });
    renderApp({ path: '/' });
    expect(await screen.findByLabelText('Username')).toBeInTheDocument();
    await waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(1));
  });
});
