import { QueryClientProvider } from '@tanstack/react-query';
import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { makeQueryClient } from '../../../api/queryClient';
import type { ReportComposition, ReportSparsity } from '../../../api/types';
import i18n from '../../../i18n';
import { makeComposition, makeCompositionStatus, makeSparsity } from '../../../test/factories';
import { json, mockApi } from '../../../test/utils';
import { makeFormatters } from '../lib/format';
import { CompositionSection } from './CompositionSection';
import { LAYER_PLOT_HEIGHT, layerScale } from './LayerChart';
import { SparsitySection } from './SparsitySection';

const STATUS = 'GET /api/admin/studies/7/composition/';

function renderSections(composition: ReportComposition, sparsity: ReportSparsity = makeSparsity()) {
  const fetchMock = mockApi({ [STATUS]: () => json(200, makeCompositionStatus()) });
  const f = makeFormatters(i18n.language);
  render(
    <QueryClientProvider client={makeQueryClient({ retry: false })}>
      <CompositionSection composition={composition} studyId={7} studyName="demo" f={f} />
      <SparsitySection sparsity={sparsity} studyName="demo" f={f} />
    </QueryClientProvider>,
  );
  return { fetchMock, section: screen.getByTestId('composition-section') };
}

/** The value a point of `series` stands for at `layer`, read back from its height. */
function pointAt(chartId: string, series: string, layer: number): number {
  const chart = screen.getByTestId(`chart-${chartId}`);
  const point = chart.querySelector(
    `g.series[data-series="${series}"] g.point-group[data-layer="${layer}"] circle.point`,
  );
  if (!point) throw new Error(`no point of ${series} at layer ${layer}`);
  return Number(point.getAttribute('data-value'));
}

function cell(tableId: string, layer: number, column: string): string {
  const row = screen.getByTestId(`table-${tableId}`).querySelector(`tr[data-layer="${layer}"]`);
  return row?.querySelector(`td[data-column="${column}"]`)?.textContent ?? '';
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the composition section (§5)', () => {
  it('draws the five figures with what the paper measured, the slice and when computed', async () => {
    const { section } = renderSections(makeComposition());
    expect(within(section).getByRole('heading', { name: 'Composition (§5)' })).toBeInTheDocument();
    expect(screen.getByTestId('composition-note')).toHaveTextContent(
      '16-layer model with d_ff 4,096 and no final norm, on WikiText-103',
    );
    expect(screen.getByTestId('composition-note')).toHaveTextContent('not a replication');
    for (const id of ['active', 'agreement', 'residual', 'change', 'final-prob']) {
      const svg = screen.getByTestId(`chart-${id}`);
      // Named by its title, for a screen reader, and given as a table too.
      expect(svg).toHaveAttribute('role', 'img');
      expect(screen.getByRole('img', { name: svg.querySelector('title')!.textContent! })).toBe(svg);
      expect(screen.getByTestId(`table-${id}`).querySelectorAll('tbody tr')).toHaveLength(2);
    }
    expect(screen.getByTestId('caption-active')).toHaveTextContent(
      'Figure 7: 10–50% of the 4,096 memories active (m_i > 0) per layer, fewest near layer 10.',
    );
    expect(screen.getByTestId('caption-agreement')).toHaveTextContent(
      'Figure 8: in every layer, in at least about 68% of the prefixes',
    );
    expect(screen.getByTestId('caption-residual')).toHaveTextContent(
      'Figure 9: about a third of the final predictions are already decided in the bottom layers',
    );
    expect(screen.getByTestId('caption-final-prob')).toHaveTextContent('Figure 10:');
    expect(screen.getByTestId('caption-change')).toHaveTextContent('most changes are compositions');

    expect(screen.getByTestId('composition-prefixes')).toHaveTextContent('4,000');
    expect(screen.getByTestId('composition-held-out')).toHaveTextContent('3,000');
    expect(screen.getByTestId('composition-from-mined')).toHaveTextContent('1,000');
    expect(screen.getByTestId('composition-slice-note')).toHaveTextContent(
      'The corpus had 3,000 sentences that mining did not read: the other 1,000 prefixes',
    );
    expect(screen.getByTestId('composition-computed')).toHaveTextContent('(job 3)');
    expect(screen.getByTestId('composition-computed').querySelector('time')).toHaveAttribute(
      'dateTime',
      '2026-12-04T10:00:00Z',
    );
    // The job's panel is there, and asked for the latest job.
    await waitFor(() =>
      expect(screen.getByTestId('composition-job-status')).toHaveTextContent(
        'The analysis has not run for this study yet.',
      ),
    );
  });

  it('shows the reading with the final norm first, and switches to the one without', async () => {
    const user = userEvent.setup();
    renderSections(makeComposition());
    const reading = screen.getByRole('group', { name: 'Projection on the vocabulary' });
    expect(within(reading).getByLabelText('with final norm')).toBeChecked();
    expect(pointAt('residual', 'residual_final_share', 1)).toBeCloseTo(0.3);
    expect(pointAt('residual', 'residual_final_share', 2)).toBeCloseTo(0.6);
    expect(pointAt('agreement', 'none_agree_share', 1)).toBeCloseTo(0.81);
    expect(pointAt('final-prob', 'final_prob_mean', 2)).toBeCloseTo(0.3);
    expect(cell('residual', 1, 'residual_final_share')).toBe('30.0%');
    expect(screen.getByTestId('chart-residual').querySelector('title')).toHaveTextContent(
      '(with final norm)',
    );
    const ffn = () =>
      screen
        .getByTestId('chart-change')
        .querySelector('g.bar[data-layer="1"] rect[data-part="ffn"]');
    expect(Number(ffn()?.getAttribute('height'))).toBeCloseTo(0.2 * LAYER_PLOT_HEIGHT, 6);

    await user.click(within(reading).getByLabelText('without final norm'));
    expect(pointAt('residual', 'residual_final_share', 1)).toBeCloseTo(0.2);
    expect(pointAt('agreement', 'none_agree_share', 1)).toBeCloseTo(0.71);
    expect(pointAt('final-prob', 'final_prob_mean', 2)).toBeCloseTo(0.2);
    expect(cell('residual', 1, 'residual_final_share')).toBe('20.0%');
    expect(cell('change', 1, 'change_residual')).toBe('60.0%');
    expect(Number(ffn()?.getAttribute('height'))).toBeCloseTo(0.1 * LAYER_PLOT_HEIGHT, 6);
    expect(screen.getByTestId('chart-residual').querySelector('title')).toHaveTextContent(
      '(without final norm)',
    );
    // Figure 7 reads no vocabulary: the same in both readings.
    expect(pointAt('active', 'active_share', 1)).toBeCloseTo(0.3);
  });

  it('draws the plain numbers of a model without a final norm, with no reading to choose', () => {
    renderSections(makeComposition({ readings: false }));
    expect(screen.queryByTestId('composition-reading')).not.toBeInTheDocument();
    expect(screen.queryByRole('radio')).not.toBeInTheDocument();
    expect(pointAt('residual', 'residual_final_share', 2)).toBeCloseTo(0.4);
    expect(pointAt('agreement', 'agree_stopword_share', 1)).toBeCloseTo(0.5);
    expect(cell('change', 2, 'change_neither')).toBe('30.0%');
    expect(cell('final-prob', 1, 'final_prob_mean')).toBe('0.100');
    expect(screen.getByTestId('chart-residual').querySelector('title')).not.toHaveTextContent(
      'final norm',
    );
    expect(screen.getByTestId('composition-slice')).toHaveTextContent('Final normnone');
  });

  it('draws the mean and its q1–q3 range, and the tenth-of-peak reading of a gated model', () => {
    renderSections(makeComposition({ gated: true }));
    const chart = screen.getByTestId('chart-active');
    expect(chart.querySelectorAll('g.series')).toHaveLength(2);
    const whisker = chart.querySelector(
      'g.series[data-series="active_share"] g.point-group[data-layer="1"] line.whisker',
    );
    expect(Number(whisker?.getAttribute('data-low'))).toBeCloseTo(0.2);
    expect(Number(whisker?.getAttribute('data-high'))).toBeCloseTo(0.4);
    const { top } = layerScale({
      kind: 'points',
      series: [{ id: 'a', name: 'a', color: '#000', points: [{ value: 0.3, high: 0.4 }] }],
    });
    expect(Number(whisker?.getAttribute('y2'))).toBeCloseTo(
      LAYER_PLOT_HEIGHT - (0.4 / top) * LAYER_PLOT_HEIGHT,
      6,
    );
    expect(pointAt('active', 'active_share_tenth', 2)).toBeCloseTo(0.1);
    expect(screen.getByTestId('composition-gated-note')).toHaveTextContent('SwiGLU');
    expect(cell('active', 2, 'active_share_tenth_q3')).toBe('12.0%');
  });

  it('says an encoder has no composition, and still shows the sparsity figures', () => {
    const { fetchMock } = renderSections(makeComposition({ applies: false }));
    expect(screen.getByTestId('composition-encoder')).toHaveTextContent(
      "This study's model is an encoder: it predicts no next token, so the composition figures do not apply. Only sparsity does (below).",
    );
    expect(screen.queryByTestId('composition-job')).not.toBeInTheDocument();
    expect(screen.queryByTestId('chart-active')).not.toBeInTheDocument();
    expect(fetchMock).not.toHaveBeenCalled();
    expect(screen.getByTestId('chart-density')).toBeInTheDocument();
  });

  it('says the figures are not computed yet, and offers the job', async () => {
    renderSections(makeComposition({ computed: false }));
    expect(screen.getByTestId('composition-not-computed')).toHaveTextContent(
      'Not computed yet: run the analysis below',
    );
    expect(screen.queryByTestId('chart-active')).not.toBeInTheDocument();
    const form = screen.getByRole('form', { name: 'Composition analysis' });
    await waitFor(() =>
      expect(within(form).getByLabelText('Prefixes in the slice')).toHaveValue(4000),
    );
    expect(within(form).getByRole('button', { name: 'Run the analysis' })).toBeEnabled();
  });

  it('tells the layers left out by the filters apart from "not computed"', () => {
    renderSections({ ...makeComposition(), layers: [] });
    expect(screen.getByTestId('composition-no-layers')).toBeInTheDocument();
    expect(screen.queryByTestId('composition-not-computed')).not.toBeInTheDocument();
  });

  it('downloads a figure as CSV (the report field names, raw numbers), SVG and PNG', async () => {
    const user = userEvent.setup();
    const saved: { name: string; blob: Blob }[] = [];
    let lastBlob: Blob | null = null;
    vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => {
      lastBlob = blob as Blob;
      return 'blob:chart';
    });
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {});
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (
      this: HTMLAnchorElement,
    ) {
      saved.push({ name: this.download, blob: lastBlob! });
    });
    renderSections(makeComposition());
    const figure = screen.getByTestId('figure-change');
    await user.click(
      within(figure).getByRole('button', {
        name: 'Download Where the FFN moves the top token as CSV',
      }),
    );
    expect(saved[0]?.name).toBe('demo-composition-change-with_final_norm.csv');
    expect(await saved[0]!.blob.text()).toBe(
      'layer,change_residual,change_ffn,change_neither\r\n1,0.5,0.2,0.3\r\n2,0.5,0.2,0.3\r\n',
    );
    await user.click(
      within(figure).getByRole('button', {
        name: 'Download Where the FFN moves the top token as SVG',
      }),
    );
    expect(saved[1]?.name).toBe('demo-composition-change-with_final_norm.svg');
    const svg = await saved[1]!.blob.text();
    expect(svg).toMatch(/^<\?xml/);
    expect(svg).toContain('rect class="bar-segment"');
    expect(
      within(figure).getByRole('button', {
        name: 'Download Where the FFN moves the top token as PNG',
      }),
    ).toBeEnabled();
  });

  it('is written in Chinese for a Chinese reader', async () => {
    await act(() => i18n.changeLanguage('zh-CN'));
    renderSections(makeComposition());
    expect(screen.getByRole('heading', { name: '组合（§5）' })).toBeInTheDocument();
    expect(screen.getByTestId('caption-active')).toHaveTextContent('论文图 7');
    expect(screen.getByRole('heading', { name: '稀疏性' })).toBeInTheDocument();
    expect(screen.getByTestId('chart-residual').querySelector('title')).toHaveTextContent(
      '（经最终归一化）',
    );
    await waitFor(() => expect(screen.getByRole('form', { name: '组合分析' })).toBeInTheDocument());
  });
});

describe('the sparsity block', () => {
  it('draws key density, the Gini coefficient and the keys above a tenth of the peak', () => {
    renderSections(makeComposition());
    const section = screen.getByTestId('sparsity-section');
    expect(within(section).getByRole('heading', { name: 'Sparsity', level: 2 })).toBeVisible();
    expect(screen.getByTestId('sparsity-paper')).toHaveTextContent(
      'The paper reports no such figures',
    );
    expect(screen.getByTestId('sparsity-positions')).toHaveTextContent('25,000 positions');
    // The median, with q1–q3.
    expect(pointAt('density', 'density', 1)).toBeCloseTo(0.25);
    const whisker = screen
      .getByTestId('chart-density')
      .querySelector('g.point-group[data-layer="1"] line.whisker');
    expect(Number(whisker?.getAttribute('data-low'))).toBeCloseTo(0.1);
    expect(Number(whisker?.getAttribute('data-high'))).toBeCloseTo(0.45);
    expect(pointAt('gini', 'gini', 2)).toBeCloseTo(0.6);
    expect(cell('gini', 2, 'gini')).toBe('0.600');
    expect(cell('above-tenth', 1, 'above_tenth_of_peak')).toBe('12.0%');
  });

  it('says when a study has no sparsity figures', () => {
    renderSections(makeComposition(), makeSparsity([]));
    expect(screen.getByTestId('sparsity-empty')).toHaveTextContent('No sparsity figures');
    expect(screen.queryByTestId('chart-density')).not.toBeInTheDocument();
  });
});
