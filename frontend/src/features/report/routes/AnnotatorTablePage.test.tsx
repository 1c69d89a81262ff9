import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import i18n from '../../../i18n';
import { makeAnnotatorTable, makeStudy } from '../../../test/factories';
import { alice, carol, json, mockApi, renderApp } from '../../../test/utils';

const TABLE = 'GET /api/admin/studies/7/annotators/';

describe('annotator table', () => {
  it("shows each annotator's work, agreement, checks and quality flags, and the CSV link", async () => {
    mockApi({ [TABLE]: () => json(200, makeAnnotatorTable()) });
    renderApp({ path: '/manage/studies/7/annotators', user: carol });

    const table = await screen.findByTestId('annotator-table');
    expect(screen.getByRole('heading', { name: 'Annotator table: demo' })).toBeInTheDocument();
    expect(within(table).getByRole('columnheader', { name: 'κ with gold' })).toBeInTheDocument();
    const alice = table.querySelector('tr[data-annotator="alice"]');
    expect(alice).toHaveTextContent('60 s');
    expect(alice).toHaveTextContent('0.667');
    expect(alice).toHaveTextContent('60.0%');
    const bob = table.querySelector('tr[data-annotator="bob"]');
    expect(within(bob as HTMLElement).getByTestId('quality-flags')).toHaveTextContent(
      'fast, low agreement with gold',
    );
    expect(screen.getByTestId('study-median')).toHaveTextContent('30 s');
    expect(screen.getByTestId('annotator-table-csv')).toHaveAttribute(
      'href',
      '/api/admin/studies/7/annotators.csv',
    );
    expect(document.querySelector('.definition[data-term="fast"]')).toHaveTextContent(
      'under a third',
    );
  });

  it('names the column of every cell, and the keys behind κ with gold', async () => {
    mockApi({ [TABLE]: () => json(200, makeAnnotatorTable()) });
    renderApp({ path: '/manage/studies/7/annotators', user: carol });
    const table = await screen.findByTestId('annotator-table');
    const cells = Array.from(table.querySelectorAll('td'));
    expect(cells).toHaveLength(2 * 11);
    for (const cell of cells) expect(cell.getAttribute('data-label')).toBeTruthy();
    const alice = table.querySelector('tr[data-annotator="alice"]')!;
    expect(within(alice as HTMLElement).getByTestId('kappa-with-gold')).toHaveTextContent(
      '0.667 (1 key)',
    );
    expect(within(alice as HTMLElement).getByTestId('kappa-with-gold')).toHaveAttribute(
      'data-label',
      'κ with gold',
    );
    // No quality flag: a dash, not an empty cell.
    expect(within(alice as HTMLElement).getByTestId('quality-flags')).toHaveTextContent('—');
  });

  it('states the minimum evidence of each quality flag among the definitions', async () => {
    mockApi({ [TABLE]: () => json(200, makeAnnotatorTable()) });
    renderApp({ path: '/manage/studies/7/annotators', user: carol });
    await screen.findByTestId('annotator-table');
    expect(document.querySelector('.definition[data-term="fast"]')).toHaveTextContent(
      'over at least 5 submitted keys',
    );
  });

  it('says so when nobody has annotated yet', async () => {
    mockApi({ [TABLE]: () => json(200, makeAnnotatorTable({ annotators: [] })) });
    renderApp({ path: '/manage/studies/7/annotators', user: carol });
    expect(await screen.findByTestId('annotator-table-empty')).toHaveTextContent(
      'Nobody has annotated this study yet.',
    );
  });

  it('speaks Chinese', async () => {
    await i18n.changeLanguage('zh-CN');
    try {
      mockApi({ [TABLE]: () => json(200, makeAnnotatorTable()) });
      renderApp({ path: '/manage/studies/7/annotators', user: carol });
      const table = await screen.findByTestId('annotator-table');
      expect(within(table).getByRole('columnheader', { name: '与金标准的 κ' })).toBeInTheDocument();
      expect(table.querySelector('tr[data-annotator="bob"]')).toHaveTextContent('过快');
    } finally {
      await i18n.changeLanguage('en');
    }
  });

  it('is linked from the study page', async () => {
    mockApi({
      'GET /api/admin/studies/7/': () => json(200, makeStudy()),
      'GET /api/admin/studies/7/batches/': () => json(200, []),
    });
    renderApp({ path: '/manage/studies/7', user: carol });
    expect(await screen.findByTestId('annotator-table-link')).toHaveAttribute(
      'href',
      '/manage/studies/7/annotators',
    );
  });

  it('is for staff only', () => {
    mockApi({});
    renderApp({ path: '/manage/studies/7/annotators', user: alice });
    expect(screen.getByTestId('staff-only')).toBeInTheDocument();
  });
});
