import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';

import type { AnnotationState, Pattern } from '../../../api/types';
import { advance, until, useFakeClock } from '../../../test/clock';
import { makeKey, makePrefix, makeState } from '../../../test/factories';
import { alice, json, mockApi, renderApp } from '../../../test/utils';

const PATH = '/keys/10?assignment=3';

function rows() {
  return screen.getAllByTestId('prefix-row');
}

function selectedRanks() {
  return rows()
    .filter((row) => row.getAttribute('aria-selected') === 'true')
    .map((row) => Number(row.dataset.rank));
}

function withPattern(state: AnnotationState, pattern: Partial<Pattern>): AnnotationState {
  return {
    ...state,
    version: state.version + 1,
    patterns: [
      ...state.patterns,
      {
        id: 50 + state.patterns.length,
        description: 'p',
        kind: 'shallow',
        prefix_ranks: [1, 2, 3],
        order: state.patterns.length,
        client_id: null,
        source: 'written' as const,
        rule: null,
        scores: null,
        ...pattern,
      },
    ],
  };
}

beforeEach(() => {
  window.sessionStorage.clear();
});

describe('the key workspace', () => {
  it('shows the prefixes with the trigger token highlighted, the next token and not-covered labels', async () => {
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });

    expect(await screen.findByRole('heading', { name: 'Layer 3 · key 42' })).toBeInTheDocument();
    expect(rows()).toHaveLength(25);
    const first = rows()[0]!;
    expect(first.querySelector('mark')).toHaveTextContent('tok1');
    expect(first).toHaveTextContent('prefix number 1 ends with tok1');
    expect(first).toHaveTextContent('next1');
    expect(first).not.toHaveTextContent('and the rest.'); // a causal key has no suffix
    expect(within(first).getByTestId('prefix-label')).toHaveTextContent('not-covered');
    expect(screen.getByTestId('not-covered-count')).toHaveTextContent(
      '25 of 25 prefixes not covered',
    );
    expect(screen.queryByTestId('value-tokens')).not.toBeInTheDocument();
  });

  it('shows an encoder example as prefix, trigger and greyed suffix, and value tokens when sent', async () => {
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        json(
          200,
          makeKey({ is_causal: false, value_top_tokens: [{ token: ' Paris', probability: 0.25 }] }),
        ),
    });
    renderApp({ path: PATH, user: alice });
    const first = (await screen.findAllByTestId('prefix-row'))[0]!;
    expect(first.querySelector('.suffix')).toHaveTextContent('and the rest.');
    expect(screen.getByTestId('value-tokens')).toHaveTextContent('Paris');
  });

  it('says the next token is unknown where the sentence was cut after the prefix', async () => {
    const prefixes = Array.from({ length: 25 }, (_, i) =>
      makePrefix(i + 1, i === 0 ? { next_token: null } : {}),
    );
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey({ prefixes })) });
    renderApp({ path: PATH, user: alice });
    const [first, second] = await screen.findAllByTestId('prefix-row');
    expect(first!.querySelector('.next-token')).toHaveTextContent('unknown (sentence cut here)');
    expect(second!.querySelector('.next-token')).toHaveTextContent('next2');
  });

  it('shows a next token of whitespace, or of part of a character, in a visible form', async () => {
    const nexts = [
      { next_token: ' ' },
      { next_token: '\n' },
      { next_token: '\ufffd', next_token_bytes: 'f0' },
      { next_token: '\ufffd' },
    ];
    const prefixes = Array.from({ length: 25 }, (_, i) => makePrefix(i + 1, nexts[i] ?? {}));
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey({ prefixes })) });
    renderApp({ path: PATH, user: alice });
    const shown = (await screen.findAllByTestId('prefix-row'))
      .slice(0, 4)
      .map((row) => row.querySelector('.next-token [aria-hidden="true"]')?.textContent);
    expect(shown).toEqual(['␣', '⏎', '⟨0xF0⟩', '⟨?⟩']);
    const [space, , bytes, unknown] = screen.getAllByTestId('prefix-row');
    expect(space!.querySelector('.next-token')).toHaveTextContent('A space');
    expect(bytes!.querySelector('.next-token bdi')).toHaveAttribute('title', 'Raw bytes: 0xF0');
    expect(unknown!.querySelector('.next-token [title]')).toHaveAttribute(
      'title',
      expect.stringContaining('raw bytes are unknown'),
    );
  });

  it('renders markup in corpus text as text', async () => {
    const hostile = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>';
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        json(200, makeKey({ prefixes: [makePrefix(1, { text: hostile, trigger_token: 'zzz' })] })),
    });
    renderApp({ path: PATH, user: alice });
    const row = (await screen.findAllByTestId('prefix-row'))[0]!;
    expect(row).toHaveTextContent(hostile);
    expect(document.querySelector('main img, main script')).toBeNull();
  });

  it('selects by click and shift-click, and says why a pattern cannot be added yet', async () => {
    const user = userEvent.setup();
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');

    const add = screen.getByRole('button', { name: 'Add pattern' });
    expect(add).toBeDisabled();
    expect(screen.getByTestId('add-blockers')).toHaveTextContent(
      'Select at least 3 prefixes (0 selected).',
    );
    expect(screen.getByTestId('add-blockers')).toHaveTextContent('Write a description.');
    expect(add).toHaveAccessibleDescription(/Select at least 3 prefixes/);

    await user.click(rows()[1]!);
    await user.keyboard('{Shift>}');
    await user.click(rows()[4]!);
    await user.keyboard('{/Shift}');
    expect(selectedRanks()).toEqual([2, 3, 4, 5]);
    await user.click(rows()[2]!);
    expect(selectedRanks()).toEqual([2, 4, 5]);

    expect(screen.getByTestId('add-blockers')).not.toHaveTextContent('Select at least');
    await user.type(screen.getByLabelText('Pattern description'), 'capital cities');
    expect(screen.getByTestId('add-blockers')).toHaveTextContent('Pick a kind (1, 2 or 3).');
    await user.click(screen.getByRole('radio', { name: /^3/ }));
    expect(add).toBeEnabled();
    expect(screen.queryByTestId('add-blockers')).not.toBeInTheDocument();
  });

  it('selects and adds a pattern with the keyboard alone; chips and labels follow', async () => {
    const user = userEvent.setup();
    let posted: Record<string, unknown> | null = null;
    const fetchMock = mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
      'POST /api/keys/10/patterns/': (init) => {
        posted = JSON.parse(String(init?.body));
        return json(
          201,
          withPattern(makeState(), {
            description: 'capital cities',
            kind: 'semantic',
            prefix_ranks: [1, 2, 3, 4],
            client_id: String(posted!.client_id),
          }),
        );
      },
    });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');

    await user.keyboard('x'); // rank 1
    await user.keyboard('j{Shift>}{ArrowDown}{ArrowDown}{/Shift}'); // ranks 2-4
    expect(selectedRanks()).toEqual([1, 2, 3, 4]);
    await user.keyboard('jk'); // moving alone changes nothing
    expect(selectedRanks()).toEqual([1, 2, 3, 4]);
    await user.keyboard('2d');
    expect(screen.getByLabelText('Pattern description')).toHaveFocus();
    await user.keyboard('capital cities{Enter}');

    await waitFor(() => expect(screen.getByTestId('save-state')).toHaveTextContent('Saved'));
    expect(posted).toMatchObject({
      description: 'capital cities',
      kind: 'semantic',
      prefix_ranks: [1, 2, 3, 4],
      version: 1,
    });
    expect(String(posted!.client_id)).toMatch(/^[0-9a-f-]{36}$/);
    expect(screen.getAllByTestId('pattern-chip')).toHaveLength(4);
    expect(within(rows()[0]!).getByTestId('pattern-chip')).toHaveTextContent('P1');
    expect(within(rows()[0]!).getByTestId('prefix-label')).toHaveTextContent('semantic');
    expect(within(rows()[4]!).getByTestId('prefix-label')).toHaveTextContent('not-covered');
    expect(screen.getByTestId('not-covered-count')).toHaveTextContent(
      '21 of 25 prefixes not covered',
    );
    expect(selectedRanks()).toEqual([]);
    expect(fetchMock).toHaveBeenCalledTimes(2);
  });

  it('shows the keyboard help on ? and closes it on Escape', async () => {
    const user = userEvent.setup();
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.keyboard('?');
    expect(screen.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeInTheDocument();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('says offline while the server is unreachable and keeps the pattern on screen', async () => {
    const user = userEvent.setup();
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
      'POST /api/keys/10/patterns/': () => {
        throw new TypeError('Failed to fetch');
      },
    });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.keyboard('xjxjx1dnumbers{Enter}');
    await waitFor(() =>
      expect(screen.getByTestId('save-state')).toHaveTextContent('Offline, retrying…'),
    );
    expect(screen.getByTestId('pattern-item')).toHaveTextContent('not saved yet');
    const stored = Object.entries(window.localStorage).filter(([key]) =>
      key.startsWith('ffkv.writes.1.'),
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]![1]).toContain('numbers');
  });

  it('replays writes stored by an earlier page load', async () => {
    window.sessionStorage.setItem('ffkv.tab', 'tab-1');
    window.localStorage.setItem(
      'ffkv.writes.1.tab-1',
      JSON.stringify({
        beat: Date.now(),
        writes: [
          {
            id: 'w1',
            keyId: 10,
            op: {
              type: 'create',
              clientId: 'c-1',
              description: 'left from before',
              kind: 'shallow',
              prefixRanks: [1, 2, 3],
            },
          },
        ],
      }),
    );
    let posts = 0;
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
      'GET /api/keys/10/annotation/': () => json(200, makeState()),
      'POST /api/keys/10/patterns/': (init) => {
        posts += 1;
        const body = JSON.parse(String(init?.body));
        expect(body.client_id).toBe('c-1');
        return json(
          201,
          withPattern(makeState(), { description: 'left from before', client_id: 'c-1' }),
        );
      },
    });
    renderApp({ path: PATH, user: alice });
    expect(await screen.findByText('left from before')).toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId('save-state')).toHaveTextContent('Saved'));
    expect(posts).toBe(1);
    expect(JSON.parse(window.localStorage.getItem('ffkv.writes.1.tab-1')!).writes).toEqual([]);
  });

  it('on 409 shows what changed elsewhere and continues from the current state', async () => {
    const user = userEvent.setup();
    const theirs = withPattern(makeState(), {
      id: 90,
      description: 'added in another tab',
      prefix_ranks: [5, 6, 7],
    });
    const versions: number[] = [];
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
      'POST /api/keys/10/patterns/': (init) => {
        const body = JSON.parse(String(init?.body));
        versions.push(body.version);
        if (body.version !== theirs.version) {
          return json(409, { detail: 'This annotation was changed elsewhere.', current: theirs });
        }
        return json(
          201,
          withPattern(theirs, { id: 91, description: body.description, client_id: body.client_id }),
        );
      },
    });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.keyboard('xjxjx1dmine{Enter}');

    const notice = await screen.findByTestId('notice');
    expect(notice).toHaveTextContent(
      'This key was changed in another tab — reloaded the latest version.',
    );
    expect(notice).toHaveTextContent('Added there: “added in another tab”');
    await waitFor(() => expect(screen.getByTestId('save-state')).toHaveTextContent('Saved'));
    expect(versions).toEqual([1, 2]);
    const items = screen.getAllByTestId('pattern-item');
    expect(items.map((item) => item.textContent)).toEqual([
      expect.stringContaining('added in another tab'),
      expect.stringContaining('mine'),
    ]);
  });

  it("never links someone else's assignment from the address: the user's own, or home", async () => {
    // bob opened /keys/8?assignment=1, alice's assignment: the server names his own (4).
    const bob = { ...alice, id: 2, username: 'bob', display_name: 'bob' };
    const nextKeys: string[] = [];
    mockApi({
      'GET /api/keys/8/?assignment=1': () =>
        json(200, makeKey({ id: 8, assignment_id: 4, annotation: makeState({ key_id: 8 }) })),
      'GET /api/keys/9/?assignment=1': () => json(200, makeKey({ id: 9, assignment_id: null })),
      'POST /api/keys/8/submit/': () =>
        json(200, makeState({ key_id: 8, status: 'submitted', version: 2 })),
      'GET /api/next-key/?assignment=4': () => {
        nextKeys.push('4');
        return json(200, { key_id: 11, assignment_id: 4 });
      },
      'GET /api/keys/11/?assignment=4': () =>
        json(200, makeKey({ id: 11, index: 43, annotation: makeState({ key_id: 11 }) })),
    });
    const { unmount } = renderApp({ path: '/keys/8?assignment=1', user: bob });
    const back = await screen.findByRole('link', { name: '← Back to the assignment' });
    expect(back).toHaveAttribute('href', '/assignments/4');
    // Submitting asks for the next key of his own assignment, not of alice's.
    await userEvent.setup().click(screen.getByRole('button', { name: /Submit and go/ }));
    expect(await screen.findByRole('heading', { name: 'Layer 3 · key 43' })).toBeInTheDocument();
    expect(nextKeys).toEqual(['4']);
    unmount();

    renderApp({ path: '/keys/9?assignment=1', user: bob });
    const home = await screen.findByRole('link', { name: '← Back to the assignment' });
    expect(home).toHaveAttribute('href', '/');
  });

  it('asks before Ctrl+Enter submits a key with no patterns, then submits and opens the next key', async () => {
    const user = userEvent.setup();
    let submits = 0;
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
      'GET /api/keys/11/?assignment=3': () =>
        json(200, makeKey({ id: 11, index: 43, annotation: makeState({ key_id: 11 }) })),
      'POST /api/keys/10/submit/': () => {
        submits += 1;
        return json(200, makeState({ status: 'submitted', version: 2 }));
      },
      'GET /api/next-key/?assignment=3': () => json(200, { key_id: 11, assignment_id: 3 }),
    });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.keyboard('{Control>}{Enter}{/Control}');
    const ask = screen.getByRole('dialog', { name: 'Submit without patterns?' });
    expect(screen.getByRole('button', { name: 'Keep working' })).toHaveFocus();
    await user.keyboard('{Enter}');
    expect(ask).not.toBeInTheDocument();
    expect(screen.getByTestId('prefix-list')).toHaveFocus();
    expect(submits).toBe(0);

    await user.keyboard('{Control>}{Enter}{/Control}');
    await act(async () => {
      await user.click(screen.getByRole('button', { name: 'Submit without patterns' }));
    });
    expect(await screen.findByRole('heading', { name: 'Layer 3 · key 43' })).toBeInTheDocument();
    expect(submits).toBe(1);
  });
});

describe('the keyboard', () => {
  it('returns to the prefix list after a pattern is added, so the next j x selects', async () => {
    const user = userEvent.setup();
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
      'POST /api/keys/10/patterns/': (init) => {
        const body = JSON.parse(String(init?.body));
        return json(
          201,
          withPattern(makeState(), { description: body.description, client_id: body.client_id }),
        );
      },
    });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.keyboard('xjxjx1dnumbers{Enter}');
    expect(screen.getByTestId('prefix-list')).toHaveFocus();
    await user.keyboard('jx');
    expect(screen.getByLabelText('Pattern description')).toHaveValue('');
    expect(selectedRanks()).toEqual([4]);
  });

  it('acts only inside the workspace', async () => {
    const user = userEvent.setup();
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    screen.getByRole('button', { name: 'Sign out' }).focus();
    await user.keyboard('xjx?');
    expect(selectedRanks()).toEqual([]);
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('lets single-key shortcuts be turned off, and remembers it', async () => {
    const user = userEvent.setup();
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.click(screen.getByRole('checkbox', { name: 'Single-key shortcuts' }));
    screen.getByTestId('prefix-list').focus();
    await user.keyboard('xj?');
    expect(selectedRanks()).toEqual([]);
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    // The list's own keys still work.
    await user.keyboard('{ArrowDown} ');
    expect(selectedRanks()).toEqual([2]);

    cleanup();
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    expect(screen.getByRole('checkbox', { name: 'Single-key shortcuts' })).not.toBeChecked();
    await waitFor(() => expect(selectedRanks()).toEqual([2])); // the draft came back too
    await user.keyboard('jx');
    expect(selectedRanks()).toEqual([2]);
  });

  it('lists every key it handles in a help dialog that keeps focus inside', async () => {
    const user = userEvent.setup();
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.keyboard('?');
    const help = screen.getByRole('dialog', { name: 'Keyboard shortcuts' });
    expect(help.tagName).toBe('DIALOG');
    const keys = within(help)
      .getAllByText((_, element) => element?.tagName === 'KBD')
      .map((kbd) => kbd.textContent);
    expect(keys).toEqual(
      expect.arrayContaining([
        'j',
        '↓',
        'J',
        'Shift + ↓',
        'K',
        'g',
        'Home',
        'G',
        'End',
        'Space',
        'x',
        '/',
        'd',
        'Ctrl + Enter',
        '?',
      ]),
    );
    const close = within(help).getByRole('button', { name: 'Close' });
    expect(close).toHaveFocus();
    await user.tab();
    expect(close).toHaveFocus();
    await user.keyboard('jx'); // the workspace's keys stay out of the dialog
    expect(selectedRanks()).toEqual([]);
    await user.keyboard('{Escape}');
    expect(help).not.toBeInTheDocument();
    expect(screen.getByTestId('prefix-list')).toHaveFocus();
  });
});

function storedWrites() {
  return Object.entries(window.localStorage)
    .filter(([key]) => key.startsWith('ffkv.writes.1.'))
    .flatMap(([, value]) => JSON.parse(value).writes as { op: { type: string; note?: string } }[]);
}

function leavePage(): Event {
  const event = new Event('beforeunload', { cancelable: true });
  window.dispatchEvent(event);
  return event;
}

describe('nothing typed is lost', () => {
  it('keeps the note being typed and the half-built pattern across a reload', async () => {
    // A fake clock: the note's autosave delay never passes, as when the page is reloaded at once.
    useFakeClock();
    window.sessionStorage.setItem('ffkv.tab', 'tab-1');
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });
    await until(() => rows());

    fireEvent.click(rows()[1]!);
    fireEvent.click(rows()[2]!);
    fireEvent.change(screen.getByLabelText('Pattern description'), {
      target: { value: 'half a patt' },
    });
    fireEvent.click(screen.getByRole('radio', { name: /^2/ }));
    fireEvent.change(screen.getByRole('textbox', { name: /^Note/ }), {
      target: { value: 'half a thought' },
    });

    // Stored at once: a reload does not run the page's clean-up, so it cannot be relied on.
    expect(storedWrites().map((write) => write.op)).toEqual([
      { type: 'note', note: 'half a thought', activeSeconds: 0 },
    ]);
    expect(screen.getByTestId('note-save-state')).toHaveTextContent('Saving…');
    expect(leavePage().defaultPrevented).toBe(true);

    cleanup(); // the reload
    renderApp({ path: PATH, user: alice });
    await until(() => rows());
    expect(screen.getByRole('textbox', { name: /^Note/ })).toHaveValue('half a thought');
    expect(selectedRanks()).toEqual([2, 3]);
    expect(screen.getByLabelText('Pattern description')).toHaveValue('half a patt');
    expect(screen.getByRole('radio', { name: /^2/ })).toBeChecked();
  });

  it('saves the note through the queue after a pause, and says so beside the note', async () => {
    useFakeClock();
    let saved: unknown = null;
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
      'PUT /api/keys/10/annotation/': (init) => {
        saved = JSON.parse(String(init?.body));
        return json(200, makeState({ version: 2, note: 'a thought' }));
      },
    });
    renderApp({ path: PATH, user: alice });
    await until(() => rows());
    expect(leavePage().defaultPrevented).toBe(false);
    expect(screen.getByTestId('note-save-state')).toHaveTextContent('Saved');
    fireEvent.change(screen.getByRole('textbox', { name: /^Note/ }), {
      target: { value: 'a thought' },
    });
    await advance(799);
    expect(saved).toBeNull();
    expect(screen.getByRole('textbox', { name: /^Note/ })).toHaveAccessibleDescription('Saving…');
    await advance(1);
    await until(() => expect(screen.getByTestId('note-save-state')).toHaveTextContent('Saved'));
    expect(saved).toMatchObject({ note: 'a thought', version: 1 });
    expect(leavePage().defaultPrevented).toBe(false);
  });

  it('forgets the draft once its pattern is added', async () => {
    const user = userEvent.setup();
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey()),
      'POST /api/keys/10/patterns/': () => json(201, withPattern(makeState(), {})),
    });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await user.keyboard('xjxjx1dnumbers');
    expect(window.localStorage.getItem('ffkv.draft.1.10')).toContain('numbers');
    await user.keyboard('{Enter}');
    expect(window.localStorage.getItem('ffkv.draft.1.10')).toBeNull();
  });
});

describe('deleting a pattern', () => {
  const two = withPattern(withPattern(makeState(), { description: 'first' }), {
    description: 'second',
    prefix_ranks: [4, 5, 6],
  });

  it('can be undone for a few seconds, and focus goes to Undo, not to the next Delete', async () => {
    useFakeClock();
    let deletes = 0;
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey({ annotation: two })),
      'DELETE /api/keys/10/patterns/50/?version=3': () => {
        deletes += 1;
        return json(200, { ...two, version: 4, patterns: two.patterns.slice(1) });
      },
    });
    renderApp({ path: PATH, user: alice });
    await until(() => screen.getByRole('button', { name: 'Delete P1' }));

    fireEvent.click(screen.getByRole('button', { name: 'Delete P1' }));
    expect(screen.getAllByTestId('pattern-item')).toHaveLength(1);
    const undo = screen.getByRole('button', { name: 'Undo' });
    expect(undo).toHaveFocus();
    expect(screen.getByTestId('undo-delete')).toHaveTextContent('Deleted P1 “first”.');
    await advance(4_999);
    expect(deletes).toBe(0);

    fireEvent.click(undo);
    expect(screen.getAllByTestId('pattern-item').map((item) => item.textContent)).toEqual([
      expect.stringContaining('first'),
      expect.stringContaining('second'),
    ]);
    await advance(10_000);
    expect(deletes).toBe(0);
    expect(screen.getByTestId('save-state')).toHaveTextContent('Saved');
  });

  it('is sent once the offer ends, and focus rests on the list heading', async () => {
    useFakeClock();
    let deletes = 0;
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, makeKey({ annotation: two })),
      'DELETE /api/keys/10/patterns/50/?version=3': () => {
        deletes += 1;
        return json(200, { ...two, version: 4, patterns: two.patterns.slice(1) });
      },
    });
    renderApp({ path: PATH, user: alice });
    await until(() => screen.getByRole('button', { name: 'Delete P1' }));
    fireEvent.click(screen.getByRole('button', { name: 'Delete P1' }));
    expect(leavePage().defaultPrevented).toBe(true); // the delete waits in the queue
    await advance(5_000);
    await until(() => expect(screen.getByTestId('save-state')).toHaveTextContent('Saved'));
    expect(deletes).toBe(1);
    expect(screen.queryByTestId('undo-delete')).not.toBeInTheDocument();
    expect(screen.getByRole('heading', { name: '1 pattern' })).toHaveFocus();
    expect(screen.getAllByTestId('pattern-item')).toHaveLength(1);
  });
});

describe('loading a key', () => {
  it('tries again by itself when the server is briefly unavailable', async () => {
    // A fake clock: the retry waits a second of the page's time, not the machine's.
    useFakeClock();
    let calls = 0;
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        ++calls === 1
          ? json(503, { detail: 'The database is unavailable; please retry in a moment.' })
          : json(200, makeKey()),
    });
    renderApp({ path: PATH, user: alice });
    expect(await until(() => screen.getByRole('alert'))).toHaveTextContent(
      'The database is unavailable',
    );
    await advance(999);
    expect(calls).toBe(1); // backing off: not at once
    await advance(1);
    expect(
      await until(() => screen.getByRole('heading', { name: 'Layer 3 · key 42' })),
    ).toBeInTheDocument();
    expect(calls).toBe(2);
  });

  it('backs off while the server stays unavailable', async () => {
    useFakeClock();
    let calls = 0;
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        ++calls <= 2 ? json(503, { detail: 'unavailable' }) : json(200, makeKey()),
    });
    renderApp({ path: PATH, user: alice });
    await until(() => expect(calls).toBe(1));
    await advance(1_000);
    await until(() => expect(calls).toBe(2));
    await advance(1_999); // the second wait is twice the first
    expect(calls).toBe(2);
    await advance(1);
    expect(
      await until(() => screen.getByRole('heading', { name: 'Layer 3 · key 42' })),
    ).toBeInTheDocument();
    expect(calls).toBe(3);
  });

  it('does not ask again after a refusal', async () => {
    useFakeClock();
    let calls = 0;
    mockApi({
      'GET /api/keys/11/': () => {
        calls += 1;
        return json(404, { detail: 'Not found.', code: 'not_found' });
      },
    });
    renderApp({ path: '/keys/11', user: alice });
    await until(() => expect(screen.getByRole('alert')).toBeInTheDocument());
    await advance(60_000);
    expect(calls).toBe(1);
  });
});
