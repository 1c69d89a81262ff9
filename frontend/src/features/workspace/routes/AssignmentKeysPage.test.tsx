import { fireEvent, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import type { AssignmentKey, AssignmentKeyPage } from '../../../api/types';
import { alice, json, mockApi, renderApp } from '../../../test/utils';

const TOTAL = 250;
const KEYS: AssignmentKey[] = Array.from({ length: TOTAL }, (_, i) => ({
  id: 1000 + i,
  layer: 1 + Math.floor(i / 100),
  index: i % 100,
  status: i === 120 ? 'submitted' : null,
  version: i === 120 ? 3 : null,
  pattern_count: i === 120 ? 2 : 0,
}));

/** The API as the server pages it: `limit` keys from `offset`, and the whole count. */
function pageOf(offset: number, limit: number): AssignmentKeyPage {
  return { count: TOTAL, limit, offset, results: KEYS.slice(offset, offset + limit) };
}

function routes() {
  const pages: Record<string, () => Response> = {};
  for (const offset of [0, 100, 200]) {
    pages[`GET /api/assignments/5/keys/?limit=100&offset=${offset}`] = () =>
      json(200, pageOf(offset, 100));
  }
  return pages;
}

// By text, and fireEvent rather than userEvent: role queries and userEvent's checks walk
// every row of a 100-row table, slow enough on a busy machine to hit the test timeout.
function button(name: string): HTMLButtonElement {
  const found = screen.getByText(name);
  expect(found.tagName).toBe('BUTTON');
  return found as HTMLButtonElement;
}

describe('AssignmentKeysPage', () => {
  // Four renders of a 100-row table: about 3 s of jsdom on a loaded 2-core machine, so
  // the ceiling is above vitest's 5 s default. Nothing here waits on the clock.
  it(
    'shows the range of a page of keys and pages through them all',
    { timeout: 30_000 },
    async () => {
      const fetchMock = mockApi(routes());
      renderApp({ path: '/assignments/5', user: alice });

      expect(await screen.findByTestId('keys-range')).toHaveTextContent('Keys 1–100 of 250');
      expect(screen.getAllByTestId('assignment-key-row')).toHaveLength(100);
      expect(button('Previous keys')).toBeDisabled();

      fireEvent.click(button('Next keys'));
      expect(await screen.findByText('Keys 101–200 of 250')).toBeInTheDocument();
      const opened = screen.getByText('Layer 2 · key 20');
      expect(opened).toHaveAttribute('href', '/keys/1120?assignment=5');
      expect(opened.closest('tr')).toHaveTextContent('submitted');

      fireEvent.click(button('Next keys'));
      expect(await screen.findByText('Keys 201–250 of 250')).toBeInTheDocument();
      expect(screen.getAllByTestId('assignment-key-row')).toHaveLength(50);
      expect(button('Next keys')).toBeDisabled();

      fireEvent.click(button('Previous keys'));
      expect(await screen.findByText('Keys 101–200 of 250')).toBeInTheDocument();
      const asked = fetchMock.mock.calls.map(([url]) => String(url));
      expect(asked).toEqual([
        '/api/assignments/5/keys/?limit=100&offset=0',
        '/api/assignments/5/keys/?limit=100&offset=100',
        '/api/assignments/5/keys/?limit=100&offset=200',
        '/api/assignments/5/keys/?limit=100&offset=100',
      ]);
    },
  );

  it('opens on the page named in the address', async () => {
    mockApi(routes());
    renderApp({ path: '/assignments/5?page=3', user: alice });
    expect(await screen.findByTestId('keys-range')).toHaveTextContent('Keys 201–250 of 250');
  });

  it('says so when the assignment has no keys', async () => {
    mockApi({
      'GET /api/assignments/5/keys/?limit=100&offset=0': () =>
        json(200, { count: 0, limit: 100, offset: 0, results: [] }),
    });
    renderApp({ path: '/assignments/5', user: alice });
    expect(await screen.findByText('This assignment has no keys.')).toBeInTheDocument();
  });

  it('keeps the current page on screen while the next one loads', { timeout: 30_000 }, async () => {
    let answerNext: (response: Response) => void = () => {};
    mockApi({
      ...routes(),
      'GET /api/assignments/5/keys/?limit=100&offset=100': () =>
        new Promise<Response>((resolve) => {
          answerNext = resolve;
        }),
    });
    renderApp({ path: '/assignments/5', user: alice });
    expect(await screen.findByTestId('keys-range')).toHaveTextContent('Keys 1–100 of 250');

    fireEvent.click(button('Next keys'));
    // The request for keys 101-200 is out; the first page stays, no spinner replaces it.
    expect(screen.getByTestId('keys-range')).toHaveTextContent('Keys 1–100 of 250');
    expect(screen.getAllByTestId('assignment-key-row')).toHaveLength(100);
    expect(screen.queryByRole('status')).not.toBeInTheDocument();

    answerNext(json(200, pageOf(100, 100)));
    expect(await screen.findByText('Keys 101–200 of 250')).toBeInTheDocument();
  });
});
