import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { advance, until, useFakeClock } from '../../../test/clock';
import { makeKey } from '../../../test/factories';
import { alice, carol, json, makeAssignment, mockApi, renderApp } from '../../../test/utils';

describe('HomePage', () => {
  it('shows the empty state when there are no assignments', async () => {
    mockApi({ 'GET /api/assignments/': () => json(200, []) });
    renderApp({ user: alice });

    expect(screen.getByRole('heading', { name: 'My assignments' })).toBeInTheDocument();
    const empty = await screen.findByTestId('assignments-empty');
    expect(empty).toHaveTextContent('No assignments yet.');
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
  });

  it('lists assignments with their progress', async () => {
    mockApi({
      'GET /api/assignments/': () =>
        json(200, [
          makeAssignment({ id: 1, batch_name: 'layers 1-4', keys_submitted: 10, keys_total: 40 }),
          makeAssignment({ id: 2, batch_name: 'layers 5-6', keys_submitted: 0, keys_total: 20 }),
        ]),
    });
    renderApp({ user: alice });

    const table = await screen.findByRole('table');
    const rows = within(table).getAllByTestId('assignment-row');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent('layers 1-4');
    expect(rows[0]).toHaveTextContent('demo');
    expect(rows[0]).toHaveTextContent('10 / 40 keys');

    const bar = within(rows[0]!).getByRole('progressbar');
    expect(bar).toHaveAttribute('aria-valuenow', '10');
    expect(bar).toHaveAttribute('aria-valuemax', '40');
    expect(bar).toHaveAccessibleName('layers 1-4: 10 of 40 keys submitted');
    expect(bar.firstElementChild).toHaveStyle({ width: '25%' });
    expect(within(rows[1]!).getByRole('progressbar')).toHaveAttribute('aria-valuenow', '0');
    expect(screen.queryByTestId('assignments-empty')).not.toBeInTheDocument();
  });

  it('shows the username and a sign-out button in the header', async () => {
    mockApi({
      'GET /api/assignments/': () => json(200, []),
      'POST /api/auth/logout/': () => json(204, null),
    });
    renderApp({ user: alice });
    expect(screen.getByTestId('current-user')).toHaveTextContent('Signed in as alice');

    await userEvent.click(screen.getByRole('button', { name: 'Sign out' }));
    expect(await screen.findByLabelText('Username')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Sign out' })).not.toBeInTheDocument();
  });

  it('shows the Django admin link to staff only', async () => {
    mockApi({ 'GET /api/assignments/': () => json(200, []) });
    const { unmount } = renderApp({ user: alice });
    await screen.findByTestId('assignments-empty');
    expect(screen.queryByRole('link', { name: 'Django admin' })).not.toBeInTheDocument();
    unmount();

    renderApp({ user: { ...carol, is_annotator: true } });
    await screen.findByTestId('assignments-empty');
    expect(screen.getByRole('link', { name: 'Django admin' })).toHaveAttribute('href', '/admin/');
  });

  it('sends staff who do not annotate to the management screens', async () => {
    mockApi({ 'GET /api/admin/studies/': () => json(200, []) });
    renderApp({ user: carol });
    expect(await screen.findByRole('heading', { name: 'Studies' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Mining runs' })).toHaveAttribute(
      'href',
      '/manage/mining',
    );
    expect(screen.getByRole('link', { name: 'Django admin' })).toHaveAttribute('href', '/admin/');
  });

  it('opens the next key of an assignment from its Start button', async () => {
    mockApi({
      'GET /api/assignments/': () => json(200, [makeAssignment({ id: 3, keys_submitted: 0 })]),
      'GET /api/next-key/?assignment=3': () => json(200, { key_id: 10, assignment_id: 3 }),
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
    });
    renderApp({ user: alice });
    await userEvent.click(await screen.findByRole('button', { name: 'Start layers 1-4' }));
    expect(await screen.findByRole('heading', { name: 'Layer 3 · key 42' })).toBeInTheDocument();
  });

  it('says so when an assignment has nothing left', async () => {
    mockApi({
      'GET /api/assignments/': () => json(200, [makeAssignment({ id: 3, keys_submitted: 40 })]),
      'GET /api/next-key/?assignment=3': () => json(204, null),
    });
    renderApp({ user: alice });
    await userEvent.click(await screen.findByRole('button', { name: 'Continue layers 1-4' }));
    expect(await screen.findByText('Every key of this batch is submitted.')).toBeInTheDocument();
  });

  it('shows an error with a retry when the list cannot load', async () => {
    let calls = 0;
    mockApi({
      'GET /api/assignments/': () =>
        ++calls === 1 ? json(500, { detail: 'Internal server error.' }) : json(200, []),
    });
    renderApp({ user: alice });
    expect(await screen.findByRole('alert')).toHaveTextContent('Internal server error.');
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByTestId('assignments-empty')).toBeInTheDocument();
  });

  it('switches the language of the page and remembers it', async () => {
    mockApi({ 'GET /api/assignments/': () => json(200, []) });
    renderApp({ user: alice });
    await screen.findByTestId('assignments-empty');

    await userEvent.selectOptions(screen.getByLabelText('Language'), 'zh-CN');

    expect(await screen.findByRole('heading', { name: '我的标注任务' })).toBeInTheDocument();
    expect(screen.getByTestId('assignments-empty')).toHaveTextContent('暂无标注任务。');
    expect(screen.getByRole('button', { name: '退出登录' })).toBeInTheDocument();
    expect(document.documentElement.lang).toBe('zh-CN');
    expect(window.localStorage.getItem('ffkv.language')).toBe('zh-CN');
  });

  it('asks again after a server error, and shows the list once it answers', async () => {
    useFakeClock();
    let calls = 0;
    mockApi({
      'GET /api/assignments/': () => {
        calls += 1;
        return calls === 1 ? json(503, { detail: 'unavailable' }) : json(200, [makeAssignment()]);
      },
    });
    renderApp({ user: alice, retry: true });
    await until(() => expect(calls).toBe(1));
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();

    await advance(5_000);
    await until(() => expect(screen.getAllByTestId('assignment-row')).toHaveLength(1));
    expect(calls).toBe(2);
  });

  it('does not retry a refusal, and says why at once', async () => {
    useFakeClock();
    let calls = 0;
    mockApi({
      'GET /api/assignments/': () => {
        calls += 1;
        return json(404, { detail: 'No such thing.' });
      },
    });
    renderApp({ user: alice, retry: true });
    await until(() => expect(screen.getByRole('alert')).toHaveTextContent('No such thing.'));
    await advance(60_000);
    expect(calls).toBe(1);
  });
});
