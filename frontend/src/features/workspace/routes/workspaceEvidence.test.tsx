import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';

import type { AnnotationState, KeySample, Suggestion } from '../../../api/types';
import { shadingStorageKey } from '../../../components/evidence/useShading';
import { makeKey, makePrefix, makeState } from '../../../test/factories';
import { alice, json, mockApi, renderApp } from '../../../test/utils';

const PATH = '/keys/10?assignment=3';

// Each prefix shaded: its last token at 26 - rank, the key's maximum 50 (not 25).
const prefixes = Array.from({ length: 25 }, (_, i) =>
  makePrefix(i + 1, {
    text: `prefix number ${i + 1} ends with tok${i + 1}`,
    tokens: ['prefix', ' number', ` ${i + 1}`, ' ends', ' with', ` tok${i + 1}`],
    token_coefficients: [0, 0.5, -5, 0, 0, 25 - i],
  }),
);

function sample(index: number, band: number | null): KeySample {
  return {
    kind: band === null ? 'random' : 'band',
    band,
    band_low: band === null ? null : (band - 1) * 10,
    band_high: band === null ? null : band * 10,
    coefficient: band === null ? 1 : band * 10 - 5,
    text: `lower sentence ${index}`,
    trigger_token: ` ${index}`,
    next_token: null,
    suffix: '',
    sentence: `lower sentence ${index}`,
    sentence_index: 1000 + index,
    position: 2,
    trigger_start: null,
    trigger_end: null,
    trigger_token_bytes: '',
    next_token_bytes: '',
    tokens: ['lower', ' sentence', ` ${index}`],
    token_coefficients: [0, 0, band === null ? 1 : band * 10 - 5],
  };
}

const samples = [sample(1, 1), sample(2, 5), sample(3, 5), sample(4, null)];

function ruleSuggestion(overrides: Partial<Suggestion> = {}): Suggestion {
  return {
    id: 70,
    method: 'rule',
    kind: 'shallow',
    description: 'trigger token "tok"',
    rule: { type: 'suffix', value: 'tok' },
    prefix_ranks: [1, 2, 3],
    decision: null,
    pattern_id: null,
    ...overrides,
  };
}

function withAccepted(state: AnnotationState): AnnotationState {
  return {
    ...state,
    version: state.version + 1,
    patterns: [
      {
        id: 90,
        description: 'trigger token "tok"',
        kind: 'shallow',
        prefix_ranks: [1, 2, 3],
        order: 0,
        client_id: null,
        source: 'suggestion',
        rule: { type: 'suffix', value: 'tok' },
        scores: null,
      },
    ],
  };
}

function key(suggestions: boolean) {
  return makeKey({
    prefixes,
    samples,
    max_coefficient: 50,
    density: 0.2,
    histogram: { edges: [0, 10, 20, 30], counts: [100, 10, 1] },
    study: {
      id: 7,
      guideline_version: null,
      guidelines_acknowledged: false,
      suggestions_enabled: suggestions,
      show_scores: false,
    },
  });
}

beforeEach(() => {
  window.localStorage.clear();
  window.sessionStorage.clear();
});

describe('the workspace evidence', () => {
  it('shades tokens on the key scale, toggled by its switch and by s, and remembers the choice', async () => {
    const user = userEvent.setup();
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, key(false)) });
    renderApp({ path: PATH, user: alice });
    const first = (await screen.findAllByTestId('prefix-row'))[0]!;
    const tokens = within(first).getAllByTestId('shaded-token');
    // 25 of the key's 50: half the scale, not the row's own maximum.
    expect(tokens.at(-1)!.dataset.share).toBe('0.500');
    expect(tokens.at(-1)).toHaveClass('shade-trigger');
    expect(tokens[2]!.dataset.share).toBe('-0.100');

    await user.click(screen.getByTestId('shading-toggle'));
    expect(within(first).queryAllByTestId('shaded-token')).toHaveLength(0);
    expect(first.querySelector('mark.trigger')).toHaveTextContent('tok1');
    expect(window.localStorage.getItem(shadingStorageKey(alice.id))).toBe('off');

    screen.getByTestId('prefix-list').focus();
    await user.keyboard('s');
    expect(
      within(screen.getAllByTestId('prefix-row')[0]!).getAllByTestId('shaded-token'),
    ).toHaveLength(6);
    expect(window.localStorage.getItem(shadingStorageKey(alice.id))).toBe('on');
    await user.keyboard('s');

    cleanup();
    renderApp({ path: PATH, user: alice });
    const again = (await screen.findAllByTestId('prefix-row'))[0]!;
    expect(within(again).queryAllByTestId('shaded-token')).toHaveLength(0);
    expect(screen.getByTestId('shading-toggle')).not.toBeChecked();
  });

  it('folds the samples under the top-k, band 5 first, and draws the histogram', async () => {
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, key(false)) });
    renderApp({ path: PATH, user: alice });
    const folds = await screen.findAllByTestId('sample-fold');
    expect(folds.map((fold) => fold.dataset.fold)).toEqual(['band-5', 'band-1', 'random']);
    expect(folds[0]!.querySelector('summary')).toHaveTextContent('Band 5 40 – 50 · 2 sentences');
    // Not in the prefix listbox: no pattern can select them.
    expect(screen.getAllByTestId('prefix-row')).toHaveLength(25);
    expect(within(screen.getByTestId('prefix-list')).queryByText(/lower sentence/)).toBeNull();
    expect(screen.getAllByTestId('histogram-bar')).toHaveLength(3);
    expect(screen.getByTestId('density')).toHaveTextContent('20%');
    // The study has suggestions off: no panel, and nothing asked.
    expect(screen.queryByTestId('suggestions')).not.toBeInTheDocument();
  });

  it('accepts a suggestion: it becomes a pattern with the suggestion badge', async () => {
    const user = userEvent.setup();
    const state = makeState();
    let accepted = false;
    const api = mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, key(true)),
      'GET /api/keys/10/suggestions/': () =>
        json(200, {
          enabled: true,
          suggestions: [ruleSuggestion(accepted ? { decision: 'accepted', pattern_id: 90 } : {})],
        }),
      'POST /api/keys/10/suggestions/70/accept/': () => {
        accepted = true;
        return json(201, withAccepted(state));
      },
    });
    renderApp({ path: PATH, user: alice });
    const panel = await screen.findByTestId('suggestions');
    expect(await within(panel).findByTestId('pattern-rule')).toHaveTextContent(
      'Rule: last word ends with “tok”',
    );
    await user.click(within(panel).getByRole('button', { name: 'Accept suggestion 1' }));

    const item = await screen.findByTestId('pattern-item');
    expect(within(item).getByTestId('suggestion-badge')).toHaveTextContent('suggestion');
    expect(await within(panel).findByTestId('suggestion-accepted')).toBeInTheDocument();
    const sent = api.mock.calls.find(([path]) => path.endsWith('/accept/'));
    expect(JSON.parse(String(sent![1]!.body))).toMatchObject({ version: state.version });
    // The prefixes it covers are labelled now.
    await waitFor(() =>
      expect(screen.getAllByTestId('prefix-label')[0]).toHaveAttribute('data-label', 'shallow'),
    );
  });

  it('asks for a description before accepting a cluster', async () => {
    const user = userEvent.setup();
    const state = makeState();
    const api = mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, key(true)),
      'GET /api/keys/10/suggestions/': () =>
        json(200, {
          enabled: true,
          suggestions: [
            ruleSuggestion({
              id: 71,
              method: 'cluster',
              kind: 'semantic',
              description: '',
              rule: null,
            }),
          ],
        }),
      'POST /api/keys/10/suggestions/71/accept/': () => json(201, withAccepted(state)),
    });
    renderApp({ path: PATH, user: alice });
    const panel = await screen.findByTestId('suggestions');
    await user.click(await within(panel).findByRole('button', { name: 'Select its prefixes' }));
    expect(
      screen
        .getAllByTestId('prefix-row')
        .filter((row) => row.getAttribute('aria-selected') === 'true')
        .map((row) => Number(row.dataset.rank)),
    ).toEqual([1, 2, 3]);
    await user.click(within(panel).getByRole('button', { name: 'Accept suggestion 1' }));
    await user.type(within(panel).getByTestId('suggestion-description'), 'numbers in lists{Enter}');
    await waitFor(() =>
      expect(api.mock.calls.some(([path]) => path.endsWith('/accept/'))).toBe(true),
    );
    const sent = api.mock.calls.find(([path]) => path.endsWith('/accept/'));
    expect(JSON.parse(String(sent![1]!.body))).toMatchObject({ description: 'numbers in lists' });
  });

  it('dismisses a suggestion, which then leaves the list', async () => {
    const user = userEvent.setup();
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, key(true)),
      'GET /api/keys/10/suggestions/': () =>
        json(200, { enabled: true, suggestions: [ruleSuggestion()] }),
      'POST /api/keys/10/suggestions/70/dismiss/': () =>
        json(200, ruleSuggestion({ decision: 'dismissed' })),
    });
    renderApp({ path: PATH, user: alice });
    const panel = await screen.findByTestId('suggestions');
    await user.click(await within(panel).findByRole('button', { name: 'Dismiss suggestion 1' }));
    expect(await within(panel).findByText('No suggestions for this key.')).toBeInTheDocument();
  });
});
