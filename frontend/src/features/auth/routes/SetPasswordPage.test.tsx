import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import type { User } from '../../../api/types';
import { json, mockApi, renderApp } from '../../../test/utils';

const DAVE: User = {
  id: 4,
  username: 'dave',
  is_staff: false,
  is_annotator: true,
  is_curator: false,
  display_name: 'dave',
};

const PATH = '/set-password#NA/abc-123';

describe('SetPasswordPage', () => {
  it('lets the invitee choose a password, signs them in and opens their assignments', async () => {
    const sent: unknown[] = [];
    let signedIn = false;
    mockApi({
      'POST /api/auth/password-link/': () => json(200, { username: 'dave' }),
      'POST /api/auth/set-password/': (init) => {
        sent.push(JSON.parse(String(init?.body)));
        signedIn = true;
        return json(200, DAVE);
      },
      'GET /api/auth/me/': () => (signedIn ? json(200, DAVE) : json(403, { detail: 'no' })),
      'GET /api/assignments/': () => json(200, []),
    });
    renderApp({ path: PATH, user: null });

    expect(await screen.findByText(/Welcome, dave\./)).toBeInTheDocument();
    await userEvent.type(screen.getByLabelText('New password'), 'a long passphrase');
    await userEvent.type(screen.getByLabelText('New password again'), 'a long passphrase!');
    await userEvent.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    expect(screen.getByRole('alert')).toHaveTextContent('The two passwords differ.');
    expect(sent).toEqual([]);

    await userEvent.type(screen.getByLabelText('New password again'), '{Backspace}');
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Set password and sign in' }));

    expect(sent).toEqual([{ uid: 'NA', token: 'abc-123', password: 'a long passphrase' }]);
    expect(await screen.findByRole('heading', { name: 'My assignments' })).toBeInTheDocument();
  });

  it('says so when the link is spent or expired', async () => {
    mockApi({
      'POST /api/auth/password-link/': () =>
        json(400, { detail: 'This link is not valid: it has expired, was already used.' }),
    });
    renderApp({ path: PATH, user: null });
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'This link is not valid: it has expired, was already used.',
    );
    expect(screen.queryByLabelText('New password')).not.toBeInTheDocument();
  });

  it('shows the server’s reason when the password is refused', async () => {
    mockApi({
      'POST /api/auth/password-link/': () => json(200, { username: 'dave' }),
      'POST /api/auth/set-password/': () => json(400, { detail: 'This password is too short.' }),
    });
    renderApp({ path: PATH, user: null });
    await userEvent.type(await screen.findByLabelText('New password'), 'short');
    await userEvent.type(screen.getByLabelText('New password again'), 'short');
    await userEvent.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('This password is too short.');
  });
});
