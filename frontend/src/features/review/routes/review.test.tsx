import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';

import type { Gold, GoldPattern, ReviewKeyDetail, ReviewQueuePage } from '../../../api/review';
import type { User } from '../../../api/types';
import { makePrefix } from '../../../test/factories';
import { alice, carol, json, mockApi, renderApp } from '../../../test/utils';

/** A curator who is not staff. */
const dora: User = {
  id: 4,
  username: 'dora',
  is_staff: false,
  is_annotator: false,
  is_curator: true,
  display_name: 'dora',
};

const STUDIES = [
  {
    id: 7,
    name: 'demo',
    archived: false,
    keys: 40,
    ready: 12,
    curated: 3,
    flagged: 2,
    check_rate: 0,
  },
];

function makeQueue(overrides: Partial<ReviewQueuePage> = {}): ReviewQueuePage {
  return {
    count: 2,
    offset: 0,
    limit: 50,
    layers: [2, 3],
    batches: [{ id: 12, name: 'layers 1-4' }],
    results: [
      {
        key_id: 11,
        layer: 2,
        index: 5,
        annotators: ['alice', 'bob'],
        disagreement: 0.8,
        alpha: 0.1,
        gold_status: 'draft',
        is_check: false,
        flags: [{ annotator: 'bob', reason: 'unclear', note: 'the trigger is odd' }],
        ready: true,
      },
      {
        key_id: 10,
        layer: 3,
        index: 42,
        annotators: ['alice', 'bob'],
        disagreement: 0.2,
        alpha: null,
        gold_status: null,
        is_check: false,
        flags: [],
        ready: true,
      },
    ],
    ...overrides,
  };
}

function makeGold(overrides: Partial<Gold> = {}): Gold {
  return {
    status: 'draft',
    version: 3,
    note: '',
    is_check: false,
    curator: 'dora',
    updated_at: '2025-03-01T09:30:00Z',
    patterns: [],
    labels: [],
    ...overrides,
  };
}

const NO_SCORES = {
  detection: null,
  embedding: null,
  shuffled_detection: null,
  shuffled_embedding: null,
};

function goldPattern(overrides: Partial<GoldPattern> = {}): GoldPattern {
  return {
    id: 900,
    description: 'years',
    kind: 'shallow',
    prefix_ranks: [1, 2, 3],
    source: 'written',
    source_annotator: null,
    source_pattern_id: null,
    client_id: null,
    rule: null,
    scores: NO_SCORES,
    ...overrides,
  };
}

function makeDetail(overrides: Partial<ReviewKeyDetail> = {}): ReviewKeyDetail {
  return {
    key: {
      id: 10,
      layer: 3,
      index: 42,
      study: { id: 7, name: 'demo', archived: false, is_causal: true },
      density: 0.1,
      max_coefficient: 25,
      value_top_tokens: [],
    },
    prefixes: Array.from({ length: 5 }, (_, i) => makePrefix(i + 1)),
    samples: [],
    heldout: [],
    heldout_random: [],
    suggestions: [],
    annotations: [
      {
        id: 1,
        annotator: 'alice',
        status: 'submitted',
        note: '',
        submitted_at: '2025-03-01T09:30:00Z',
        active_seconds: 60,
        patterns: [
          {
            id: 501,
            description: 'numbers',
            kind: 'shallow',
            prefix_ranks: [1, 3, 4],
            source: 'written',
            rule: null,
            scores: NO_SCORES,
          },
        ],
        labels: ['shallow', 'not-covered', 'shallow', 'shallow', 'not-covered'],
      },
      {
        id: 2,
        annotator: 'bob',
        status: 'submitted',
        note: 'hard one',
        submitted_at: '2025-03-01T09:30:00Z',
        active_seconds: 90,
        patterns: [
          {
            id: 601,
            description: 'quantities',
            kind: 'semantic',
            prefix_ranks: [1, 3, 5],
            source: 'written',
            rule: null,
            scores: NO_SCORES,
          },
        ],
        labels: ['semantic', 'not-covered', 'semantic', 'not-covered', 'semantic'],
      },
    ],
    gold: null,
    flags: [],
    awaiting: [],
    neighbours: { previous_key_id: 9, next_key_id: 11 },
    ...overrides,
  };
}

const KEY_PATH = '/manage/review/keys/10';
const QUEUE_URL = '/api/review/studies/7/queue/?status=unreviewed&offset=0&limit=50';

function rows() {
  return screen.getAllByTestId('review-row');
}

function selectedRanks() {
  return rows()
    .filter((row) => row.getAttribute('aria-selected') === 'true')
    .map((row) => Number(row.dataset.rank));
}

function cells(row: HTMLElement) {
  return within(row)
    .getAllByTestId('label-cell')
    .map((cell) => `${cell.dataset.who}=${cell.dataset.label}:${cell.textContent}`);
}

function bodyOf(init: RequestInit | undefined): Record<string, unknown> {
  return JSON.parse(String(init?.body)) as Record<string, unknown>;
}

/** alice's pattern 501 ("numbers", prefixes 1, 3 and 4) as the gold holds it once adopted. */
function adoptedFromAlice(overrides: Partial<GoldPattern> = {}): GoldPattern {
  return goldPattern({
    description: 'numbers',
    prefix_ranks: [1, 3, 4],
    source: 'adopted',
    source_annotator: 'alice',
    source_pattern_id: 501,
    ...overrides,
  });
}

/** Opens key 10's review screen as dora, the curator. */
function openKey() {
  const user = userEvent.setup();
  renderApp({ path: KEY_PATH, user: dora });
  return user;
}

/** Opens key 10's review screen and adopts alice's pattern with its button. */
async function openKeyAndAdoptAlices() {
  const user = openKey();
  await user.click(await screen.findByRole('button', { name: 'Adopt alice’s pattern “numbers”' }));
  return user;
}

beforeEach(() => {
  window.sessionStorage.clear();
});

describe('who reaches the review screens', () => {
  it('lets a curator who is not staff into the review, not into the rest of /manage', async () => {
    mockApi({ 'GET /api/review/studies/': () => json(200, STUDIES) });
    const { unmount } = renderApp({ path: '/manage/review', user: dora });
    const link = await screen.findByRole('link', { name: 'demo' });
    expect(link).toHaveAttribute('href', '/manage/studies/7/review');
    expect(screen.getByTestId('review-link')).toHaveAttribute('href', '/manage/review');
    unmount();

    renderApp({ path: '/manage', user: dora });
    expect(screen.getByTestId('staff-only')).toBeInTheDocument();
  });

  it("marks the review tab, not the admin's studies tab, on an admin's review screens", async () => {
    mockApi({ 'GET /api/review/keys/10/': () => json(200, makeDetail()) });
    renderApp({ path: KEY_PATH, user: carol });
    const tabs = await screen.findByRole('navigation', { name: 'Review' });
    expect(within(tabs).getByRole('link', { name: 'Studies' })).not.toHaveAttribute('aria-current');
  });

  it('sends a curator who does not annotate from the home page to the review', async () => {
    mockApi({ 'GET /api/review/studies/': () => json(200, STUDIES) });
    renderApp({ path: '/', user: dora });
    expect(await screen.findByRole('heading', { name: 'Review' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'demo' })).toBeInTheDocument();
  });

  it('opens the keyboard help with the review keys on ?', async () => {
    mockApi({ 'GET /api/review/keys/10/': () => json(200, makeDetail()) });
    const user = openKey();
    await waitFor(() => expect(screen.getByTestId('review-grid')).toHaveFocus());
    await user.keyboard('?');
    const help = await screen.findByTestId('keyboard-help');
    expect(help).toHaveTextContent('Adopt the focused annotator pattern into the gold');
    expect(help).toHaveTextContent('Save the gold');
  });

  it('shows annotators neither the link nor the screens', async () => {
    mockApi({ 'GET /api/assignments/': () => json(200, []) });
    const { unmount } = renderApp({ path: '/', user: alice });
    await screen.findByTestId('assignments-empty');
    expect(screen.queryByTestId('review-link')).not.toBeInTheDocument();
    unmount();

    for (const path of ['/manage/review', KEY_PATH, '/manage/studies/7/review']) {
      const { unmount: done } = renderApp({ path, user: alice });
      expect(screen.getByRole('heading', { name: 'Page not found' })).toBeInTheDocument();
      done();
    }
  });
});

describe('the review queue', () => {
  it('lists the keys most disagreed-on first, with flags and gold status', async () => {
    mockApi({
      'GET /api/review/studies/': () => json(200, STUDIES),
      [`GET ${QUEUE_URL}`]: () => json(200, makeQueue()),
    });
    renderApp({ path: '/manage/studies/7/review', user: dora });
    expect(await screen.findByRole('heading', { name: 'Review queue: demo' })).toBeInTheDocument();
    const found = screen.getAllByTestId('queue-row');
    expect(found.map((row) => row.dataset.key)).toEqual(['11', '10']);
    expect(within(found[0]!).getByTestId('disagreement')).toHaveTextContent('80%');
    expect(within(found[0]!).getByTestId('queue-flags')).toHaveTextContent(
      'bob: unclear — the trigger is odd',
    );
    expect(within(found[0]!).getByTestId('gold-status')).toHaveTextContent('gold draft');
    expect(within(found[1]!).getByTestId('gold-status')).toHaveTextContent('no gold');
    expect(within(found[0]!).getByRole('link')).toHaveAttribute('href', '/manage/review/keys/11');
    expect(screen.getByTestId('queue-range')).toHaveTextContent('1–2 of 2');
  });

  it('filters by layer, batch and status through the address', async () => {
    const asked: string[] = [];
    const only = makeQueue({ count: 1, results: makeQueue().results.slice(1) });
    mockApi({
      'GET /api/review/studies/': () => json(200, STUDIES),
      'GET /api/review/studies/7/queue/?batch=12&status=curated&offset=0&limit=50': () => {
        asked.push('batch+curated');
        return json(200, makeQueue());
      },
      'GET /api/review/studies/7/queue/?layer=3&batch=12&status=curated&offset=0&limit=50': () => {
        asked.push('layer+batch+curated');
        return json(200, only);
      },
    });
    const user = userEvent.setup();
    renderApp({ path: '/manage/studies/7/review?batch=12&status=curated', user: dora });
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    expect(screen.getByLabelText('Status')).toHaveValue('curated');
    expect(screen.getByLabelText('Batch')).toHaveValue('12');

    await user.selectOptions(screen.getByLabelText('Layer'), '3');
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(1));
    expect(asked).toEqual(['batch+curated', 'layer+batch+curated']);
    expect(screen.getByLabelText('Layer')).toHaveValue('3');
  });
});

describe('flagged keys', () => {
  /** Key 12, flagged by alice, which neither she nor bob has submitted. */
  const FLAGGED = makeQueue({
    count: 1,
    results: [
      {
        key_id: 12,
        layer: 2,
        index: 8,
        annotators: [],
        disagreement: 0,
        alpha: null,
        gold_status: null,
        is_check: false,
        flags: [{ annotator: 'alice', reason: 'tokenization', note: 'split word' }],
        ready: false,
      },
    ],
  });

  it('lists flagged keys under Flagged, ready or not, with their flags', async () => {
    const asked: string[] = [];
    mockApi({
      'GET /api/review/studies/': () => json(200, STUDIES),
      [`GET ${QUEUE_URL}`]: () => json(200, makeQueue()),
      'GET /api/review/studies/7/queue/?status=flagged&offset=0&limit=50': () => {
        asked.push('flagged');
        return json(200, FLAGGED);
      },
    });
    const user = userEvent.setup();
    renderApp({ path: '/manage/studies/7/review', user: dora });
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    await user.selectOptions(screen.getByLabelText('Status'), 'Flagged');
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(1));
    expect(asked).toEqual(['flagged']);
    const row = screen.getByTestId('queue-row');
    expect(within(row).getByTestId('queue-flags')).toHaveTextContent(
      'alice: tokenization problem — split word',
    );
    expect(within(row).getByTestId('not-ready')).toHaveTextContent(
      'not every annotator has submitted',
    );
    expect(within(row).getByRole('link', { name: 'Layer 2 · key 8' })).toHaveAttribute(
      'href',
      '/manage/review/keys/12',
    );
    // A ready key says nothing of the kind.
    expect(screen.getByLabelText('Status')).toHaveValue('flagged');
  });

  it('links the study list’s flagged count to the Flagged filter', async () => {
    mockApi({ 'GET /api/review/studies/': () => json(200, STUDIES) });
    renderApp({ path: '/manage/review', user: dora });
    const link = await screen.findByRole('link', { name: '2 flagged keys of demo' });
    expect(link).toHaveAttribute('href', '/manage/studies/7/review?status=flagged');
  });

  it('says who a key not every annotator has submitted waits for, and shows the drafts', async () => {
    const detail = makeDetail({
      annotations: [{ ...makeDetail().annotations[0]!, status: 'draft', submitted_at: null }],
      awaiting: ['alice', 'bob'],
      flags: [
        {
          annotator: 'alice',
          reason: 'tokenization',
          note: 'split word',
          created_at: '2025-03-01T09:30:00Z',
        },
      ],
    });
    mockApi({ 'GET /api/review/keys/10/': () => json(200, detail) });
    renderApp({ path: KEY_PATH, user: dora });
    const notice = await screen.findByTestId('awaiting');
    expect(notice).toHaveTextContent(
      'Not every annotator has submitted this key: waiting for alice (draft), bob (not started).',
    );
    expect(screen.getByTestId('key-flags')).toHaveTextContent('alice: tokenization problem');
    expect(screen.getByTestId('annotator-legend')).toHaveTextContent('A alice (draft)');
    // Blind toward annotators as ever; the curator may adopt from a draft.
    expect(screen.getByRole('button', { name: 'Adopt alice’s pattern “numbers”' })).toBeEnabled();
  });
});

describe('the adjudication screen', () => {
  it("shows each annotator's label per prefix, in colour and in letters, and marks disagreement", async () => {
    mockApi({ 'GET /api/review/keys/10/': () => json(200, makeDetail()) });
    renderApp({ path: KEY_PATH, user: dora });
    expect(
      await screen.findByRole('heading', { name: 'Review · layer 3 · key 42' }),
    ).toBeInTheDocument();
    expect(rows()).toHaveLength(5);
    // The trigger shows in place, as in the workspace.
    expect(rows()[0]!.querySelector('mark')).toHaveTextContent('tok1');
    expect(cells(rows()[0]!)).toEqual([
      'alice=shallow:SHalice: shallow',
      'bob=semantic:SEbob: semantic',
      'Gold=not-covered:–Gold: not-covered',
    ]);
    expect(cells(rows()[1]!)).toEqual([
      'alice=not-covered:–alice: not-covered',
      'bob=not-covered:–bob: not-covered',
      'Gold=not-covered:–Gold: not-covered',
    ]);
    const cell = within(rows()[0]!).getAllByTestId('label-cell')[0]!;
    expect(cell).toHaveStyle({ background: '#3d6fb6' });
    expect(rows().map((row) => row.dataset.disagree)).toEqual([
      'true',
      'false',
      'true',
      'true',
      'true',
    ]);
    expect(within(rows()[0]!).getByTestId('disagree-mark')).toHaveTextContent(
      'Annotators disagree',
    );
    expect(within(rows()[1]!).queryByTestId('disagree-mark')).not.toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Next key →' })).toHaveAttribute(
      'href',
      '/manage/review/keys/11',
    );
  });

  it("adopts an annotator's pattern: a POST with its source and its fields", async () => {
    const sent: Record<string, unknown>[] = [];
    mockApi({
      'GET /api/review/keys/10/': () => json(200, makeDetail()),
      'POST /api/review/keys/10/gold/patterns/': (init) => {
        sent.push(bodyOf(init));
        return json(
          201,
          makeGold({
            version: 1,
            patterns: [
              adoptedFromAlice({
                id: 901,
              }),
            ],
          }),
        );
      },
    });
    await openKeyAndAdoptAlices();
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toMatchObject({
      version: 0,
      description: 'numbers',
      kind: 'shallow',
      prefix_ranks: [1, 3, 4],
      source_pattern_id: 501,
    });
    expect(typeof sent[0]!.client_id).toBe('string');
    const gold = await screen.findByTestId('gold-pattern');
    await waitFor(() => expect(gold).toHaveTextContent('adopted from alice'));
    expect(within(rows()[3]!).getAllByTestId('label-cell')[2]).toHaveAttribute(
      'data-label',
      'shallow',
    );
  });

  it('matches a just-adopted pattern to its create by client_id before the answer', async () => {
    const sent: { method: string; url: string; body: Record<string, unknown> }[] = [];
    let answerCreate: (response: Response) => void = () => {};
    mockApi({
      'GET /api/review/keys/10/': () => json(200, makeDetail()),
      'POST /api/review/keys/10/gold/patterns/': (init) => {
        const body = bodyOf(init);
        sent.push({ method: 'POST', url: 'patterns/', body });
        return new Promise<Response>((resolve) => {
          answerCreate = resolve;
        });
      },
      'PATCH /api/review/keys/10/gold/patterns/901/': (init) => {
        sent.push({ method: 'PATCH', url: 'patterns/901/', body: bodyOf(init) });
        return json(
          200,
          makeGold({
            version: 2,
            patterns: [
              adoptedFromAlice({
                id: 901,
                description: 'digits',
                client_id: String(sent[0]!.body.client_id),
              }),
            ],
          }),
        );
      },
    });
    const user = await openKeyAndAdoptAlices();
    await waitFor(() => expect(sent).toHaveLength(1));
    // Still unanswered: the pending pattern is already shown as alice's, and her
    // pattern as adopted.
    const pending = screen.getByTestId('gold-pattern');
    expect(pending).toHaveTextContent('adopted from alice');
    const alices = screen.getAllByTestId('annotator-pattern')[0]!;
    expect(alices).toHaveTextContent('Already in the gold');
    // Edited before the server answered: the edit goes to the id the answer gives it.
    await user.click(screen.getByRole('button', { name: 'Edit gold pattern “numbers”' }));
    const description = screen.getByLabelText('Pattern description');
    await user.clear(description);
    await user.type(description, 'digits');
    await user.click(screen.getByRole('button', { name: 'Save pattern' }));
    answerCreate(
      json(
        201,
        makeGold({
          version: 1,
          patterns: [
            adoptedFromAlice({
              id: 901,
              client_id: String(sent[0]!.body.client_id),
            }),
          ],
        }),
      ),
    );
    await waitFor(() => expect(sent).toHaveLength(2));
    expect(sent[1]).toEqual({
      method: 'PATCH',
      url: 'patterns/901/',
      body: { description: 'digits', kind: 'shallow', prefix_ranks: [1, 3, 4], version: 1 },
    });
    await waitFor(() => expect(screen.getByTestId('gold-pattern')).toHaveTextContent('digits'));
    expect(screen.getAllByTestId('gold-pattern')).toHaveLength(1);
  });

  it('edits an adopted pattern before adding it', async () => {
    const sent: Record<string, unknown>[] = [];
    mockApi({
      'GET /api/review/keys/10/': () => json(200, makeDetail()),
      'POST /api/review/keys/10/gold/patterns/': (init) => {
        sent.push(bodyOf(init));
        return json(201, makeGold({ version: 1 }));
      },
    });
    const user = openKey();
    await user.click(
      await screen.findByRole('button', { name: 'Edit bob’s pattern “quantities”, then adopt it' }),
    );
    expect(screen.getByTestId('adopting')).toHaveTextContent('Adopting bob’s pattern');
    expect(selectedRanks()).toEqual([1, 3, 5]);
    const description = screen.getByLabelText('Pattern description');
    await user.clear(description);
    await user.type(description, 'amounts');
    await user.click(screen.getByRole('button', { name: 'Add pattern' }));
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toMatchObject({
      description: 'amounts',
      kind: 'semantic',
      prefix_ranks: [1, 3, 5],
      source_pattern_id: 601,
    });
  });

  it('edits and deletes a gold pattern', async () => {
    const sent: { method: string; body?: Record<string, unknown> }[] = [];
    const withPattern = makeGold({ version: 3, patterns: [goldPattern()] });
    mockApi({
      'GET /api/review/keys/10/': () => json(200, makeDetail({ gold: withPattern })),
      'PATCH /api/review/keys/10/gold/patterns/900/': (init) => {
        sent.push({ method: 'PATCH', body: bodyOf(init) });
        return json(
          200,
          makeGold({
            version: 4,
            patterns: [goldPattern({ description: 'dates', prefix_ranks: [1, 2, 3, 4] })],
          }),
        );
      },
      'DELETE /api/review/keys/10/gold/patterns/900/?version=4': () => {
        sent.push({ method: 'DELETE' });
        return json(200, makeGold({ version: 5 }));
      },
    });
    const user = openKey();
    await user.click(await screen.findByRole('button', { name: 'Edit gold pattern “years”' }));
    expect(selectedRanks()).toEqual([1, 2, 3]);
    const description = screen.getByLabelText('Pattern description');
    await user.clear(description);
    await user.type(description, 'dates');
    await user.click(rows()[3]!);
    await user.click(screen.getByRole('button', { name: 'Save pattern' }));
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toEqual({
      method: 'PATCH',
      body: { description: 'dates', kind: 'shallow', prefix_ranks: [1, 2, 3, 4], version: 3 },
    });
    await user.click(await screen.findByRole('button', { name: 'Delete gold pattern “dates”' }));
    await waitFor(() => expect(sent).toHaveLength(2));
    expect(sent[1]).toEqual({ method: 'DELETE' });
    expect(await screen.findByText('No gold pattern yet.')).toBeInTheDocument();
  });

  it('shows what changed when the gold was changed elsewhere (409), then carries on', async () => {
    const theirs = goldPattern({ id: 950, description: 'Bob said so' });
    let posts = 0;
    const versions: unknown[] = [];
    mockApi({
      'GET /api/review/keys/10/': () => json(200, makeDetail({ gold: makeGold({ version: 3 }) })),
      'POST /api/review/keys/10/gold/patterns/': (init) => {
        posts += 1;
        versions.push(bodyOf(init).version);
        if (posts === 1) {
          return json(409, {
            detail: 'Stale version.',
            code: 'stale_version',
            current: makeGold({ version: 5, patterns: [theirs], curator: 'erin' }),
          });
        }
        return json(
          201,
          makeGold({
            version: 6,
            patterns: [
              theirs,
              adoptedFromAlice({
                id: 951,
              }),
            ],
          }),
        );
      },
    });
    await openKeyAndAdoptAlices();
    const notice = await screen.findByTestId('notice');
    expect(notice).toHaveTextContent('Added there: “Bob said so”');
    await waitFor(() => expect(screen.getAllByTestId('gold-pattern')).toHaveLength(2));
    expect(versions).toEqual([3, 5]);
  });

  it('is driven by the keyboard: select, kind, adopt, note and save', async () => {
    const sent: { url: string; body: Record<string, unknown> }[] = [];
    let version = 0;
    const answer = (url: string) => (init: RequestInit | undefined) => {
      sent.push({ url, body: bodyOf(init) });
      version += 1;
      return json(
        200,
        makeGold({ version, status: url.endsWith('submit/') ? 'submitted' : 'draft' }),
      );
    };
    mockApi({
      'GET /api/review/keys/10/': () => json(200, makeDetail()),
      'POST /api/review/keys/10/gold/patterns/': answer('patterns'),
      'PATCH /api/review/keys/10/gold/': answer('gold'),
      'POST /api/review/keys/10/gold/submit/': answer('submit/'),
    });
    const user = openKey();
    await screen.findByTestId('review-grid');
    await waitFor(() => expect(screen.getByTestId('review-grid')).toHaveFocus());

    await user.keyboard('xjxjjx');
    expect(selectedRanks()).toEqual([1, 2, 4]);
    await user.keyboard('k{Shift>}{ArrowUp}{/Shift}');
    expect(selectedRanks()).toEqual([1, 2, 3, 4]);
    await user.keyboard('2');
    expect(screen.getByRole('radio', { name: /^2 semantic/ })).toBeChecked();

    // `a` adopts the annotator pattern that has focus.
    within(screen.getAllByTestId('annotator-column')[1]!).getByTestId('annotator-pattern').focus();
    await user.keyboard('a');
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]!.body).toMatchObject({ source_pattern_id: 601, description: 'quantities' });

    // The note saves through the queue when the field is left.
    await user.keyboard('n');
    expect(screen.getByLabelText('Curator’s note')).toHaveFocus();
    await user.keyboard('agreed on quantities{Escape}');
    await waitFor(() => expect(sent).toHaveLength(2));
    expect(sent[1]).toEqual({ url: 'gold', body: { version: 1, note: 'agreed on quantities' } });

    await user.keyboard('{Control>}{Enter}{/Control}');
    await waitFor(() => expect(sent).toHaveLength(3));
    expect(sent[2]).toEqual({ url: 'submit/', body: { version: 2 } });
    expect(await screen.findByRole('button', { name: 'Reopen the gold' })).toBeInTheDocument();
    expect(screen.getByTestId('gold-status')).toHaveTextContent('gold saved');
  });

  it('marks a check key and says why a gold pattern cannot be added yet', async () => {
    const sent: Record<string, unknown>[] = [];
    mockApi({
      'GET /api/review/keys/10/': () => json(200, makeDetail()),
      'PATCH /api/review/keys/10/gold/': (init) => {
        sent.push(bodyOf(init));
        return json(200, makeGold({ version: 1, is_check: true }));
      },
    });
    const user = openKey();
    await screen.findByTestId('review-grid');
    expect(screen.getByRole('button', { name: 'Add pattern' })).toBeDisabled();
    expect(screen.getByTestId('add-blockers')).toHaveTextContent(
      'Select at least 3 prefixes (0 selected).',
    );
    await user.click(screen.getByLabelText(/Check key/));
    await waitFor(() => expect(sent).toEqual([{ version: 0, is_check: true }]));
    expect(screen.getByLabelText(/Check key/)).toBeChecked();
  });

  it('shows each prefix’s coefficient bar and its next token in a visible form', async () => {
    const prefixes = [
      makePrefix(1, { coefficient: 4, next_token: ' fog' }),
      makePrefix(2, { coefficient: 2, next_token: '\n' }),
      makePrefix(3, { coefficient: 1, next_token: '<0xCE>' }),
      makePrefix(4, { coefficient: -0.5, next_token: null }),
      makePrefix(5, { coefficient: 0, next_token: 'a\tb' }),
    ];
    mockApi({ 'GET /api/review/keys/10/': () => json(200, makeDetail({ prefixes })) });
    renderApp({ path: KEY_PATH, user: dora });
    await screen.findByTestId('review-grid');
    const next = rows().map((row) => within(row).getByTestId('next-token').textContent);
    expect(next).toEqual([
      'Next token: →␣fog',
      'Next token: →⏎',
      'Next token: →⟨0xCE⟩',
      'Next token: →unknown (sentence cut here)',
      'Next token: →a⟨0x09⟩b',
    ]);
    const fills = rows().map((row) => (row.querySelector('.coef-fill') as HTMLElement).style.width);
    expect(fills).toEqual(['100%', '50%', '25%', '0%', '0%']);
    expect(within(rows()[0]!).getByTestId('coefficient')).toHaveTextContent('4');
    expect(rows()[3]!.querySelector('.coefficient')).toHaveClass('inactive');
  });

  it('letters the annotators’ columns, with their full names in the legend and the header', async () => {
    const [first, second] = makeDetail().annotations;
    const detail = makeDetail({
      annotations: [
        { ...first!, annotator: 'example-annotator-1' },
        { ...second!, annotator: 'example-annotator-2', status: 'draft' },
      ],
    });
    mockApi({ 'GET /api/review/keys/10/': () => json(200, detail) });
    renderApp({ path: KEY_PATH, user: dora });
    const legend = await screen.findByTestId('annotator-legend');
    expect(
      within(legend)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual(['A example-annotator-1', 'B example-annotator-2 (draft)', 'Gold']);
    const heads = screen.getAllByTestId('label-head');
    expect(heads.map((head) => head.getAttribute('title'))).toEqual([
      'A: example-annotator-1',
      'B: example-annotator-2',
      'Gold',
    ]);
    expect(heads.map((head) => head.textContent)).toEqual([
      'Aexample-annotator-1',
      'Bexample-annotator-2',
      'Gold',
    ]);
    // Each cell names its annotator in full.
    expect(cells(rows()[0]!)[1]).toBe(
      'example-annotator-2=semantic:SEexample-annotator-2: semantic',
    );
  });

  it('disables Adopt for a pattern already in the gold, and `a` says so', async () => {
    const gold = makeGold({ version: 2, patterns: [adoptedFromAlice()] });
    mockApi({ 'GET /api/review/keys/10/': () => json(200, makeDetail({ gold })) });
    const user = openKey();
    const alices = await screen.findByRole('button', { name: 'Adopt alice’s pattern “numbers”' });
    expect(alices).toBeDisabled();
    expect(alices).toHaveAccessibleDescription('Already in the gold.');
    expect(screen.getByRole('button', { name: 'Adopt bob’s pattern “quantities”' })).toBeEnabled();
    // Editing it into a new gold pattern stays possible.
    expect(
      screen.getByRole('button', { name: 'Edit alice’s pattern “numbers”, then adopt it' }),
    ).toBeEnabled();
    within(screen.getAllByTestId('annotator-column')[0]!).getByTestId('annotator-pattern').focus();
    await user.keyboard('a');
    expect(await screen.findByTestId('notice')).toHaveTextContent('Already in the gold.');
    expect(screen.getAllByTestId('gold-pattern')).toHaveLength(1);
  });

  it('replays gold writes left from an earlier visit, on any page', async () => {
    window.localStorage.setItem(
      'ffkv.review-writes.4.closed-tab',
      JSON.stringify({
        beat: 0,
        writes: [{ id: 'w1', keyId: 10, op: { type: 'note', note: 'left over' } }],
      }),
    );
    const sent: Record<string, unknown>[] = [];
    mockApi({
      'GET /api/review/studies/': () => json(200, STUDIES),
      'GET /api/review/keys/10/': () => json(200, makeDetail({ gold: makeGold({ version: 3 }) })),
      'PATCH /api/review/keys/10/gold/': (init) => {
        sent.push(bodyOf(init));
        return json(200, makeGold({ version: 4, note: 'left over' }));
      },
    });
    renderApp({ path: '/manage/review', user: dora });
    await waitFor(() => expect(sent).toEqual([{ version: 3, note: 'left over' }]));
  });
});

describe('the evidence on the review screen', () => {
  const heldout = (rank: number | null, text: string) => ({
    ...makePrefix(1, { text, trigger_token: ' end' }),
    rank,
    tokens: [text, ' end'],
    token_coefficients: [0, 20],
  });

  it("shows each pattern's scores and the held-out examples, shaded on the key scale", async () => {
    const user = userEvent.setup();
    const detail = makeDetail({
      heldout: [heldout(26, 'held top'), heldout(27, 'held second')],
      heldout_random: [heldout(null, 'held random')],
      suggestions: [
        {
          id: 5,
          method: 'rule',
          kind: 'shallow',
          description: 'trigger token "end"',
          rule: { type: 'token', value: 'end' },
          prefix_ranks: [1, 2, 3],
          scores: {
            detection: 0.7,
            embedding: 0.6,
            shuffled_detection: 0.5,
            shuffled_embedding: 0.5,
          },
          decisions: [
            { annotator: 'bob', decision: 'accepted', pattern_id: 601, at: '2025-03-01T09:30:00Z' },
            {
              annotator: 'alice',
              decision: 'dismissed',
              pattern_id: null,
              at: '2025-03-01T09:31:00Z',
            },
          ],
        },
      ],
    });
    const bob = detail.annotations[1]!;
    bob.patterns[0] = {
      ...bob.patterns[0]!,
      source: 'suggestion',
      rule: { type: 'token', value: 'end' },
      scores: {
        detection: 0.82,
        embedding: 0.615,
        shuffled_detection: 0.5,
        shuffled_embedding: null,
      },
    };
    mockApi({ 'GET /api/review/keys/10/': () => json(200, detail) });
    renderApp({ path: KEY_PATH, user: carol });

    const cards = await screen.findAllByTestId('annotator-pattern');
    const scored = cards[1]!;
    expect(within(scored).getByTestId('suggestion-badge')).toHaveTextContent('suggestion');
    expect(within(scored).getByTestId('pattern-rule')).toHaveTextContent('trigger token is “end”');
    expect(within(scored).getByTestId('score-detection')).toHaveTextContent('0.82');
    expect(within(scored).getByTestId('score-embedding')).toHaveAttribute('data-value', '0.615');
    expect(within(scored).getByTestId('score-shuffled_embedding')).toHaveTextContent('—');

    const suggestion = screen.getByTestId('review-suggestion');
    expect(within(suggestion).getByTestId('suggestion-decisions')).toHaveTextContent(
      '2 decisions: bob accepted, alice dismissed',
    );
    expect(within(suggestion).getByTestId('score-detection')).toHaveTextContent('0.70');

    const folds = screen.getAllByTestId('heldout-fold');
    expect(folds.map((fold) => fold.dataset.fold)).toEqual(['heldout', 'heldout-random']);
    await user.click(folds[0]!.querySelector('summary')!);
    const rowsShown = within(folds[0]!).getAllByTestId('example-row');
    expect(rowsShown).toHaveLength(2);
    // The key's maximum is 25 (makeDetail): 20 is 0.8 of it.
    expect(within(rowsShown[0]!).getAllByTestId('shaded-token')[1]!.dataset.share).toBe('0.800');
  });
});
