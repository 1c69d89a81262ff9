import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { makeStudy } from '../../../test/factories';
import { carol, json, mockApi, renderApp } from '../../../test/utils';

const STUDIES = 'GET /api/admin/studies/';
const IMPORT = 'POST /api/admin/imports/';

function jsonlFile() {
  return new File(['{"bad": true}\n'], 'study.jsonl', { type: 'application/jsonl' });
}

describe('studies page: import', () => {
  it('imports from the studies screen, live on request, and lists the new study', async () => {
    const user = userEvent.setup();
    let sent: FormData | null = null;
    let listed = [makeStudy({ id: 7, name: 'demo' })];
    mockApi({
      [STUDIES]: () => json(200, listed),
      [IMPORT]: (init) => {
        sent = init?.body as FormData;
        listed = [...listed, makeStudy({ id: 8, name: 'copy', archived: false })];
        return json(201, {
          study_id: 8,
          study_name: 'copy',
          archived: false,
          assignments: 2,
          keys: 3,
          prefixes: 75,
          annotations: 6,
          patterns: 9,
          users_created: [],
        });
      },
    });
    renderApp({ path: '/manage', user: carol });
    const table = await screen.findByTestId('studies');
    expect(within(table).getByText('live')).toBeInTheDocument();

    const assign = screen.getByLabelText(/Give each annotator back/);
    expect(assign).toBeDisabled(); // only for a live study
    await user.upload(screen.getByLabelText('JSONL file'), jsonlFile());
    await user.type(screen.getByLabelText('Name of the new study (optional)'), 'copy');
    await user.click(screen.getByLabelText('Make it a live study'));
    await user.click(assign);
    await user.click(screen.getByRole('button', { name: 'Import' }));

    const done = await screen.findByTestId('import-result');
    expect(done).toHaveTextContent('It is live, with 2 assignments.');
    const form = sent as unknown as FormData;
    expect([form.get('study_name'), form.get('live'), form.get('assign')]).toEqual([
      'copy',
      'true',
      'true',
    ]);
    await waitFor(() =>
      expect(within(screen.getByTestId('studies')).getByText('copy')).toBeVisible(),
    );
  });

  it('sends neither live nor assign by default', async () => {
    const user = userEvent.setup();
    let sent: FormData | null = null;
    mockApi({
      [STUDIES]: () => json(200, []),
      [IMPORT]: (init) => {
        sent = init?.body as FormData;
        return json(201, {
          study_id: 8,
          study_name: 'x',
          archived: true,
          assignments: 0,
          keys: 1,
          prefixes: 3,
          annotations: 0,
          patterns: 0,
          users_created: [],
        });
      },
    });
    renderApp({ path: '/manage', user: carol });
    await user.upload(await screen.findByLabelText('JSONL file'), jsonlFile());
    await user.click(screen.getByRole('button', { name: 'Import' }));
    expect(await screen.findByTestId('import-result')).toHaveTextContent(
      'It is archived: read-only, and no annotator sees it.',
    );
    const form = sent as unknown as FormData;
    expect([form.get('live'), form.get('assign')]).toEqual([null, null]);
  });

  it('asks for another name in the form, not on the command line, when it is taken', async () => {
    const user = userEvent.setup();
    mockApi({
      [STUDIES]: () => json(200, []),
      [IMPORT]: () =>
        json(400, {
          detail: "A study named 'demo' already exists; send another study_name.",
          code: 'study_name_taken',
          errors: ["A study named 'demo' already exists; send another study_name."],
        }),
    });
    renderApp({ path: '/manage', user: carol });
    await user.upload(await screen.findByLabelText('JSONL file'), jsonlFile());
    const name = screen.getByLabelText('Name of the new study (optional)');
    await user.type(name, 'demo');
    await user.click(screen.getByRole('button', { name: 'Import' }));

    const alert = await screen.findByText(/A study named “demo” already exists/);
    expect(alert).toHaveTextContent('Type another name above and import again.');
    expect(alert).not.toHaveTextContent('--study-name');
    expect(name).toHaveFocus();
    expect(name).toHaveAttribute('aria-invalid', 'true');
  });

  it('says once that a CSV is not a JSONL file', async () => {
    // The file picker offers .jsonl files, yet "All files" is one click away.
    const user = userEvent.setup({ applyAccept: false });
    mockApi({
      [STUDIES]: () => json(200, []),
      [IMPORT]: () =>
        json(400, {
          detail: 'This is not a JSONL file: its first line is not JSON. …',
          code: 'not_jsonl',
          errors: ['This is not a JSONL file: its first line is not JSON. …'],
        }),
    });
    renderApp({ path: '/manage', user: carol });
    const csv = new File(['study,layer\r\nx,1\r\n'], 'study.csv', { type: 'text/csv' });
    await user.upload(await screen.findByLabelText('JSONL file'), csv);
    await user.click(screen.getByRole('button', { name: 'Import' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent(/^This is not a JSONL file\./);
    expect(screen.queryByTestId('import-errors')).toBeNull();
  });

  it('lists the line-numbered errors of a refused import', async () => {
    const user = userEvent.setup();
    mockApi({
      [STUDIES]: () => json(200, []),
      [IMPORT]: () =>
        json(400, {
          detail: 'line 2: patterns[0].prefixes: a pattern needs at least 3 prefixes',
          code: null,
          errors: [
            'line 2: patterns[0].prefixes: a pattern needs at least 3 prefixes',
            'line 5: invalid JSON',
          ],
        }),
    });
    renderApp({ path: '/manage', user: carol });
    await user.upload(await screen.findByLabelText('JSONL file'), jsonlFile());
    await user.click(screen.getByRole('button', { name: 'Import' }));

    const errors = await screen.findByTestId('import-errors');
    expect(errors).toHaveTextContent('Not imported: 2 errors.');
    const items = within(errors).getAllByRole('listitem');
    expect(items.map((item) => item.textContent)).toEqual([
      'line 2: patterns[0].prefixes: a pattern needs at least 3 prefixes',
      'line 5: invalid JSON',
    ]);
  });
});
