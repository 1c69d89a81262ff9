import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { advance, until, useFakeClock } from '../../../test/clock';
import { makeKey, makeState } from '../../../test/factories';
import { alice, json, mockApi, renderApp } from '../../../test/utils';

const PATH = '/keys/10?assignment=3';

describe('the active time on a key', () => {
  it('goes with the note save and the submit, counted on from the server total', async () => {
    useFakeClock();
    const bodies: Record<string, unknown>[] = [];
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        json(200, makeKey({ annotation: makeState({ active_seconds: 100 }) })),
      'PUT /api/keys/10/annotation/': (init) => {
        bodies.push(JSON.parse(String(init?.body)));
        return json(200, makeState({ version: 2, note: 'a thought', active_seconds: 105 }));
      },
      'POST /api/keys/10/submit/': (init) => {
        bodies.push(JSON.parse(String(init?.body)));
        return json(200, makeState({ version: 3, status: 'submitted', active_seconds: 120 }));
      },
      'GET /api/next-key/?assignment=3': () => new Response(null, { status: 204 }),
    });
    renderApp({ path: PATH, user: alice });
    await until(() => screen.getAllByTestId('prefix-row'));
    await advance(5_000);
    const note = screen.getByRole('textbox', { name: /^Note/ });
    fireEvent.keyDown(note, { key: 'a' });
    fireEvent.change(note, { target: { value: 'a thought' } });
    await advance(800);
    await until(() => expect(bodies).toHaveLength(1));
    expect(bodies[0]).toMatchObject({ note: 'a thought', version: 1 });
    expect(bodies[0]!.active_seconds).toBeCloseTo(105, 0);
    await advance(10_000);
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /^Submit and go to the next key/ }));
    });
    await until(() => expect(bodies).toHaveLength(2));
    expect(bodies[1]).toMatchObject({ version: 2 });
    expect(bodies[1]!.active_seconds).toBeCloseTo(115.8, 0);
  });
});

function storedOps() {
  return Object.entries(window.localStorage)
    .filter(([key]) => key.startsWith('ffkv.writes.1.'))
    .flatMap(([, value]) => JSON.parse(value).writes as { op: Record<string, unknown> }[])
    .map((write) => write.op);
}

describe('leaving a key', () => {
  it('records the time spent on a draft with a save of the note as it is', async () => {
    useFakeClock();
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        json(200, makeKey({ annotation: makeState({ note: 'kept', active_seconds: 7 }) })),
      'PUT /api/keys/10/annotation/': () => json(200, makeState({ note: 'kept', version: 1 })),
    });
    renderApp({ path: PATH, user: alice });
    await until(() => screen.getAllByTestId('prefix-row'));
    for (let i = 0; i < 3; i++) {
      fireEvent.keyDown(document.body, { key: 'j' });
      await advance(10_000);
    }
    cleanup();
    const ops = storedOps();
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({ type: 'note', note: 'kept' });
    expect(ops[0]!.activeSeconds).toBeCloseTo(37, 0);
  });

  it('writes nothing for a key only opened, nor for a submitted one', async () => {
    useFakeClock();
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        json(200, makeKey({ annotation: makeState({ id: null, status: 'new' }) })),
      'GET /api/keys/11/?assignment=3': () =>
        json(200, makeKey({ id: 11, annotation: makeState({ key_id: 11, status: 'submitted' }) })),
    });
    renderApp({ path: PATH, user: alice });
    await until(() => screen.getAllByTestId('prefix-row'));
    fireEvent.keyDown(document.body, { key: 'j' });
    await advance(10_000);
    cleanup();
    renderApp({ path: '/keys/11?assignment=3', user: alice });
    await until(() => screen.getAllByTestId('prefix-row'));
    fireEvent.keyDown(document.body, { key: 'j' });
    await advance(10_000);
    cleanup();
    expect(storedOps()).toEqual([]);
  });
});
