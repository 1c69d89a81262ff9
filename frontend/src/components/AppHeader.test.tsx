import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { alice, json, mockApi, renderApp } from '../test/utils';

describe('AppHeader', () => {
  it('says when signing out failed, stays signed in, and can try again', async () => {
    let fail = true;
    mockApi({
      'GET /api/assignments/': () => json(200, []),
      'POST /api/auth/logout/': () => (fail ? json(500, { detail: 'boom' }) : json(204, null)),
    });
    renderApp({ user: alice });

    const signOut = screen.getByRole('button', { name: 'Sign out' });
    await userEvent.click(signOut);
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Could not sign out. Please try again.',
    );
    expect(screen.getByTestId('current-user')).toHaveTextContent('Signed in as alice');
    expect(signOut).toBeEnabled();

    fail = false;
    await userEvent.click(signOut);
    expect(await screen.findByLabelText('Username')).toBeInTheDocument();
    expect(screen.queryByText('Could not sign out. Please try again.')).not.toBeInTheDocument();
  });
});
