import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { advance, until, useFakeClock } from '../../../test/clock';
import { makeRun } from '../../../test/factories';
import { carol, json, mockApi, renderApp } from '../../../test/utils';
import { formatDuration, POLL_MS } from './MiningPage';

describe('mining runs screen', () => {
  it('draws a live progress bar with sentences, tokens/s and ETA, polling about every second', async () => {
    // A fake clock: the polls are counted against the page's time, not the machine's.
    useFakeClock();
    const answers = [
      makeRun(),
      makeRun({ progress: { ...makeRun().progress, sentences_done: 500, eta_seconds: 65 } }),
      makeRun({
        status: 'done',
        progress: { ...makeRun().progress, sentences_done: 1000, eta_seconds: 0 },
      }),
    ];
    // The run moves on once a second of (fake) time; the answer depends on the time
    // of the poll, not on how many polls came before.
    const start = Date.now();
    const polledAt: number[] = [];
    mockApi({
      'GET /api/admin/mining-runs/': () => {
        const at = Date.now() - start;
        polledAt.push(at);
        return json(200, [answers[Math.min(Math.floor(at / POLL_MS), answers.length - 1)]]);
      },
    });
    renderApp({ path: '/manage/mining', user: carol });

    const card = await until(() => screen.getByTestId('mining-run'));
    const bar = within(card).getByRole('progressbar', { name: 'Mining progress of wiki-run' });
    expect(bar).toHaveAttribute('aria-valuenow', '250');
    expect(bar).toHaveAttribute('aria-valuemax', '1000');
    expect(within(card).getByTestId('run-sentences')).toHaveTextContent('250 / 1,000 sentences');
    expect(within(card).getByTestId('run-speed')).toHaveTextContent('1,234 tokens/s');
    expect(within(card).getByTestId('run-eta')).toHaveTextContent('ETA 2:05');
    expect(within(card).getByTestId('run-status')).toHaveTextContent('mining');

    // Not before a second has passed...
    await advance(POLL_MS - 1);
    expect(polledAt.every((at) => at === 0)).toBe(true);
    expect(bar).toHaveAttribute('aria-valuenow', '250');
    // ...then once a second.
    await advance(1);
    await until(() => expect(bar).toHaveAttribute('aria-valuenow', '500'));
    expect(within(card).getByTestId('run-eta')).toHaveTextContent('ETA 1:05');
    await advance(POLL_MS);
    await until(() => expect(within(card).getByTestId('run-status')).toHaveTextContent('done'));
    const polls = polledAt.length;
    await advance(10 * POLL_MS);
    expect(polledAt).toHaveLength(polls); // nothing in progress: no more polling
    expect(polledAt).toEqual([0, POLL_MS, 2 * POLL_MS]); // one request each time, none doubled
    expect(within(card).queryByRole('button', { name: /Cancel/ })).not.toBeInTheDocument();
  });

  it('asks for the runs once on load, and once a second after that while one is active', async () => {
    useFakeClock();
    let gets = 0;
    mockApi({
      'GET /api/admin/mining-runs/': () => {
        gets += 1;
        return json(200, [makeRun()]);
      },
    });
    renderApp({ path: '/manage/mining', user: carol });
    await until(() => screen.getByTestId('mining-run'));
    // Let every answer and re-render settle without moving the clock: still one request.
    for (let i = 0; i < 20; i += 1) await act(() => Promise.resolve());
    expect(gets).toBe(1);
    await advance(POLL_MS);
    await until(() => expect(gets).toBe(2));
    await advance(POLL_MS);
    await until(() => expect(gets).toBe(3));
  });

  it('shows how long a finished run took and its final tokens/s, newest first', async () => {
    const done = makeRun({
      id: 1,
      study_name: 'older',
      status: 'done',
      finished_at: '2025-03-01T10:32:06Z',
      duration_seconds: 3725,
      final_tokens_per_second: 5120.4,
      progress: { ...makeRun().progress, tokens_per_second: 0, eta_seconds: null },
    });
    const newer = makeRun({ id: 2, study_name: 'newer', duration_seconds: 65 });
    mockApi({ 'GET /api/admin/mining-runs/': () => json(200, [newer, done]) });
    renderApp({ path: '/manage/mining', user: carol });

    const cards = await screen.findAllByTestId('mining-run');
    expect(cards.map((card) => within(card).getByText(/newer|older/).textContent)).toEqual([
      'newer',
      'older',
    ]);
    expect(within(cards[1]!).getByTestId('run-duration')).toHaveTextContent('took 1:02:05');
    expect(within(cards[1]!).getByTestId('run-final-speed')).toHaveTextContent(
      'final 5,120 tokens/s',
    );
    expect(within(cards[1]!).queryByTestId('run-speed')).not.toBeInTheDocument();
    expect(within(cards[0]!).getByTestId('run-duration')).toHaveTextContent('running for 1:05');
    expect(within(cards[0]!).queryByTestId('run-final-speed')).not.toBeInTheDocument();
  });

  it('cancels a run', async () => {
    const user = userEvent.setup();
    let cancelled = false;
    mockApi({
      'GET /api/admin/mining-runs/': () =>
        json(200, [
          cancelled ? makeRun({ status: 'cancelled', cancel_requested: true }) : makeRun(),
        ]),
      'POST /api/admin/mining-runs/1/cancel/': () => {
        cancelled = true;
        return json(200, makeRun({ status: 'cancelled', cancel_requested: true }));
      },
    });
    renderApp({ path: '/manage/mining', user: carol });
    await user.click(await screen.findByRole('button', { name: 'Cancel the run wiki-run' }));
    expect(await screen.findByTestId('run-status')).toHaveTextContent('cancelled');
  });

  it('starts a run from the form', async () => {
    const user = userEvent.setup();
    let body: Record<string, unknown> | null = null;
    mockApi({
      'GET /api/admin/mining-runs/': () => json(200, body ? [makeRun({ status: 'queued' })] : []),
      'POST /api/admin/mining-runs/': (init) => {
        body = JSON.parse(String(init?.body));
        return json(201, makeRun({ status: 'queued', study_name: 'fresh' }));
      },
    });
    renderApp({ path: '/manage/mining', user: carol });
    await screen.findByText('No mining runs yet.');
    await user.type(screen.getByLabelText('Study name'), 'fresh');
    await user.click(screen.getByRole('button', { name: 'Start mining' }));
    expect(await screen.findByTestId('run-status')).toHaveTextContent('queued');
    expect(body).toMatchObject({
      study_name: 'fresh',
      model: 'builtin:minilm',
      corpus: 'builtin:wiki-vital',
      keys_per_layer: 10,
      top_k: 25,
      max_sentences: null,
    });
  });

  it('formats durations', () => {
    expect(formatDuration(5)).toBe('0:05');
    expect(formatDuration(3725)).toBe('1:02:05');
  });
});
