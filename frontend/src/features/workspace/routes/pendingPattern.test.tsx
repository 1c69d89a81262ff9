import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';

import type { AnnotationState } from '../../../api/types';
import { makeKey, makeState } from '../../../test/factories';
import { alice, json, mockApi, renderApp } from '../../../test/utils';
import { addBlockers } from '../../../components/patternEditor/composer';
import { draftKey } from '../lib/composerDraft';
import { composerHolding } from '../../../components/patternEditor/pendingPattern';

const PATH = '/keys/10?assignment=3';

function holding(input: {
  selected: number[];
  description: string;
  kind?: 'shallow' | null;
  submitted?: boolean;
  editing?: { description: string; kind: 'shallow'; prefix_ranks: number[] } | null;
}) {
  const kind = input.kind ?? null;
  const submitted = input.submitted ?? false;
  return composerHolding({
    submitted,
    blockers: addBlockers({
      submitted,
      selected: input.selected.length,
      description: input.description,
      kind,
    }),
    description: input.description,
    kind,
    selected: input.selected,
    editing: input.editing ?? null,
  });
}

describe('what the composer holds when submit is asked for', () => {
  it('is a complete pattern exactly when the Add button would take it', () => {
    expect(holding({ selected: [1, 2, 3], description: 'years', kind: 'shallow' })).toBe(
      'complete',
    );
    expect(holding({ selected: [1, 2, 3], description: '   ', kind: 'shallow' })).toBe('none');
  });

  it('is incomplete where typed text cannot be added as it is', () => {
    expect(holding({ selected: [1, 2], description: 'years', kind: 'shallow' })).toBe('incomplete');
    expect(holding({ selected: [1, 2, 3], description: 'years' })).toBe('incomplete');
  });

  it('is nothing for a selection or a kind alone, on a submitted key, or for an unchanged edit', () => {
    expect(holding({ selected: [1, 2, 3], description: '', kind: 'shallow' })).toBe('none');
    expect(holding({ selected: [], description: '' })).toBe('none');
    expect(
      holding({ selected: [1, 2, 3], description: 'years', kind: 'shallow', submitted: true }),
    ).toBe('none');
    const editing = { description: 'years', kind: 'shallow' as const, prefix_ranks: [3, 1, 2] };
    expect(holding({ selected: [1, 2, 3], description: 'years ', kind: 'shallow', editing })).toBe(
      'none',
    );
    expect(holding({ selected: [1, 2, 4], description: 'years', kind: 'shallow', editing })).toBe(
      'complete',
    );
  });
});

function created(state: AnnotationState, body: { description: string; client_id: string }) {
  return {
    ...state,
    version: state.version + 1,
    patterns: [
      {
        id: 50,
        description: body.description,
        kind: 'shallow' as const,
        prefix_ranks: [1, 2, 3],
        order: 0,
        client_id: body.client_id,
        source: 'written' as const,
        rule: null,
        scores: null,
      },
    ],
  };
}

/** The server of these tests: records the writes in order; the create can be refused. */
function server({ refuseCreate = false } = {}) {
  const writes: string[] = [];
  let state = makeState();
  mockApi({
    'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
    'GET /api/keys/11/?assignment=3': () =>
      json(200, makeKey({ id: 11, index: 43, annotation: makeState({ key_id: 11 }) })),
    'POST /api/keys/10/patterns/': (init) => {
      writes.push('create');
      if (refuseCreate) {
        return json(400, { detail: 'A pattern must cover at least 3 prefixes.', code: 'invalid' });
      }
      state = created(state, JSON.parse(String(init?.body)));
      return json(201, state);
    },
    'POST /api/keys/10/submit/': () => {
      writes.push('submit');
      state = { ...state, status: 'submitted', version: state.version + 1 };
      return json(200, state);
    },
    'GET /api/next-key/?assignment=3': () => json(200, { key_id: 11, assignment_id: 3 }),
  });
  return writes;
}

/** Select 3 prefixes, pick a kind, type a description; do not press Add. */
async function halfBuild(user: ReturnType<typeof userEvent.setup>, description = 'years') {
  await screen.findAllByTestId('prefix-row');
  screen.getByTestId('prefix-list').focus();
  await user.keyboard(`xjxjx1d${description}`);
}

describe('submitting with a pattern still in the composer', () => {
  beforeEach(() => {
    window.sessionStorage.clear();
    window.localStorage.clear();
  });

  it('asks on Ctrl+Enter, with focus on the first choice; Escape cancels and gives focus back', async () => {
    const user = userEvent.setup();
    const writes = server();
    renderApp({ path: PATH, user: alice });
    await halfBuild(user);
    const description = screen.getByLabelText('Pattern description');
    expect(description).toHaveFocus();

    await user.keyboard('{Control>}{Enter}{/Control}');
    const dialog = screen.getByRole('dialog', { name: 'Add the pattern in the composer?' });
    expect(within(dialog).getByTestId('pending-description')).toHaveTextContent('years');
    expect(within(dialog).getByRole('button', { name: 'Add it and submit' })).toHaveFocus();
    expect(within(dialog).getByRole('button', { name: 'Discard it and submit' })).toBeVisible();
    await user.keyboard('{Escape}');
    expect(dialog).not.toBeInTheDocument();
    expect(description).toHaveFocus();
    expect(description).toHaveValue('years');
    expect(writes).toEqual([]);
  });

  it('asks on the Submit button too; "Add it and submit" adds, then submits once it is saved', async () => {
    const user = userEvent.setup();
    const writes = server();
    renderApp({ path: PATH, user: alice });
    await halfBuild(user);
    await user.click(screen.getByRole('button', { name: /Submit and go to the next key/ }));
    await act(async () => {
      await user.click(screen.getByRole('button', { name: 'Add it and submit' }));
    });
    expect(await screen.findByRole('heading', { name: 'Layer 3 · key 43' })).toBeInTheDocument();
    expect(writes).toEqual(['create', 'submit']);
    expect(window.localStorage.getItem(draftKey(alice.id, 10))).toBeNull();
  });

  it('never submits where the add is refused, and puts the pattern back in the composer', async () => {
    const user = userEvent.setup();
    const writes = server({ refuseCreate: true });
    renderApp({ path: PATH, user: alice });
    await halfBuild(user);
    await user.keyboard('{Control>}{Enter}{/Control}');
    await act(async () => {
      await user.click(screen.getByRole('button', { name: 'Add it and submit' }));
    });
    await waitFor(() => expect(screen.getByRole('alert')).toHaveTextContent('at least 3'));
    expect(writes).toEqual(['create']);
    expect(screen.getByLabelText('Pattern description')).toHaveValue('years');
    expect(screen.getByRole('heading', { name: 'Layer 3 · key 42' })).toBeInTheDocument();
  });

  it('"Discard it and submit" submits without the pattern and leaves no draft behind', async () => {
    const user = userEvent.setup();
    const writes = server();
    renderApp({ path: PATH, user: alice });
    await halfBuild(user);
    expect(window.localStorage.getItem(draftKey(alice.id, 10))).not.toBeNull();
    await user.keyboard('{Control>}{Enter}{/Control}');
    await act(async () => {
      await user.click(screen.getByRole('button', { name: 'Discard it and submit' }));
    });
    expect(await screen.findByRole('heading', { name: 'Layer 3 · key 43' })).toBeInTheDocument();
    expect(writes).toEqual(['submit']);
    expect(window.localStorage.getItem(draftKey(alice.id, 10))).toBeNull();
  });

  it('says an incomplete pattern is incomplete, and offers only to discard it or cancel', async () => {
    const user = userEvent.setup();
    const writes = server();
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    screen.getByTestId('prefix-list').focus();
    await user.keyboard('xjx1dyears'); // two prefixes: the Add button refuses
    await user.keyboard('{Control>}{Enter}{/Control}');
    const dialog = screen.getByRole('dialog', {
      name: 'The pattern in the composer is incomplete',
    });
    expect(within(dialog).getByText(/Select at least 3 prefixes/)).toBeVisible();
    expect(within(dialog).queryByRole('button', { name: /Add it/ })).toBeNull();
    expect(within(dialog).getByRole('button', { name: 'Discard it and submit' })).toHaveFocus();
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(writes).toEqual([]);
    expect(screen.getByLabelText('Pattern description')).toHaveValue('years');
  });
});
