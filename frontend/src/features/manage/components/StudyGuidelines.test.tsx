import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import type { GuidelineVersion } from '../../../api/types';
import { makeStudy } from '../../../test/factories';
import { carol, json, mockApi, renderApp } from '../../../test/utils';

function version(overrides: Partial<GuidelineVersion> = {}): GuidelineVersion {
  return {
    version: 1,
    text: '# Rules\n\nBe **kind**.',
    created_by: 'carol',
    created_at: '2025-03-01T09:30:00Z',
    acknowledged_by: 2,
    ...overrides,
  };
}

function setUp(versions: GuidelineVersion[]) {
  let listed = versions;
  const sent: unknown[] = [];
  mockApi({
    'GET /api/admin/studies/7/': () => json(200, makeStudy()),
    'GET /api/admin/studies/7/batches/': () => json(200, []),
    'GET /api/admin/studies/7/guidelines/': () => json(200, listed),
    'POST /api/admin/studies/7/guidelines/': (init) => {
      const body = JSON.parse(String(init?.body)) as { text: string };
      sent.push(body);
      const made = version({
        version: listed.length + 1,
        text: body.text,
        acknowledged_by: 0,
      });
      listed = [made, ...listed];
      return json(201, made);
    },
  });
  renderApp({ path: '/manage/studies/7', user: carol });
  return sent;
}

describe('StudyPage: guidelines', () => {
  it('publishes the first version from the editor, with a safe preview', async () => {
    const user = userEvent.setup();
    const sent = setUp([]);
    const section = await screen.findByTestId('study-guidelines');
    expect(within(section).getByText(/No guidelines yet/)).toBeInTheDocument();
    const editor = within(section).getByLabelText(/New version/);
    await user.type(editor, '## Count <img src=x onerror=alert(1)>');
    const preview = within(section).getByTestId('guidelines-preview');
    expect(within(preview).getByRole('heading', { level: 2 })).toHaveTextContent(
      'Count <img src=x onerror=alert(1)>',
    );
    expect(preview.querySelector('img')).toBeNull();
    await user.click(within(section).getByRole('button', { name: 'Publish version 1' }));
    expect(sent).toEqual([{ text: '## Count <img src=x onerror=alert(1)>' }]);
    expect(await within(section).findByText('Version 1 published.')).toBeInTheDocument();
    await waitFor(() =>
      expect(within(section).getByTestId('guideline-versions')).toHaveTextContent(
        /Version 1, by carol.*acknowledged by 0 people/,
      ),
    );
  });

  it('shows the current version and every version with its acknowledgements, newest first', async () => {
    setUp([
      version({ version: 2, text: 'Second **one**.', acknowledged_by: 1 }),
      version({ version: 1 }),
    ]);
    const section = await screen.findByTestId('study-guidelines');
    expect(within(section).getByTestId('guidelines-current')).toHaveTextContent(
      'Version 2Second one.',
    );
    const items = within(within(section).getByTestId('guideline-versions')).getAllByRole(
      'listitem',
    );
    expect(items.map((item) => item.textContent)).toEqual([
      expect.stringMatching(/^Version 2, by carol.*acknowledged by 1 person$/),
      expect.stringMatching(/^Version 1, by carol.*acknowledged by 2 people$/),
    ]);
    // The editor starts from the current text; publishing it unchanged makes no version.
    expect(within(section).getByLabelText(/New version/)).toHaveValue('Second **one**.');
    expect(within(section).getByRole('button', { name: 'Publish version 3' })).toBeDisabled();
  });
});
