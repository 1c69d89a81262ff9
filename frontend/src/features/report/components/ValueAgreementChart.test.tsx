import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { makeEveryKey, makeReport } from '../../../test/factories';
import { makeFormatters } from '../lib/format';
import { VALUE_PLOT_HEIGHT, ValueAgreementChart, valueScale } from './ValueAgreementChart';
import type { ValueSeries } from './ValueAgreementChart';
import { ValueAgreementSection } from './ValueAgreementSection';

const f = makeFormatters('en');
const SERIES: ValueSeries[] = [
  { reading: 'next_token', variant: 'without_final_norm', name: 'next, plain' },
  { reading: 'next_token', variant: 'with_final_norm', name: 'next, normed' },
  { reading: 'trigger_token', variant: 'without_final_norm', name: 'trigger, plain' },
  { reading: 'trigger_token', variant: 'with_final_norm', name: 'trigger, normed' },
];
const THIRTY = Array.from({ length: 30 }, (_, i) => i + 1);

function renderChart(layers: number[], maxWidth?: number, title = '§4') {
  const block = makeEveryKey(layers);
  render(
    <ValueAgreementChart
      rows={block.layers}
      series={SERIES}
      baseline={block.random_baseline}
      title={title}
      maxWidth={maxWidth}
      axisTitle="rate"
      baselineLabel="random"
      shortLayer={(layer) => `L${layer}`}
      longLayer={(layer) => `Layer ${layer}`}
      describe={(rate) => `${rate.matches}/${rate.n}`}
    />,
  );
  return { block, svg: screen.getByTestId('value-agreement-chart') };
}

describe('§4 chart over every key', () => {
  it('keeps 30 layers and the legend within 1,000 px, the legend under the plot', () => {
    const { svg } = renderChart(THIRTY);
    expect(Number(svg.getAttribute('width'))).toBeLessThanOrEqual(1000);
    const legend = svg.querySelector('g.legend')!;
    const [, legendY] = /translate\((\d+),(\d+)\)/
      .exec(legend.getAttribute('transform')!)!
      .slice(1)
      .map(Number);
    expect(legendY).toBeGreaterThan(VALUE_PLOT_HEIGHT);
    expect(legend.querySelectorAll('text')).toHaveLength(5);
  });

  it('draws one line per reading × variant, a point and a Wilson whisker per layer, for 30 layers', () => {
    const { block, svg } = renderChart(THIRTY);
    const series = svg.querySelectorAll('g.series');
    expect(series).toHaveLength(4);
    const highest = Math.max(
      ...block.layers.flatMap((row) => SERIES.map((s) => row[s.reading][s.variant]!.high!)),
    );
    const { top } = valueScale(highest);
    const y = (value: number) => VALUE_PLOT_HEIGHT - (value / top) * VALUE_PLOT_HEIGHT;
    for (const group of series) {
      const reading = group.getAttribute('data-reading') as 'next_token' | 'trigger_token';
      const variant = group.getAttribute('data-variant') as
        'without_final_norm' | 'with_final_norm';
      const points = group.querySelectorAll('circle.point');
      expect(points).toHaveLength(30);
      const whiskers = group.querySelectorAll('line.whisker');
      block.layers.forEach((row, i) => {
        const rate = row[reading][variant]!;
        expect(Number(points[i]!.getAttribute('cy'))).toBeCloseTo(y(rate.rate!), 6);
        // The whisker spans the Wilson interval and holds the point.
        expect(Number(whiskers[i]!.getAttribute('y1'))).toBeCloseTo(y(rate.low!), 6);
        expect(Number(whiskers[i]!.getAttribute('y2'))).toBeCloseTo(y(rate.high!), 6);
      });
    }
    // Layer 30's next-token rate with the final norm (60 of 1533) is the highest point.
    const top30 = svg.querySelector(
      'g.series[data-reading="next_token"][data-variant="with_final_norm"] g[data-layer="30"] circle',
    );
    expect(top30).toHaveTextContent('Layer 30 · next, normed: 60/1533');
    // Every layer keeps its own label, and the four points of a layer do not overlap.
    for (const layer of THIRTY)
      expect(within(svg as unknown as HTMLElement).getByText(`L${layer}`)).toBeInTheDocument();
    const xs = Array.from(svg.querySelectorAll('g[data-layer="1"] circle.point')).map((c) =>
      Number(c.getAttribute('cx')),
    );
    expect(new Set(xs).size).toBe(4);
  });

  it('draws the random baseline 1/|V| as its own line', () => {
    const { svg } = renderChart([1, 2]);
    const baseline = svg.querySelector('line.baseline');
    expect(Number(baseline?.getAttribute('data-baseline'))).toBeCloseTo(1 / 49152, 12);
    expect(svg.querySelector('g.legend')).toHaveTextContent('random');
  });

  it('breaks a line where a layer has no rate', () => {
    const block = makeEveryKey([1, 2, 3]);
    block.layers[1]!.next_token.with_final_norm = {
      matches: 0,
      n: 0,
      rate: null,
      low: null,
      high: null,
    };
    render(
      <ValueAgreementChart
        rows={block.layers}
        series={SERIES}
        baseline={null}
        title="§4"
        axisTitle="rate"
        baselineLabel="random"
        shortLayer={(layer) => `L${layer}`}
        longLayer={(layer) => `Layer ${layer}`}
        describe={() => ''}
      />,
    );
    const group = screen
      .getByTestId('value-agreement-chart')
      .querySelector('g.series[data-reading="next_token"][data-variant="with_final_norm"]')!;
    expect(group.querySelectorAll('circle.point')).toHaveLength(2);
    expect(group.querySelector('path')?.getAttribute('d')?.match(/M/g)).toHaveLength(2);
    expect(screen.getByTestId('value-agreement-chart').querySelector('line.baseline')).toBeNull();
  });
});

describe('§4 chart on a narrow screen', () => {
  it('fits 30 layers into 358 px: narrower slots, every fifth layer named, the title wrapped', () => {
    const title = "§4: the value's top token vs the rank-1 prefix, every key, per layer";
    const { svg } = renderChart(THIRTY, 358, title);
    expect(Number(svg.getAttribute('width'))).toBe(358);
    const points = Array.from(
      svg.querySelectorAll(
        'g.series[data-reading="next_token"][data-variant="with_final_norm"] circle.point',
      ),
    );
    expect(points).toHaveLength(30);
    const plotLeft = 64;
    for (const point of points) {
      expect(plotLeft + Number(point.getAttribute('cx'))).toBeLessThanOrEqual(358);
    }
    const names = Array.from(svg.querySelectorAll('text.layer-name')).map((t) => t.textContent);
    expect(names).toEqual(['L1', 'L6', 'L11', 'L16', 'L21', 'L26']);
    const lines = Array.from(svg.querySelectorAll('text.chart-title tspan'));
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.map((line) => line.textContent).join(' ')).toBe(title);
  });

  it('keeps its own width where it fits', () => {
    const { svg } = renderChart(THIRTY, 1400);
    expect(Number(svg.getAttribute('width'))).toBe(64 + 30 * 30 + 16);
    expect(svg.querySelectorAll('text.layer-name')).toHaveLength(30);
  });
});

describe('§4 scale', () => {
  it('fits rates near 0 and never goes past 100%', () => {
    expect(valueScale(0.035).top).toBeCloseTo(0.04, 12);
    expect(valueScale(0.035).ticks).toHaveLength(5);
    expect(valueScale(0.0031).top).toBeCloseTo(0.004, 12);
    expect(valueScale(0.0031).decimals).toBe(1); // ticks of 0.1%
    expect(valueScale(0.0003).decimals).toBe(2); // ticks of 0.01%
    expect(valueScale(1).top).toBe(1);
    expect(valueScale(0).top).toBeGreaterThan(0);
  });
});

describe('§4 section', () => {
  it('shows the figure and a table over every key, then the sampled keys labelled as such', () => {
    const report = makeReport();
    render(
      <ValueAgreementSection
        everyKey={report.value_agreement_every_key}
        sampled={report.value_agreement}
        f={f}
      />,
    );
    expect(screen.getByTestId('value-agreement-chart')).toBeInTheDocument();
    const table = screen.getByTestId('value-every-key-table');
    expect(within(table).getAllByRole('row')).toHaveLength(1 + 2 + 1);
    expect(
      within(table).getByRole('columnheader', { name: 'Next token (a), with final norm' }),
    ).toBeInTheDocument();
    // Layer 2 with the final norm: 4 of 1536 − 3 keys; the fixture's interval is ±10%.
    const cells = within(table).getAllByTestId('every-key-next_token-with_final_norm');
    expect(cells[1]).toHaveTextContent('0.26% [0.00%, 10.26%] (4/1,533)');
    expect(screen.getByTestId('value-every-key-note')).toHaveTextContent('leaves out the 6 keys');
    expect(screen.getByTestId('value-every-key-note')).toHaveTextContent('Final norm: model.norm');
    expect(screen.getByText('Over the sampled keys only')).toBeInTheDocument();
    const sampled = screen.getByTestId('value-agreement-table');
    expect(sampled).toHaveTextContent('Sampled keys only');
    // Layer 2's one cut sentence is out of reading (a): 0 of 1.
    expect(sampled).toHaveTextContent('0.00% [0.00%, 10.00%] (0/1)');
  });

  it('says §4 does not apply to an encoder, for every key and for the sampled keys, without a rate', () => {
    const report = makeReport();
    const na = {
      ...report.value_agreement_every_key,
      applicable: false,
      reason: 'encoder' as const,
      variants: [],
      layers: [],
      overall: null,
    };
    const sampled = {
      ...report.value_agreement,
      applicable: false,
      reason: 'encoder' as const,
      layers: [],
      overall: null,
    };
    render(<ValueAgreementSection everyKey={na} sampled={sampled} f={f} />);
    expect(screen.getByTestId('value-every-key-na')).toHaveTextContent(
      'Does not apply: encoders have no next token',
    );
    expect(screen.getByTestId('value-sampled-na')).toHaveTextContent('encoders have no next token');
    expect(screen.queryByTestId('value-agreement-chart')).toBeNull();
    expect(screen.queryByTestId('value-every-key-table')).toBeNull();
    expect(screen.queryByText(/%/)).toBeNull();
  });

  it('says why an imported study has no counts over every key, and keeps the sampled table', () => {
    const report = makeReport({
      value_agreement_every_key: {
        ...makeEveryKey([]),
        applicable: false,
        reason: 'not_counted',
        variants: [],
        overall: null,
      },
    });
    render(
      <ValueAgreementSection
        everyKey={report.value_agreement_every_key}
        sampled={report.value_agreement}
        f={f}
      />,
    );
    expect(screen.getByTestId('value-every-key-na')).toHaveTextContent(
      'the mining pass did not count every key',
    );
    expect(screen.getByTestId('value-agreement-table')).toBeInTheDocument();
  });
});
