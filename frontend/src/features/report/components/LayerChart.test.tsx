import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { toCsv } from '../lib/composition';
import { LAYER_PLOT_HEIGHT, LayerChart, layerScale } from './LayerChart';
import type { LayerChartData } from './LayerChart';

const THIRTY = Array.from({ length: 30 }, (_, i) => i + 1);

function renderChart(data: LayerChartData, maxWidth?: number, layers = THIRTY) {
  render(
    <LayerChart
      layers={layers}
      data={data}
      title="A §5 figure of a study with a rather long name, per layer"
      axisTitle="Share"
      shortLayer={(layer) => `L${layer}`}
      longLayer={(layer) => `Layer ${layer}`}
      format={(value) => `${(value * 100).toFixed(1)}%`}
      maxWidth={maxWidth}
      testId="chart"
    />,
  );
  return screen.getByTestId('chart');
}

const points: LayerChartData = {
  kind: 'points',
  series: [
    {
      id: 'share',
      name: 'share of prefixes',
      color: '#0072b2',
      points: THIRTY.map((layer) => ({ value: layer / 100, low: 0, high: layer / 50 })),
    },
  ],
};

const stack: LayerChartData = {
  kind: 'stack',
  parts: [
    { id: 'residual', name: 'keeps the residual’s', color: '#0072b2' },
    { id: 'ffn', name: "changes it to the FFN's own", color: '#e69f00' },
    { id: 'neither', name: 'changes it to a third token (a composition)', color: '#cc79a7' },
  ],
  bars: THIRTY.map(() => ({ residual: 0.5, ffn: 0.2, neither: 0.3 })),
};

describe('a per-layer chart', () => {
  it('puts each point at its value on a round scale, its whisker at q1 and q3', () => {
    const svg = renderChart(points);
    const { top } = layerScale(points);
    expect(top).toBeCloseTo(0.6); // the highest q3, 0.6, rounded up
    const y = (value: number) => LAYER_PLOT_HEIGHT - (value / top) * LAYER_PLOT_HEIGHT;
    const group = svg.querySelector('g.point-group[data-layer="10"]')!;
    expect(Number(group.querySelector('circle')!.getAttribute('cy'))).toBeCloseTo(y(0.1), 6);
    expect(Number(group.querySelector('line.whisker')!.getAttribute('y2'))).toBeCloseTo(y(0.2), 6);
    expect(group.querySelector('circle title')).toHaveTextContent(
      'Layer 10 · share of prefixes: 10.0% [0.0%, 20.0%]',
    );
    expect(svg.querySelectorAll('g.point-group')).toHaveLength(30);
  });

  it('stacks the shares of a bar bottom up, filling the plot', () => {
    const svg = renderChart(stack);
    const segments = Array.from(svg.querySelectorAll('g.bar[data-layer="3"] rect.bar-segment'));
    expect(segments.map((s) => s.getAttribute('data-part'))).toEqual([
      'residual',
      'ffn',
      'neither',
    ]);
    let bottom = LAYER_PLOT_HEIGHT;
    for (const segment of segments) {
      const height = Number(segment.getAttribute('height'));
      expect(Number(segment.getAttribute('y')) + height).toBeCloseTo(bottom, 6);
      bottom -= height;
    }
    expect(bottom).toBeCloseTo(0, 6);
  });

  it('fits 30 layers in a phone-wide box, naming every other layer and wrapping the text', () => {
    const svg = renderChart(stack, 320);
    expect(svg).toHaveAttribute('data-narrow', 'true');
    expect(Number(svg.getAttribute('width'))).toBeLessThanOrEqual(320);
    const names = Array.from(svg.querySelectorAll('text.layer-name')).map((t) => t.textContent);
    expect(names.length).toBeLessThan(30);
    expect(names[0]).toBe('L1');
    // The title and the longest legend entry break into lines within the width.
    expect(svg.querySelectorAll('text.chart-title tspan').length).toBeGreaterThan(1);
    expect(svg.querySelectorAll('g.legend tspan').length).toBeGreaterThan(3);
  });

  it('keeps its own width where the box is wide enough', () => {
    const svg = renderChart(points, 1440);
    expect(svg).not.toHaveAttribute('data-narrow');
    expect(Number(svg.getAttribute('width'))).toBeLessThanOrEqual(1440);
    expect(svg.querySelectorAll('text.layer-name')).toHaveLength(30);
  });
});

describe('a signed axis', () => {
  const changes: LayerChartData = {
    kind: 'points',
    series: [
      {
        id: 'ablated',
        name: 'ablated',
        color: '#0072b2',
        points: [
          { value: -0.42, low: -0.53, high: -0.31 },
          { value: 0.02, low: -0.01, high: 0.05 },
        ],
      },
    ],
  };

  it('goes below 0 to a round value under the lowest interval, and above to one over the highest', () => {
    const { bottom, top, ticks } = layerScale(changes, 'signed');
    expect(bottom).toBeCloseTo(-0.6);
    expect(top).toBeCloseTo(0.2);
    expect(ticks).toEqual([-0.6, -0.4, -0.2, 0, 0.2]);
    // A share's scale is unchanged: from 0 up.
    expect(layerScale(points).bottom).toBe(0);
  });

  it('draws its base line at 0 and a negative point below it', () => {
    render(
      <LayerChart
        layers={[1, 2]}
        data={changes}
        title="Δ log p"
        axisTitle="Δ log p"
        axis="signed"
        shortLayer={(layer) => `L${layer}`}
        longLayer={(layer) => `Layer ${layer}`}
        format={(value) => value.toFixed(2)}
        testId="chart"
      />,
    );
    const svg = screen.getByTestId('chart');
    const zero = Number(svg.querySelector('line.zero-line')!.getAttribute('y1'));
    expect(zero).toBeCloseTo(LAYER_PLOT_HEIGHT * (0.2 / 0.8), 6);
    const first = svg.querySelector('g.point-group[data-layer="1"] circle')!;
    expect(Number(first.getAttribute('cy'))).toBeGreaterThan(zero);
    expect(Array.from(svg.querySelectorAll('g.tick text')).map((t) => t.textContent)).toEqual([
      '-0.6',
      '-0.4',
      '-0.2',
      '0.0',
      '0.2',
    ]);
  });
});

describe('CSV', () => {
  it('quotes what needs quoting and leaves a missing value empty', () => {
    expect(
      toCsv(
        ['layer', 'name'],
        [
          [1, 'a, "b"'],
          [2, null],
        ],
      ),
    ).toBe('layer,name\r\n1,"a, ""b"""\r\n2,\r\n');
  });
});
