import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { makeKey } from '../../../test/factories';
import { alice, json, mockApi, renderApp } from '../../../test/utils';

const PATH = '/keys/10?assignment=3';

describe('flagging a key', () => {
  it('opens on f, sends the reason and note, and shows the flag', async () => {
    const user = userEvent.setup();
    let sent: unknown = null;
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
      'PUT /api/keys/10/flag/': (init) => {
        sent = JSON.parse(String(init?.body));
        return json(200, sent);
      },
    });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    expect(screen.getByTestId('key-flag-state')).toHaveTextContent('Not flagged');
    screen.getByTestId('prefix-list').focus();
    await user.keyboard('f');
    const dialog = screen.getByRole('dialog', { name: 'Flag this key' });
    await user.click(within(dialog).getByRole('radio', { name: 'Other' }));
    await user.click(within(dialog).getByRole('button', { name: 'Save the flag' }));
    // "Other" needs a note: nothing is sent without one.
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Say what is wrong');
    expect(sent).toBeNull();
    await user.type(within(dialog).getByRole('textbox', { name: /Note/ }), 'same as L1:3');
    await user.click(within(dialog).getByRole('button', { name: 'Save the flag' }));
    await waitFor(() => expect(dialog).not.toBeInTheDocument());
    expect(sent).toEqual({ reason: 'other', note: 'same as L1:3' });
    expect(screen.getByTestId('key-flag-state')).toHaveTextContent('Flagged: Other');
  });

  it('takes back "Choose a reason." once a reason is picked, and the note hint once a note is typed', async () => {
    const user = userEvent.setup();
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.click(screen.getByRole('button', { name: /Flag this key/ }));
    const dialog = screen.getByRole('dialog', { name: 'Flag this key' });
    await user.click(within(dialog).getByRole('button', { name: 'Save the flag' }));
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Choose a reason');
    await user.click(within(dialog).getByRole('radio', { name: 'Other' }));
    expect(within(dialog).queryByRole('alert')).not.toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Save the flag' }));
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Say what is wrong');
    await user.type(within(dialog).getByRole('textbox', { name: /Note/ }), 'x');
    expect(within(dialog).queryByRole('alert')).not.toBeInTheDocument();
  });

  it('shows the current flag and removes it', async () => {
    const user = userEvent.setup();
    let removed = 0;
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        json(200, makeKey({ flag: { reason: 'tokenization', note: 'split word' } })),
      'DELETE /api/keys/10/flag/': () => {
        removed += 1;
        return new Response(null, { status: 204 });
      },
    });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    expect(screen.getByTestId('key-flag-state')).toHaveTextContent('Flagged: Tokenization problem');
    await user.click(screen.getByRole('button', { name: /Flag this key/ }));
    const dialog = screen.getByRole('dialog', { name: 'Flag this key' });
    expect(within(dialog).getByRole('radio', { name: 'Tokenization problem' })).toBeChecked();
    expect(within(dialog).getByRole('textbox', { name: /Note/ })).toHaveValue('split word');
    await user.click(within(dialog).getByRole('button', { name: 'Remove the flag' }));
    await waitFor(() => expect(dialog).not.toBeInTheDocument());
    expect(removed).toBe(1);
    expect(screen.getByTestId('key-flag-state')).toHaveTextContent('Not flagged');
  });

  it('does not open on f when single-key shortcuts are off', async () => {
    const user = userEvent.setup();
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.click(screen.getByRole('checkbox', { name: 'Single-key shortcuts' }));
    screen.getByTestId('prefix-list').focus();
    await user.keyboard('f');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });
});
