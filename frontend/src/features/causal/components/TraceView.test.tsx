import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { makeTraceResult } from '../../../test/causalFactories';
import { captureDownloads, f, renderView } from '../../../test/causalRender';
import { TraceView } from './TraceView';

describe('the tracing view', () => {
  it('draws the three heatmaps, tokens as columns, the subject marked, the peak outlined', () => {
    renderView(<TraceView result={makeTraceResult()} f={f} fileBase="demo-job12" />);
    const view = screen.getByTestId('trace-result');
    expect(view).toHaveAccessibleName('Causal tracing result');
    for (const kind of ['hidden', 'mlp', 'attn']) {
      const map = screen.getByTestId(`heatmap-${kind}`);
      expect(map.querySelectorAll('rect.heat-cell')).toHaveLength(4 * 7);
      const names = Array.from(map.querySelectorAll('text.token-name'));
      expect(names.map((name) => name.textContent)).toEqual([
        'The*',
        'E*',
        'iff*',
        'el*',
        'Tower*',
        'is',
        'in',
      ]);
      expect(map.querySelectorAll('text.token-name[data-subject="true"]')).toHaveLength(5);
    }
    const hidden = screen.getByTestId('heatmap-hidden');
    expect(hidden).toHaveAccessibleName(
      'Hidden state restored: p(“ Paris”) restored − corrupted, per layer and token',
    );
    const peak = hidden.querySelector('rect.peak-cell')!;
    expect(peak).toHaveAttribute('data-layer', '3');
    expect(peak).toHaveAttribute('data-token', '4');
    // The largest effect takes the scale's darkest colour; a cell of no effect the lightest.
    expect(hidden.querySelector('rect.heat-cell[data-layer="3"][data-token="4"]')).toHaveAttribute(
      'fill',
      '#081d58',
    );
    expect(hidden.querySelector('rect.heat-cell[data-layer="1"][data-token="6"]')).toHaveAttribute(
      'fill',
      '#ffffd9',
    );
    expect(hidden.querySelector('.legend-top')).toHaveTextContent('8.7%');
    expect(screen.getByTestId('caption-trace-hidden')).toHaveTextContent(
      'Peak: layer 3, token 4 “Tower” (subject), 8.7%.',
    );
  });

  it('gives p(answer) clean and corrupted, the peaks and the paper anchor', () => {
    renderView(<TraceView result={makeTraceResult()} f={f} fileBase="demo" />);
    expect(screen.getByTestId('trace-p-clean')).toHaveTextContent('96.1%');
    expect(screen.getByTestId('trace-p-corrupted')).toHaveTextContent('2.3%');
    const facts = screen.getByTestId('trace-facts');
    expect(within(facts).getByText('p(“ Paris”), clean run')).toBeInTheDocument();
    const peaks = screen.getByTestId('trace-peaks');
    expect(within(peaks).getByRole('row', { name: /Hidden state/ })).toHaveTextContent(
      'Hidden state3token 4 “Tower” (subject)8.7%',
    );
    expect(within(peaks).getByRole('row', { name: /Attention/ })).toHaveTextContent('1.6%');
    expect(screen.getByTestId('trace-anchor')).toHaveTextContent(
      'peaking at 8.7% for a hidden state at layer 15',
    );
    expect(screen.getByTestId('trace-anchor')).toHaveTextContent('not a replication');
  });

  it('lists the strongest keys at the peak MLP site, linked where the study mined them', () => {
    renderView(<TraceView result={makeTraceResult()} f={f} fileBase="demo" />);
    const keys = screen.getByTestId('trace-keys');
    expect(keys).toHaveTextContent('Layer 2 at token 4 “Tower” (subject)');
    const link = within(keys).getByRole('link', { name: 'L2 · key 400' });
    expect(link).toHaveAttribute('href', '/manage/review/keys/901');
    // Not mined in the study: plain text.
    expect(within(keys).getByText('L2 · key 17')).toBeInTheDocument();
    expect(within(keys).queryByRole('link', { name: 'L2 · key 17' })).not.toBeInTheDocument();
    const row = within(keys).getByRole('row', { name: /L2 · key 400/ });
    expect(row).toHaveTextContent('L2 · key 40024000.1251.5');
  });

  it('downloads a heatmap as CSV, one row a site', async () => {
    const user = userEvent.setup();
    const saved = captureDownloads();
    renderView(<TraceView result={makeTraceResult()} f={f} fileBase="demo-job12" />);
    const figure = screen.getByTestId('figure-trace-hidden');
    await user.click(
      within(figure).getByRole('button', {
        name: 'Download Hidden state: indirect effect per layer and token as CSV',
      }),
    );
    expect(saved[0]?.name).toBe('demo-job12-trace-hidden.csv');
    const lines = (await saved[0]!.blob.text()).split('\r\n');
    expect(lines[0]).toBe('layer,position,token,subject,indirect_effect');
    expect(lines[1]).toBe('1,0,The,1,0');
    expect(lines).toContain('3,4, Tower,1,0.087');
    expect(lines).toHaveLength(1 + 4 * 7 + 1);
    await user.click(
      within(figure).getByRole('button', {
        name: 'Download Hidden state: indirect effect per layer and token as SVG',
      }),
    );
    expect(saved[1]?.name).toBe('demo-job12-trace-hidden.svg');
    expect(await saved[1]!.blob.text()).toContain('class="heat-cell"');
  });
});
