import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { makeStudy } from '../../test/factories';
import { carol, json, mockApi, renderApp } from '../../test/utils';

const LABEL = "Show the value's top tokens to annotators";

function setUp(patch: () => Response | Promise<Response>) {
  const sent: unknown[] = [];
  mockApi({
    'GET /api/admin/studies/7/': () => json(200, makeStudy()),
    'GET /api/admin/studies/7/batches/': () => json(200, []),
    'GET /api/admin/studies/7/guidelines/': () => json(200, []),
    'PATCH /api/admin/studies/7/': (init) => {
      sent.push(JSON.parse(String(init?.body)));
      return patch();
    },
  });
  renderApp({ path: '/manage/studies/7', user: carol });
  return sent;
}

describe('StudyPage: showing the value tokens', () => {
  it('keeps the choice the server saved', async () => {
    const sent = setUp(() => json(200, makeStudy({ show_value_tokens: true })));
    await userEvent.click(await screen.findByLabelText(LABEL));
    expect(sent).toEqual([{ show_value_tokens: true }]);
    await waitFor(() => expect(screen.getByLabelText(LABEL)).toBeEnabled());
    expect(screen.getByLabelText(LABEL)).toBeChecked();
  });

  it('shows the choice at once and puts it back when the server refuses', async () => {
    let refuse: (response: Response) => void = () => {};
    setUp(
      () =>
        new Promise<Response>((resolve) => {
          refuse = resolve;
        }),
    );
    const box = await screen.findByLabelText(LABEL);
    expect(box).not.toBeChecked();
    await userEvent.click(box);
    await waitFor(() => expect(screen.getByLabelText(LABEL)).toBeChecked());
    expect(screen.getByLabelText(LABEL)).toBeDisabled();

    refuse(json(500, { detail: 'The server broke.' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The server broke.');
    expect(screen.getByLabelText(LABEL)).not.toBeChecked();
    expect(screen.getByLabelText(LABEL)).toBeEnabled();
  });
});
