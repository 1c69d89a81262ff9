import { fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { makeStudy } from '../../../test/factories';
import { carol, json, mockApi, renderApp } from '../../../test/utils';

const LABEL = "Show the value's top tokens to annotators";

function setUp(patch: () => Response | Promise<Response>, study = makeStudy()) {
  const sent: unknown[] = [];
  mockApi({
    'GET /api/admin/studies/7/': () => json(200, study),
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

  it('shows the click in the same event, before any request has started', async () => {
    // A browser (and Playwright's check()) reads the box right after the click: it must
    // not wait for a later render to show the new state.
    setUp(() => new Promise<Response>(() => {}));
    const box = await screen.findByLabelText(LABEL);
    fireEvent.click(box);
    expect(box).toBeChecked();
    expect(box).toBeDisabled();
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

describe('StudyPage: the check-key rate', () => {
  const RATE = 'Share of the keys given to an annotator that each bring a check key (%)';

  it('shows the current rate as a percentage and how many check keys the study has', async () => {
    setUp(() => json(200, makeStudy()), makeStudy({ check_rate: 0.1, check_keys: 3 }));
    expect(await screen.findByLabelText(RATE)).toHaveValue(10);
    expect(screen.getByTestId('check-rate-current')).toHaveTextContent(
      'Now: 10% of the keys given',
    );
    expect(screen.getByTestId('check-keys-count')).toHaveTextContent(
      'This study has 3 check keys.',
    );
    expect(screen.getByText(/0 turns checks off/)).toBeInTheDocument();
    expect(screen.queryByTestId('check-rate-problem')).not.toBeInTheDocument();
  });

  it('saves 25% as 0.25 and shows the saved value', async () => {
    const sent = setUp(() => json(200, makeStudy({ check_rate: 0.25 })));
    const input = await screen.findByLabelText(RATE);
    await userEvent.clear(input);
    await userEvent.type(input, '25');
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent).toEqual([{ check_rate: 0.25 }]));
    expect(await screen.findByTestId('check-rate-saved')).toHaveTextContent('Saved.');
    expect(screen.getByTestId('check-rate-current')).toHaveTextContent(
      'Now: 25% of the keys given',
    );
    expect(screen.getByLabelText(RATE)).toHaveValue(25);
  });

  it('refuses 150 and an empty box inline, without asking the server', async () => {
    const sent = setUp(() => json(200, makeStudy()));
    const input = await screen.findByLabelText(RATE);
    await userEvent.clear(input);
    await userEvent.type(input, '150');
    expect(screen.getByTestId('check-rate-problem')).toHaveTextContent(
      'Enter a whole percentage from 0 to 100.',
    );
    expect(input).toHaveAttribute('aria-invalid', 'true');
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    await userEvent.clear(input);
    expect(screen.getByTestId('check-rate-problem')).toHaveTextContent(
      'Enter a whole percentage from 0 to 100.',
    );
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(sent).toEqual([]);
  });

  it('shows the server refusing the rate', async () => {
    setUp(() =>
      json(400, {
        detail: 'Invalid input.',
        code: 'invalid',
        fields: { check_rate: [{ message: 'Too big.', code: 'max_value' }] },
      }),
    );
    const input = await screen.findByLabelText(RATE);
    await userEvent.clear(input);
    await userEvent.type(input, '5');
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'check_rate: This number is too large.',
    );
    expect(screen.getByLabelText(RATE)).toHaveValue(5);
    expect(screen.queryByTestId('check-rate-saved')).not.toBeInTheDocument();
  });
});
