import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';

import type { StudyGuidelines } from '../../../api/types';
import { makeKey } from '../../../test/factories';
import { alice, json, mockApi, renderApp } from '../../../test/utils';

const PATH = '/keys/10?assignment=3';

function guidelines(overrides: Partial<StudyGuidelines> = {}): StudyGuidelines {
  return {
    version: 1,
    text: '# Rules\n\nLook for **three** prefixes.\n\n<img src=x onerror="window.pwned=1">',
    created_at: '2025-03-01T09:30:00Z',
    acknowledged: false,
    acknowledged_version: null,
    ...overrides,
  };
}

const unread = makeKey({
  study: {
    id: 7,
    guideline_version: 1,
    guidelines_acknowledged: false,
    suggestions_enabled: false,
    show_scores: false,
  },
});

beforeEach(() => {
  window.sessionStorage.clear();
});

describe('the guidelines in the workspace', () => {
  it('shows the guidelines instead of the key until they are acknowledged', async () => {
    const fetchMock = mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, unread),
      'GET /api/studies/7/guidelines/': () => json(200, guidelines()),
      'POST /api/studies/7/guidelines/acknowledge/': () =>
        json(200, guidelines({ acknowledged: true, acknowledged_version: 1 })),
    });
    renderApp({ path: PATH, user: alice });
    expect(
      await screen.findByRole('heading', { name: 'Annotation guidelines', level: 1 }),
    ).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Rules' })).toBeInTheDocument();
    expect(screen.queryByTestId('prefix-row')).not.toBeInTheDocument();
    // Raw HTML in the guidelines is text, never an element.
    expect(document.querySelector('.guidelines-text img')).toBeNull();
    expect(screen.getByText(/onerror/)).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: 'I have read the guidelines' }));
    expect(await screen.findAllByTestId('prefix-row')).toHaveLength(25);
    const ack = fetchMock.mock.calls.find(([path]) => path.includes('acknowledge'));
    expect(JSON.parse(String(ack?.[1]?.body))).toEqual({ version: 1 });
    // Keys work at once: focus is back in the prefix list.
    await waitFor(() => expect(screen.getByTestId('prefix-list')).toHaveFocus());
  });

  it('says the guidelines changed when a newer version than the one read is out', async () => {
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        json(
          200,
          makeKey({
            study: {
              id: 7,
              guideline_version: 2,
              guidelines_acknowledged: false,
              suggestions_enabled: false,
              show_scores: false,
            },
          }),
        ),
      'GET /api/studies/7/guidelines/': () =>
        json(200, guidelines({ version: 2, text: 'New **rule**.', acknowledged_version: 1 })),
    });
    renderApp({ path: PATH, user: alice });
    expect(
      await screen.findByRole('heading', { name: 'The guidelines changed' }),
    ).toBeInTheDocument();
    expect(screen.getByText('rule')).toBeInTheDocument();
    expect(screen.getByTestId('guidelines-version')).toHaveTextContent('Version 2');
  });

  it('shows the newer version when one was published while reading', async () => {
    mockApi({
      'GET /api/keys/10/?assignment=3': () => json(200, unread),
      'GET /api/studies/7/guidelines/': () => json(200, guidelines()),
      'POST /api/studies/7/guidelines/acknowledge/': () =>
        json(409, {
          detail: 'changed',
          code: 'guidelines_changed',
          current: guidelines({ version: 2, text: 'Second version.' }),
        }),
    });
    renderApp({ path: PATH, user: alice });
    await userEvent.click(
      await screen.findByRole('button', { name: 'I have read the guidelines' }),
    );
    expect(await screen.findByText('Second version.')).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('Another version was published');
    expect(screen.queryByTestId('prefix-row')).not.toBeInTheDocument();
  });

  it('opens the guidelines with g or the button, in a dialog, and not with g turned off', async () => {
    const user = userEvent.setup();
    mockApi({
      'GET /api/keys/10/?assignment=3': () =>
        json(
          200,
          makeKey({
            study: {
              id: 7,
              guideline_version: 1,
              guidelines_acknowledged: true,
              suggestions_enabled: false,
              show_scores: false,
            },
          }),
        ),
      'GET /api/studies/7/guidelines/': () =>
        json(200, guidelines({ acknowledged: true, acknowledged_version: 1 })),
    });
    renderApp({ path: PATH, user: alice });
    await screen.findAllByTestId('prefix-row');
    await waitFor(() => expect(screen.getByTestId('prefix-list')).toHaveFocus());
    await user.keyboard('g');
    const dialog = await screen.findByRole('dialog', { name: 'Annotation guidelines' });
    expect(dialog.tagName).toBe('DIALOG');
    expect(await within(dialog).findByRole('heading', { name: 'Rules' })).toBeInTheDocument();
    await user.keyboard('{Escape}');
    expect(dialog).not.toBeInTheDocument();

    await user.click(screen.getByRole('checkbox', { name: 'Single-key shortcuts' }));
    screen.getByTestId('prefix-list').focus();
    await user.keyboard('g');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Guidelines (g)' }));
    expect(
      await screen.findByRole('dialog', { name: 'Annotation guidelines' }),
    ).toBeInTheDocument();
  });

  it('asks nothing on a study without guidelines', async () => {
    mockApi({ 'GET /api/keys/10/?assignment=3': () => json(200, makeKey()) });
    renderApp({ path: PATH, user: alice });
    expect(await screen.findAllByTestId('prefix-row')).toHaveLength(25);
  });
});
