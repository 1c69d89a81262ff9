import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { reportQueryString } from '../../../api/client';
import i18n from '../../../i18n';
import { advance, until, useFakeClock } from '../../../test/clock';
import {
  makeCompositionStatus,
  makeExportJob,
  makeReport,
  makeStudy,
} from '../../../test/factories';
import { alice, carol, json, mockApi, renderApp } from '../../../test/utils';
import { EXPORT_POLL_MS } from '../components/ExportSection';

const STUDY = 'GET /api/admin/studies/7/';
const REPORT = 'GET /api/admin/studies/7/report/';

describe('report query', () => {
  it('leaves the defaults out and joins lists with commas', () => {
    expect(reportQueryString({ annotators: null, layers: null, submittedOnly: true })).toBe('');
    expect(reportQueryString({ annotators: [], layers: [], submittedOnly: true })).toBe('');
    expect(
      reportQueryString({ annotators: ['alice', 'bob'], layers: [3, 1], submittedOnly: false }),
    ).toBe('?annotators=alice,bob&layers=1,3&submitted_only=false');
    expect(reportQueryString({ annotators: ['a b&c'], layers: null, submittedOnly: true })).toBe(
      '?annotators=a%20b%26c',
    );
  });
});

describe('report page', () => {
  it('shows Figure 2, the coverage, agreement and §4 tables, and "not measured"', async () => {
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });

    const chart = await screen.findByTestId('figure2-chart');
    expect(chart.querySelectorAll('g.bar')).toHaveLength(3);
    expect(screen.getByRole('heading', { name: 'Report: demo' })).toBeInTheDocument();

    const coverage = screen.getByTestId('coverage-table');
    expect(within(coverage).getAllByTestId('coverage-share')[2]).toHaveTextContent('70.0%');
    expect(coverage).toHaveTextContent('65%–80%');
    expect(coverage).toHaveTextContent('3.6');

    const agreement = screen.getByTestId('agreement-table');
    expect(
      within(agreement).getByRole('columnheader', { name: "Krippendorff's α" }),
    ).toBeInTheDocument();
    expect(agreement).toHaveTextContent('0.743 [0.612, 0.851]');
    expect(screen.getByTestId('agreement-binary-table')).toBeInTheDocument();

    expect(screen.getByTestId('value-agreement-table')).toHaveTextContent(
      '50.00% [40.00%, 60.00%] (1/2)',
    );
    expect(screen.getByTestId('value-agreement-chart').querySelectorAll('g.series')).toHaveLength(
      4,
    );
    expect(screen.getByTestId('value-every-key-table')).toBeInTheDocument();
    expect(screen.getByTestId('value-baseline')).toHaveTextContent('|V| = 50,257');
    expect(screen.getByTestId('perturbation-none')).toHaveTextContent('Not measured');
    expect(screen.getByTestId('jaccard-table')).toHaveTextContent('0.600 (1 key)');
  });

  it("shows the mining run's definitions and the checkpoint note among the definitions", async () => {
    const report = makeReport();
    report.definitions = {
      ...report.definitions,
      mining: 'Coefficients are the input of down_proj.',
      checkpoint:
        'The weights are dequantized from 4 bits: every figure describes this checkpoint.',
    };
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, report),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await screen.findByTestId('figure2-chart');
    const checkpoint = document.querySelector('.definition[data-term="checkpoint"]');
    expect(checkpoint).toHaveTextContent('Checkpoint');
    expect(checkpoint).toHaveTextContent('dequantized from 4 bits');
    expect(document.querySelector('.definition[data-term="mining"]')).toHaveTextContent(
      'What the mining run ranked',
    );
  });

  it('switches Figure 2 between pooled, per annotator and majority', async () => {
    const user = userEvent.setup();
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    const chart = await screen.findByTestId('figure2-chart');
    const shallowOfLayer1 = () =>
      screen
        .getByTestId('figure2-chart')
        .querySelector('g.bar[data-layer="1"] rect[data-label="shallow"]');
    expect(chart).toHaveTextContent('pooled over annotations');

    await user.click(screen.getByLabelText('per annotator'));
    expect(screen.getByTestId('figure2-chart')).toHaveTextContent('annotator alice');
    expect(Number(shallowOfLayer1()?.getAttribute('height'))).toBeCloseTo(240, 6);
    await user.selectOptions(screen.getByLabelText('Annotator'), 'bob');
    expect(shallowOfLayer1()).toBeNull();

    await user.click(screen.getByLabelText('majority label'));
    expect(screen.getByTestId('majority-ties')).toHaveTextContent('2 of 10 prefixes are ties.');
  });

  it('draws the layers with ratings and names the others in the figure, not as blank bars', async () => {
    const report = makeReport();
    const nothing = {
      n: 0,
      ties: 0,
      counts: { shallow: 0, semantic: 0, shallow_semantic: 0, not_covered: 0 },
    };
    const noShares = { shallow: null, semantic: null, shallow_semantic: null, not_covered: null };
    // A mined study: keys in 30 layers, the first annotations in layers 1 and 2.
    report.figure2.pooled.layers = [
      ...report.figure2.pooled.layers,
      ...Array.from({ length: 28 }, (_, i) => ({ layer: i + 3, ...nothing, shares: noShares })),
    ];
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, report),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    const chart = await screen.findByTestId('figure2-chart');
    expect(
      Array.from(chart.querySelectorAll('g.bar')).map((bar) => bar.getAttribute('data-layer')),
    ).toEqual(['1', '2', 'all']);
    expect(chart.querySelector('text.left-out')).toHaveTextContent(
      'Layers without ratings (not drawn): 3–30',
    );
  });

  it('explains majority ties: what a tie is and how its vote is counted', async () => {
    const user = userEvent.setup();
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await screen.findByTestId('figure2-chart');
    await user.click(screen.getByLabelText('majority label'));
    const ties = screen.getByTestId('majority-ties');
    expect(ties).toHaveTextContent(
      'A tie is a prefix where two or more labels have equally many annotators',
    );
    expect(ties).toHaveTextContent(
      'split equally between the tied labels (½ each for two, ⅓ each for three)',
    );
    expect(ties).toHaveTextContent('2 of 10 prefixes are ties.');
  });

  it('builds the report and CSV queries from the filters', async () => {
    const user = userEvent.setup();
    const asked: string[] = [];
    const fetchMock = mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => {
        asked.push('');
        return json(200, makeReport());
      },
      'GET /api/admin/studies/7/composition/': () => json(200, makeCompositionStatus()),
      'GET /api/admin/studies/7/report/?annotators=bob&layers=2&submitted_only=false': () => {
        asked.push('filtered');
        return json(
          200,
          makeReport({ filters: { annotators: ['bob'], layers: [2], submitted_only: false } }),
        );
      },
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await screen.findByTestId('figure2-chart');
    expect(screen.getByTestId('report-csv')).toHaveAttribute(
      'href',
      '/api/admin/studies/7/report.csv',
    );

    const filters = screen.getByTestId('report-filters');
    await user.click(within(filters).getByLabelText('bob'));
    await user.click(within(filters).getByLabelText('Layer 2'));
    await user.click(within(filters).getByLabelText('Submitted annotations only'));
    await user.click(within(filters).getByRole('button', { name: 'Apply filters' }));

    await waitFor(() => expect(asked).toEqual(['', 'filtered']));
    expect(screen.getByTestId('report-csv')).toHaveAttribute(
      'href',
      '/api/admin/studies/7/report.csv?annotators=bob&layers=2&submitted_only=false',
    );
    // Both annotators stay choosable after filtering to one.
    expect(within(filters).getByLabelText('alice')).not.toBeChecked();
    expect(within(filters).getByLabelText('bob')).toBeChecked();
    // The study, the two reports and the composition job's state, once: a filter asks
    // for a report, not for the job again.
    expect(fetchMock).toHaveBeenCalledTimes(4);
  });

  it('prepares an export job, follows its progress and shows the download link', async () => {
    // A fake clock: the job is polled on the page's time, not the machine's.
    useFakeClock();
    let polls = 0;
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
      'POST /api/admin/studies/7/exports/': (init) => {
        expect(JSON.parse(String(init?.body))).toEqual({ format: 'parquet' });
        return json(201, makeExportJob({ format: 'parquet' }));
      },
      'GET /api/admin/exports/5/': () => {
        polls += 1;
        return json(
          200,
          polls < 2
            ? makeExportJob({ format: 'parquet', status: 'running', keys_done: 2, progress: 0.5 })
            : makeExportJob({
                format: 'parquet',
                status: 'done',
                keys_done: 4,
                progress: 1,
                download_url: '/api/admin/exports/5/download',
              }),
        );
      },
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await until(() => screen.getByTestId('figure2-chart'));
    const section = screen.getByTestId('export-section');
    // A small study: direct links too.
    expect(within(section).getByRole('link', { name: 'JSONL' })).toHaveAttribute(
      'href',
      '/api/studies/7/export?format=jsonl',
    );
    fireEvent.click(within(section).getByRole('button', { name: 'Prepare a Parquet export' }));
    await until(() =>
      expect(screen.getByTestId('export-progress')).toHaveTextContent('0 / 4 keys'),
    );
    await advance(EXPORT_POLL_MS - 1);
    expect(polls).toBe(0); // not before a second has passed
    await advance(1);
    await until(() =>
      expect(screen.getByTestId('export-progress')).toHaveTextContent('2 / 4 keys · running'),
    );
    expect(polls).toBe(1);
    await advance(EXPORT_POLL_MS);
    const link = await until(() => screen.getByTestId('export-download'));
    expect(link).toHaveAttribute('href', '/api/admin/exports/5/download');
    await advance(10 * EXPORT_POLL_MS);
    expect(polls).toBe(2); // done: no more polling
  });

  it("writes the definitions for researchers, in the reader's language", async () => {
    const report = makeReport();
    report.definitions = {
      unit: 'server words',
      figure2_majority: 'server words',
      mining: 'Coefficients are the input of down_proj.',
    };
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, report),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await screen.findByTestId('figure2-chart');
    const term = (name: string) => document.querySelector(`.definition[data-term="${name}"]`);
    expect(term('figure2_majority')).toHaveTextContent('Figure 2, by majority label');
    expect(term('figure2_majority')).toHaveTextContent("A tie splits that prefix's vote equally");
    expect(term('unit')).toHaveTextContent('One trigger prefix of one key');
    // What only the study knows (its mining run) is shown as the server wrote it.
    expect(term('mining')).toHaveTextContent('Coefficients are the input of down_proj.');

    await act(() => i18n.changeLanguage('zh-CN'));
    expect(term('figure2_majority')).toHaveTextContent('图 2（多数标签）');
    expect(term('figure2_majority')).toHaveTextContent(
      '平票时该前缀的一票在并列的标签之间平均分配',
    );
  });

  it('folds a layer where no key has two annotators into one line that says so', async () => {
    const report = makeReport();
    const none = { value: null, low: null, high: null, n_units: 0, n_keys: 0, few_keys: false };
    report.agreement.labels.layers[1] = {
      layer: 2,
      krippendorff_alpha: none,
      fleiss_kappa: none,
      cohen_kappa_mean: none,
      raw_agreement: none,
    };
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, report),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await screen.findByTestId('figure2-chart');
    const table = screen.getByTestId('agreement-table');
    expect(table).toHaveTextContent('0.743 [0.612, 0.851]');
    expect(within(table).getByTestId('folded-layers')).toHaveTextContent(
      'Layer 2: no key with two annotators',
    );
    expect(
      within(screen.getByTestId('agreement-binary-table')).queryByTestId('folded-layers'),
    ).toBeNull();
  });

  it('says why a table is empty', async () => {
    const report = makeReport();
    // alice and bob annotated different keys: no prefix has two annotators.
    const none = { value: null, low: null, high: null, n_units: 0, n_keys: 0, few_keys: false };
    const empty = (layer: number | null) => ({
      layer,
      krippendorff_alpha: none,
      fleiss_kappa: none,
      cohen_kappa_mean: none,
      raw_agreement: none,
    });
    for (const block of [report.agreement.labels, report.agreement.binary]) {
      block.layers = [empty(1), empty(2)];
      block.overall = empty(null);
      block.cohen_kappa_pairs = [];
    }
    // The server lists every pair of annotators, with no key compared.
    const noKeys = {
      layers: [{ layer: 1, mean: null, n_keys: 0 }],
      overall: { layer: null, mean: null, n_keys: 0 },
    };
    report.pattern_jaccard = { pairs: [{ annotators: ['alice', 'bob'], ...noKeys }], ...noKeys };
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, report),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await screen.findByTestId('figure2-chart');
    expect(screen.getByTestId('agreement-empty')).toHaveTextContent(
      'No key has two annotators yet, so agreement cannot be computed.',
    );
    expect(screen.queryByTestId('agreement-table')).toBeNull();
    expect(screen.getByTestId('jaccard-empty')).toHaveTextContent(
      'No key has two annotators yet, so their patterns cannot be compared.',
    );
    expect(screen.getByTestId('perturbation-none')).toHaveTextContent(
      'Not measured for this study: its mining run did not measure token removal (§3.2, Figure 3).',
    );
  });

  it('says why a report has no ratings, and that a single annotator has nothing to agree with', async () => {
    const report = makeReport();
    report.agreement.coders = ['alice'];
    const zero = {
      ...report.coverage.overall,
      n_prefixes: 0,
      covered: 0,
      share_covered: null,
      n_annotations: 0,
      n_patterns: 0,
      mean_patterns_per_key: null,
    };
    report.coverage = {
      layers: [{ ...zero, layer: 1 }],
      overall: zero,
      gold: { layers: [{ ...zero, layer: 1 }], overall: zero },
    };
    const nothing = {
      n: 0,
      ties: 0,
      counts: { shallow: 0, semantic: 0, shallow_semantic: 0, not_covered: 0 },
    };
    const noShares = { shallow: null, semantic: null, shallow_semantic: null, not_covered: null };
    report.figure2.pooled = {
      layers: [{ layer: 1, ...nothing, shares: noShares }],
      overall: { layer: null, ...nothing, shares: noShares },
    };
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, report),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await screen.findByTestId('figure2-chart');
    expect(screen.getByTestId('coverage-empty')).toHaveTextContent(
      'No submitted annotation matches these filters yet, so there is nothing to count.',
    );
    expect(screen.queryByTestId('coverage-table')).toBeNull();
    expect(screen.getByTestId('figure2-empty')).toHaveTextContent(
      'No submitted annotation matches these filters yet',
    );
    expect(screen.getByTestId('agreement-empty')).toHaveTextContent(
      'Only alice has annotations in this report: agreement needs two annotators of the same keys.',
    );
  });

  it('shows gold as a Figure 2 source, its coverage and each annotator against gold', async () => {
    const user = userEvent.setup();
    mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await screen.findByTestId('figure2-chart');

    await user.click(screen.getByLabelText('gold (curated)'));
    const chart = screen.getByTestId('figure2-chart');
    expect(chart).toHaveTextContent('gold (curated)');
    // Gold covers layer 1 only: one layer bar and the overall one; layer 2 is named.
    expect(chart.querySelectorAll('g.bar')).toHaveLength(2);
    expect(chart).toHaveTextContent('Layers without ratings (not drawn): 2');
    const shallow = chart.querySelector('g.bar[data-layer="1"] rect[data-label="shallow"]');
    expect(Number(shallow?.getAttribute('height'))).toBeCloseTo(240 * 0.6, 6);

    const coverage = screen.getByTestId('gold-coverage-table');
    expect(within(coverage).getAllByTestId('gold-coverage-share')[0]).toHaveTextContent('80.0%');
    // Layer 2 has no gold: one folded line instead of a row of dashes.
    expect(within(coverage).getByTestId('folded-layers')).toHaveTextContent(
      'Layer 2: no submitted gold',
    );

    const table = screen.getByTestId('gold-agreement-table');
    const alice = table.querySelector('tr[data-annotator="alice"]');
    expect(alice).toHaveTextContent('0.667');
    expect(alice).toHaveTextContent('80.0%');
    expect(alice).toHaveTextContent('60.0%');
    expect(alice).toHaveTextContent('0.375');
    expect(table.querySelector('tr[data-annotator="bob"]')).toHaveTextContent('0.000');
    expect(screen.getByTestId('gold-as-coder-note')).toHaveTextContent('does not count as a coder');
    expect(screen.getByTestId('annotator-table-link')).toHaveAttribute(
      'href',
      '/manage/studies/7/annotators',
    );
  });

  it('asks for gold as a coder and says that the report counted it', async () => {
    const user = userEvent.setup();
    const withGold = makeReport();
    withGold.agreement.gold_as_coder = true;
    withGold.agreement.coders = ['alice', 'bob', '(gold)'];
    const fetchMock = mockApi({
      [STUDY]: () => json(200, makeStudy()),
      [REPORT]: () => json(200, makeReport()),
      [`${REPORT}?gold_as_coder=true`]: () => json(200, withGold),
    });
    renderApp({ path: '/manage/studies/7/report', user: carol });
    await screen.findByTestId('figure2-chart');
    await user.click(screen.getByTestId('gold-as-coder'));
    await user.click(screen.getByRole('button', { name: 'Apply filters' }));
    await waitFor(() =>
      expect(screen.getByTestId('gold-as-coder-note')).toHaveTextContent(
        'Gold (curated) counts as a coder, named (gold).',
      ),
    );
    expect(fetchMock.mock.calls.at(-1)?.[0]).toBe(
      '/api/admin/studies/7/report/?gold_as_coder=true',
    );
    // Gold among the coders is not offered as an annotator to filter by.
    const filters = screen.getByTestId('report-filters');
    expect(within(filters).queryByLabelText('(gold)')).toBeNull();
    expect(within(filters).getByLabelText('alice')).toBeInTheDocument();
    expect(screen.getByTestId('report-csv')).toHaveAttribute(
      'href',
      '/api/admin/studies/7/report.csv?gold_as_coder=true',
    );
  });

  it('is for staff only', () => {
    mockApi({});
    renderApp({ path: '/manage/studies/7/report', user: alice });
    expect(screen.getByTestId('staff-only')).toBeInTheDocument();
  });
});

/** The report of a study mined in 30 layers whose annotations are in layers 1 and 2. */
function thirtyLayerReport() {
  const report = makeReport();
  const layers = Array.from({ length: 28 }, (_, i) => i + 3);
  const noShares = { shallow: null, semantic: null, shallow_semantic: null, not_covered: null };
  const zero = { shallow: 0, semantic: 0, shallow_semantic: 0, not_covered: 0 };
  const none = { value: null, low: null, high: null, n_units: 0, n_keys: 0, few_keys: false };
  report.figure2.pooled.layers.push(
    ...layers.map((layer) => ({ layer, n: 0, ties: 0, counts: zero, shares: noShares })),
  );
  report.coverage.layers.push(
    ...layers.map((layer) => ({
      layer,
      n_prefixes: 0,
      covered: 0,
      share_covered: null,
      n_annotations: 0,
      n_patterns: 0,
      mean_patterns_per_key: null,
    })),
  );
  for (const block of [report.agreement.labels, report.agreement.binary]) {
    block.layers.push(
      ...layers.map((layer) => ({
        layer,
        krippendorff_alpha: none,
        fleiss_kappa: none,
        cohen_kappa_mean: none,
        raw_agreement: none,
      })),
    );
  }
  report.pattern_jaccard.layers.push(...layers.map((layer) => ({ layer, mean: null, n_keys: 0 })));
  report.pattern_jaccard.pairs[0]!.layers.push(
    ...layers.map((layer) => ({ layer, mean: null, n_keys: 0 })),
  );
  return report;
}

async function openReport(report: ReturnType<typeof makeReport>) {
  mockApi({
    [STUDY]: () => json(200, makeStudy()),
    [REPORT]: () => json(200, report),
  });
  renderApp({ path: '/manage/studies/7/report', user: carol });
  await screen.findByTestId('figure2-chart');
}

describe('report tables', () => {
  it('fold the layers without data into one line each, not 28 empty rows', async () => {
    await openReport(thirtyLayerReport());
    const coverage = screen.getByTestId('coverage-table');
    // Layers 1, 2, the folded line, all layers, the paper.
    expect(coverage.querySelectorAll('tbody tr')).toHaveLength(5);
    expect(within(coverage).getByTestId('folded-layers')).toHaveTextContent(
      'Layers 3–30: no ratings',
    );
    for (const [testId, why] of [
      ['agreement-table', 'Layers 3–30: no key with two annotators'],
      ['agreement-binary-table', 'Layers 3–30: no key with two annotators'],
      ['jaccard-table', 'Layers 2–30: no key compared'],
    ] as const) {
      const table = screen.getByTestId(testId);
      expect(within(table).getByTestId('folded-layers'), testId).toHaveTextContent(why);
      expect(table.querySelectorAll('tbody tr').length, testId).toBeLessThanOrEqual(4);
    }
    // The folded line spans the whole row.
    const folded = within(coverage).getByTestId('folded-layers').querySelector('th');
    expect(folded).toHaveAttribute('colspan', '7');
  });

  it('name the column of every cell, for the cards a phone shows', async () => {
    await openReport(thirtyLayerReport());
    const cells = document.querySelectorAll('table.report-table td');
    expect(cells.length).toBeGreaterThan(40);
    for (const cell of Array.from(cells)) {
      expect(cell.getAttribute('data-label')?.trim(), cell.textContent ?? '').toBeTruthy();
    }
    // The label is the column's header.
    const agreement = screen.getByTestId('agreement-table');
    const alpha = agreement.querySelector('tbody tr td');
    expect(alpha).toHaveAttribute('data-label', "Krippendorff's α");
  });

  it('mark an interval that rests on few keys, beside it and in a note, in both languages', async () => {
    const report = makeReport();
    report.agreement.labels.layers[0]!.krippendorff_alpha = {
      value: 0.5,
      low: 0.2,
      high: 0.8,
      n_units: 50,
      n_keys: 3,
      few_keys: true,
    };
    await openReport(report);
    const table = screen.getByTestId('agreement-table');
    const warnings = within(table).getAllByTestId('few-keys');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.closest('td')).toHaveTextContent('0.500 [0.200, 0.800]only 3 keys');
    expect(screen.getByTestId('agreement-table-few-keys')).toHaveTextContent(
      'the interval rests on fewer than 10 keys',
    );
    expect(screen.queryByTestId('agreement-binary-table-few-keys')).toBeNull();
    await act(() => i18n.changeLanguage('zh-CN'));
    try {
      expect(within(table).getByTestId('few-keys')).toHaveTextContent('仅 3 个键');
      expect(screen.getByTestId('agreement-table-few-keys')).toHaveTextContent('少于 10 个键');
    } finally {
      await act(() => i18n.changeLanguage('en'));
    }
  });
});

describe('§4 captions', () => {
  it("say the study's own number of sampled keys a layer, in proper plurals", async () => {
    const report = makeReport();
    await openReport(report);
    // makeReport: 2 sampled keys in each layer, 1 key left out of reading (a) overall.
    expect(screen.getByTestId('value-agreement-table')).toHaveTextContent(
      'Sampled keys only (2 keys a layer: a rate moves in steps of 50.0%)',
    );
    expect(screen.getByTestId('value-agreement-table')).not.toHaveTextContent('about 10');
  });

  it('say "1 key" and "no key" where that is the count', async () => {
    const report = makeReport();
    for (const row of report.value_agreement.layers) row.n_keys = 1;
    report.value_agreement_every_key.overall!.next_unknown = 1;
    await openReport(report);
    expect(screen.getByTestId('value-agreement-table')).toHaveTextContent(
      '(1 key a layer: a rate moves in steps of 100.0%)',
    );
    expect(screen.getByTestId('value-every-key-note')).toHaveTextContent(
      'Reading (a) leaves out the 1 key whose rank-1 prefix ends where a sentence was cut (its',
    );
  });

  it('give the range where layers differ, and the note says when no key is left out', async () => {
    const report = makeReport();
    report.value_agreement.layers[0]!.n_keys = 3;
    report.value_agreement.layers[1]!.n_keys = 10;
    report.value_agreement_every_key.overall!.next_unknown = 0;
    await openReport(report);
    expect(screen.getByTestId('value-agreement-table')).toHaveTextContent(
      '(3 to 10 keys a layer: a rate moves in steps of 10.0% or more)',
    );
    expect(screen.getByTestId('value-every-key-note')).toHaveTextContent(
      'Reading (a) leaves out no key',
    );
    await act(() => i18n.changeLanguage('zh-CN'));
    try {
      expect(screen.getByTestId('value-agreement-table')).toHaveTextContent('每层 3 到 10 个');
    } finally {
      await act(() => i18n.changeLanguage('en'));
    }
  });
});
