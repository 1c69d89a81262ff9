import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import type { AdminAnnotator, Batch, BatchKey, BatchProgress } from '../../../api/types';
import { carol, json, mockApi, renderApp } from '../../../test/utils';
import { BATCH_KEYS_PAGE } from '../components/BatchKeys';

function annotator(id: number, username: string): AdminAnnotator {
  return { id, username, is_active: true, keys_assigned: 0, keys_submitted: 0 };
}

const PEOPLE = [annotator(1, 'alice'), annotator(2, 'bob'), annotator(4, 'dave')];

function batch(annotators: AdminAnnotator[] = []): Batch {
  return {
    id: 5,
    study_id: 7,
    name: 'layer one',
    key_count: 120,
    created_at: '2025-03-01T09:30:00Z',
    annotators: annotators.map((a, i) => ({
      id: a.id,
      username: a.username,
      assignment_id: 10 + i,
    })),
  };
}

function progress(overlap: number): BatchProgress {
  const counts = { keys_assigned: 0, submitted: 0, draft: 0, new: 0 };
  return {
    batch_id: 5,
    keys_total: 120,
    annotators_per_key_min: overlap,
    annotators_per_key_max: overlap,
    total: counts,
    per_annotator: [],
    per_layer: [],
  };
}

function keys(offset: number, limit: number, count: number): BatchKey[] {
  return Array.from({ length: Math.min(limit, count - offset) }, (_, i) => ({
    key_id: 100 + offset + i,
    layer: 1,
    index: offset + i,
    annotators: [
      { annotator_id: 1, username: 'alice', status: offset + i === 0 ? 'submitted' : 'new' },
      ...(offset + i === 0 ? [{ annotator_id: 2, username: 'bob', status: 'draft' as const }] : []),
    ],
  }));
}

function setUp(current: Batch, overlap = 0) {
  const sent: { path: string; body: unknown }[] = [];
  mockApi({
    'GET /api/admin/studies/7/batches/': () => json(200, [current]),
    'GET /api/admin/batches/5/progress/': () => json(200, progress(overlap)),
    'GET /api/admin/annotators/': () => json(200, PEOPLE),
    [`GET /api/admin/batches/5/keys/?limit=${BATCH_KEYS_PAGE}&offset=0`]: () =>
      json(200, {
        count: 120,
        limit: BATCH_KEYS_PAGE,
        offset: 0,
        results: keys(0, BATCH_KEYS_PAGE, 120),
      }),
    [`GET /api/admin/batches/5/keys/?limit=${BATCH_KEYS_PAGE}&offset=${BATCH_KEYS_PAGE}`]: () =>
      json(200, {
        count: 120,
        limit: BATCH_KEYS_PAGE,
        offset: BATCH_KEYS_PAGE,
        results: keys(BATCH_KEYS_PAGE, BATCH_KEYS_PAGE, 120),
      }),
    'POST /api/admin/batches/5/assignments/': (init) => {
      sent.push({ path: 'assign', body: JSON.parse(String(init?.body)) });
      return json(201, batch(PEOPLE.slice(0, 2)));
    },
    'POST /api/admin/batches/5/assignments/extend/': (init) => {
      sent.push({ path: 'extend', body: JSON.parse(String(init?.body)) });
      return json(200, { batch: batch(PEOPLE), keys_added: 120, keys_short: 0 });
    },
  });
  renderApp({ path: '/manage/studies/7/batches/5', user: carol });
  return sent;
}

describe('BatchPage: the assign form', () => {
  it('drops "choose an annotator" as soon as someone is ticked', async () => {
    const sent = setUp(batch());
    const form = await screen.findByRole('form', { name: 'Assign to annotators' });
    await userEvent.click(within(form).getByRole('button', { name: 'Assign' }));
    expect(within(form).getByTestId('assign-problem')).toHaveTextContent(
      'Choose at least one annotator.',
    );

    await userEvent.click(await within(form).findByLabelText('alice'));
    await userEvent.click(within(form).getByLabelText('bob'));
    expect(within(form).queryByTestId('assign-problem')).not.toBeInTheDocument();
    expect(sent).toEqual([]);
  });

  it('says in the page, live, when the overlap exceeds the annotators chosen', async () => {
    const sent = setUp(batch());
    const form = await screen.findByRole('form', { name: 'Assign to annotators' });
    await userEvent.click(await within(form).findByLabelText('alice'));
    await userEvent.click(within(form).getByLabelText('bob'));
    const overlap = within(form).getByLabelText('Overlap (annotators per key)');
    await userEvent.clear(overlap);
    await userEvent.type(overlap, '3');

    expect(within(form).getByTestId('overlap-problem')).toHaveTextContent(
      'The overlap (3) cannot be larger than the number of annotators chosen (2)',
    );
    expect(overlap).toHaveAttribute('aria-invalid', 'true');
    await userEvent.click(within(form).getByRole('button', { name: 'Assign' }));
    expect(sent).toEqual([]);

    await userEvent.click(within(form).getByLabelText('dave'));
    expect(within(form).queryByTestId('overlap-problem')).not.toBeInTheDocument();
    await userEvent.click(within(form).getByRole('button', { name: 'Assign' }));
    expect(sent).toEqual([{ path: 'assign', body: { annotators: [1, 2, 4], overlap: 3 } }]);
  });
});

describe('BatchPage: an assigned batch', () => {
  it('adds a third annotator and raises the overlap', async () => {
    const sent = setUp(batch(PEOPLE.slice(0, 2)), 2);
    const form = await screen.findByRole('form', { name: 'Add annotators or raise the overlap' });
    expect(within(form).queryByLabelText('alice')).not.toBeInTheDocument(); // already on it
    const overlap = within(form).getByLabelText('Overlap (annotators per key)');
    expect(overlap).toHaveValue(2);

    await userEvent.clear(overlap);
    await userEvent.type(overlap, '3');
    expect(within(form).getByTestId('overlap-problem')).toHaveTextContent(
      'cannot be larger than the number of active annotators on the batch, the ones added included (2)',
    );
    await userEvent.click(within(form).getByLabelText('dave'));
    expect(within(form).queryByTestId('overlap-problem')).not.toBeInTheDocument();
    await userEvent.click(within(form).getByRole('button', { name: 'Add and give out keys' }));

    expect(sent).toEqual([{ path: 'extend', body: { annotators: [4], overlap: 3 } }]);
    expect(await screen.findByText('Done: 120 keys given out.')).toBeInTheDocument();
  });

  it('refuses to lower the overlap, in the page', async () => {
    setUp(batch(PEOPLE.slice(0, 2)), 2);
    const form = await screen.findByRole('form', { name: 'Add annotators or raise the overlap' });
    const overlap = within(form).getByLabelText('Overlap (annotators per key)');
    await userEvent.clear(overlap);
    await userEvent.type(overlap, '1');
    expect(within(form).getByTestId('overlap-problem')).toHaveTextContent(
      'The overlap can only be raised: it is 2 now.',
    );
  });

  it('lists the keys with each annotator’s status, a page at a time', async () => {
    setUp(batch(PEOPLE.slice(0, 2)), 1);
    const table = await screen.findByTestId('batch-keys');
    const rows = within(table).getAllByTestId('batch-key');
    expect(rows).toHaveLength(BATCH_KEYS_PAGE);
    const first = within(rows[0]!).getAllByRole('cell');
    expect(first.map((cell) => cell.textContent)).toEqual(['Submitted', 'Draft']);
    expect(
      within(rows[1]!)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['Not opened', '—']);
    expect(screen.getByTestId('batch-keys-range')).toHaveTextContent('Keys 1–50 of 120');
    expect(screen.getByRole('button', { name: 'Previous page' })).toBeDisabled();

    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));
    expect(await screen.findByText('Layer 1 · key 50')).toBeInTheDocument();
    expect(screen.getByTestId('batch-keys-range')).toHaveTextContent('Keys 51–100 of 120');
  });
});

describe('BatchPage: refreshing the progress', () => {
  it('keeps the figures on screen while the refresh loads, and when it fails', async () => {
    let answer: (response: Response) => void = () => {};
    let progressCalls = 0;
    mockApi({
      'GET /api/admin/studies/7/batches/': () => json(200, [batch(PEOPLE.slice(0, 2))]),
      'GET /api/admin/batches/5/progress/': () => {
        progressCalls += 1;
        if (progressCalls === 1) return json(200, progress(2));
        return new Promise<Response>((resolve) => {
          answer = resolve;
        });
      },
      'GET /api/admin/annotators/': () => json(200, PEOPLE),
      [`GET /api/admin/batches/5/keys/?limit=${BATCH_KEYS_PAGE}&offset=0`]: () =>
        json(200, {
          count: 120,
          limit: BATCH_KEYS_PAGE,
          offset: 0,
          results: keys(0, BATCH_KEYS_PAGE, 120),
        }),
    });
    renderApp({ path: '/manage/studies/7/batches/5', user: carol });
    const dashboard = await screen.findByTestId('batch-progress');
    expect(dashboard).toHaveTextContent('120 keys; 2–2 annotators per key.');

    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    await waitFor(() => expect(progressCalls).toBe(2));
    // The refresh is under way: the figures from before are still there.
    expect(screen.getByTestId('batch-progress')).toHaveTextContent(
      '120 keys; 2–2 annotators per key.',
    );

    answer(json(500, { detail: 'The server broke.' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The server broke.');
    // A failed refresh says so, and the figures from before stay.
    expect(screen.getByTestId('batch-progress')).toHaveTextContent(
      '120 keys; 2–2 annotators per key.',
    );
  });
});
