import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import type { AdminAnnotator } from '../../../api/types';
import i18n from '../../../i18n';
import { carol, json, mockApi, renderApp } from '../../../test/utils';

function annotator(id: number, username: string, isActive = true): AdminAnnotator {
  return { id, username, is_active: isActive, keys_assigned: 4, keys_submitted: 1 };
}

const ALICE = annotator(1, 'alice');
const BOB = annotator(2, 'bob');

/** The annotators screen, with a deactivation endpoint that records what it was sent. */
function setUp() {
  const sent: unknown[] = [];
  let listed = [ALICE, BOB];
  const fetchMock = mockApi({
    'GET /api/admin/annotators/': () => json(200, listed),
    'POST /api/admin/annotators/1/deactivate/': (init) => {
      sent.push(JSON.parse(String(init?.body)));
      listed = [{ ...ALICE, is_active: false }, BOB];
      return json(200, { annotator: listed[0], keys_moved: 3, keys_skipped: 0, drafts_moved: 0 });
    },
  });
  renderApp({ path: '/manage/annotators', user: carol });
  return { sent, fetchMock };
}

async function openDialog() {
  const table = await screen.findByTestId('annotators');
  await userEvent.selectOptions(
    within(table).getByLabelText('Give the unfinished keys of alice to'),
    'bob',
  );
  await userEvent.click(
    within(table).getAllByRole('button', { name: 'Deactivate and reassign…' })[0]!,
  );
  return screen.getByRole('dialog', { name: 'Deactivate alice?' });
}

describe('AnnotatorsPage: deactivating an annotator', () => {
  it('asks first, keeps the drafts by default and says that bob starts blank', async () => {
    const { sent } = setUp();
    const dialog = await openDialog();

    const transfer = within(dialog).getByLabelText("Also give alice's drafts to bob");
    expect(transfer).not.toBeChecked();
    expect(within(dialog).getByTestId('deactivate-outcome')).toHaveTextContent(
      "bob starts each of these keys blank and will not see alice's patterns or notes.",
    );
    expect(sent).toEqual([]); // nothing happens before the admin confirms

    await userEvent.click(within(dialog).getByRole('button', { name: 'Deactivate alice' }));

    expect(sent).toEqual([{ reassign_to: 2, transfer_drafts: false }]);
    expect(await screen.findByText('no')).toBeInTheDocument(); // alice, reloaded: inactive
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('hands the drafts over only when asked, and says that bob will see them', async () => {
    const { sent } = setUp();
    const dialog = await openDialog();

    await userEvent.click(within(dialog).getByLabelText("Also give alice's drafts to bob"));
    expect(within(dialog).getByTestId('deactivate-outcome')).toHaveTextContent(
      "bob will see alice's draft patterns and notes on these keys and carry on from them",
    );
    await userEvent.click(within(dialog).getByRole('button', { name: 'Deactivate alice' }));

    expect(sent).toEqual([{ reassign_to: 2, transfer_drafts: true }]);
  });

  it('cancels without a request, and reopens with the drafts kept again', async () => {
    const { sent } = setUp();
    let dialog = await openDialog();
    await userEvent.click(within(dialog).getByLabelText("Also give alice's drafts to bob"));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();

    await userEvent.click(screen.getAllByRole('button', { name: 'Deactivate and reassign…' })[0]!);
    dialog = screen.getByRole('dialog', { name: 'Deactivate alice?' });
    expect(within(dialog).getByLabelText("Also give alice's drafts to bob")).not.toBeChecked();
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(sent).toEqual([]);
  });

  it('shows the error in the dialog when the server refuses', async () => {
    mockApi({
      'GET /api/admin/annotators/': () => json(200, [ALICE, BOB]),
      'POST /api/admin/annotators/1/deactivate/': () =>
        json(400, { detail: 'bob is not an active annotator.' }),
    });
    renderApp({ path: '/manage/annotators', user: carol });
    const dialog = await openDialog();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Deactivate alice' }));
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(
      'bob is not an active annotator.',
    );
  });
});

describe('AnnotatorsPage: deactivating an annotator with nothing unfinished', () => {
  it('asks, then deactivates without naming a replacement', async () => {
    const sent: unknown[] = [];
    const dave = { ...annotator(4, 'dave'), keys_assigned: 0, keys_submitted: 0 };
    let listed = [ALICE, dave];
    mockApi({
      'GET /api/admin/annotators/': () => json(200, listed),
      'POST /api/admin/annotators/4/deactivate/': (init) => {
        sent.push(JSON.parse(String(init?.body)));
        listed = [ALICE, { ...dave, is_active: false }];
        return json(200, { annotator: listed[1], keys_moved: 0, keys_skipped: 0, drafts_moved: 0 });
      },
    });
    renderApp({ path: '/manage/annotators', user: carol });
    const row = (await screen.findAllByRole('row')).find((r) => r.textContent?.startsWith('dave'))!;
    expect(within(row).queryByLabelText('Give the unfinished keys of dave to')).toBeNull();
    await userEvent.click(within(row).getByRole('button', { name: 'Deactivate…' }));
    expect(within(row).getByText(/dave has no unfinished keys/)).toBeInTheDocument();
    expect(sent).toEqual([]);
    await userEvent.click(within(row).getByRole('button', { name: 'Deactivate dave' }));
    expect(sent).toEqual([{ reassign_to: null, transfer_drafts: false }]);
    expect(await screen.findByText('no')).toBeInTheDocument();
  });
});

describe('AnnotatorsPage: accounts', () => {
  const LINK = { path: '/set-password#NA/abc-123', expires_at: '2025-03-04T09:30:00Z' };

  it('creates an annotator and shows the one-time link to hand over', async () => {
    const sent: unknown[] = [];
    let listed = [ALICE, BOB];
    const dave = annotator(4, 'dave');
    mockApi({
      'GET /api/admin/annotators/': () => json(200, listed),
      'POST /api/admin/annotators/': (init) => {
        sent.push(JSON.parse(String(init?.body)));
        listed = [ALICE, BOB, dave];
        return json(201, { annotator: dave, link: LINK });
      },
    });
    renderApp({ path: '/manage/annotators', user: carol });
    await screen.findByTestId('annotators');
    await userEvent.type(screen.getByLabelText('Username of the new annotator'), ' dave ');
    await userEvent.click(screen.getByRole('button', { name: 'Create and invite' }));

    expect(sent).toEqual([{ username: 'dave' }]);
    const notice = await screen.findByTestId('password-link');
    expect(within(notice).getByRole('status')).toHaveTextContent(
      /^dave was created\. Send them this link/,
    );
    expect(within(notice).getByLabelText('One-time link for dave')).toHaveValue(
      `${window.location.origin}/set-password#NA/abc-123`,
    );
    expect(
      await within(screen.getByTestId('annotators')).findByRole('rowheader', { name: 'dave' }),
    ).toBeInTheDocument();
    expect(screen.getByLabelText('Username of the new annotator')).toHaveValue('');
  });

  it('says why a name is refused', async () => {
    mockApi({
      'GET /api/admin/annotators/': () => json(200, [ALICE]),
      'POST /api/admin/annotators/': () =>
        json(400, { detail: "There is already a user named 'alice'." }),
    });
    renderApp({ path: '/manage/annotators', user: carol });
    await userEvent.type(await screen.findByLabelText('Username of the new annotator'), 'alice');
    await userEvent.click(screen.getByRole('button', { name: 'Create and invite' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      "There is already a user named 'alice'.",
    );
  });

  it('makes a new password link only after asking', async () => {
    let made = 0;
    mockApi({
      'GET /api/admin/annotators/': () => json(200, [ALICE, BOB]),
      'POST /api/admin/annotators/1/password-link/': () => {
        made += 1;
        return json(200, { annotator: ALICE, link: LINK });
      },
    });
    renderApp({ path: '/manage/annotators', user: carol });
    await userEvent.click(
      await screen.findByRole('button', { name: 'New password link for alice' }),
    );
    expect(made).toBe(0);
    expect(
      screen.getByText(
        'Make a new password link for alice? Their current password stops working now.',
      ),
    ).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'New password link for alice' }));

    const notice = await screen.findByTestId('password-link');
    expect(made).toBe(1);
    expect(within(notice).getByRole('status')).toHaveTextContent(
      /^New link for alice: .* Their old password and earlier links no longer work\.$/,
    );
  });
});

describe('AnnotatorsPage: usernames that are refused', () => {
  async function refuse(code: string, typed: string) {
    mockApi({
      'GET /api/admin/annotators/': () => json(200, [ALICE]),
      'POST /api/admin/annotators/': () => json(400, { detail: 'English prose', code }),
    });
    renderApp({ path: '/manage/annotators', user: carol });
    await userEvent.type(await screen.findByLabelText(i18n.t('annotators.newUsername')), typed);
    await userEvent.click(screen.getByRole('button', { name: i18n.t('annotators.create') }));
    return screen.findByRole('alert');
  }

  it.each([
    ['username_confusable', 'cаrol', "This username can be mistaken for an existing account's"],
    ['username_mixed_scripts', 'pаul', 'mixes Latin, Cyrillic or Greek letters'],
    ['username_taken', 'ａlice', 'There is already an account with this username.'],
    ['username_invalid', 'a b', 'A username may hold only letters, digits'],
  ])('translates %s', async (code, typed, expected) => {
    const alert = await refuse(code, typed);
    expect(alert).toHaveTextContent(expected);
    expect(alert).not.toHaveTextContent('English prose');
  });

  it('says so in Chinese', async () => {
    await i18n.changeLanguage('zh-CN');
    try {
      const alert = await refuse('username_confusable', 'cаrol');
      expect(alert).toHaveTextContent('此用户名容易与现有账户的用户名混淆');
    } finally {
      await i18n.changeLanguage('en');
    }
  });
});
