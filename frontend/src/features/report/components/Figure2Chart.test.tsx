import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import type { ReportFigure2Row } from '../../../api/types';
import { makeReport } from '../../../test/factories';
import { textWidth } from '../../../components/chart/text';
import { chartSize, PLOT_HEIGHT, wrapTitle } from '../lib/figure2Layout';
import { Figure2Chart, LABELS } from './Figure2Chart';
import type { ChartBar, ChartLabel } from './Figure2Chart';
import PALETTE from '../lib/figure2Palette.json';
import { safeFileName, serializeSvg } from '../lib/svgExport';

const labelNames = Object.fromEntries(LABELS.map(({ label }) => [label, label])) as Record<
  ChartLabel,
  string
>;

function barsOf(rows: ReportFigure2Row[], overall: ReportFigure2Row): ChartBar[] {
  return [
    ...rows.map((row) => ({ name: `L${row.layer}`, longName: `Layer ${row.layer}`, row })),
    { name: 'All', longName: 'All layers', row: overall, overall: true },
  ];
}

function renderChart(bars: ChartBar[]) {
  const result = render(
    <Figure2Chart
      bars={bars}
      title="Figure 2"
      labelNames={labelNames}
      axisTitle="Share"
      emptyText="no data"
      formatShare={(share) => `${(share * 100).toFixed(1)}%`}
    />,
  );
  const svg = result.container.querySelector('svg');
  if (!svg) throw new Error('no <svg>');
  return svg;
}

describe('Figure 2 chart', () => {
  it('draws one stacked bar per layer plus the overall bar, segment heights matching the shares', () => {
    const pooled = makeReport().figure2.pooled;
    const svg = renderChart(barsOf(pooled.layers, pooled.overall));
    const bars = svg.querySelectorAll('g.bar');
    expect(bars).toHaveLength(3);

    const expected = [...pooled.layers, pooled.overall];
    bars.forEach((bar, i) => {
      const row = expected[i]!;
      expect(bar.getAttribute('data-layer')).toBe(row.layer === null ? 'all' : String(row.layer));
      const segments = Array.from(bar.querySelectorAll('rect.bar-segment'));
      // Zero shares draw nothing (layer 2 has no shallow+semantic).
      const nonZero = LABELS.filter(({ key }) => (row.shares[key] ?? 0) > 0);
      expect(segments.map((s) => s.getAttribute('data-label'))).toEqual(
        nonZero.map((l) => l.label),
      );
      let bottom = PLOT_HEIGHT;
      for (const segment of segments) {
        const label = LABELS.find((l) => l.label === segment.getAttribute('data-label'))!;
        const height = Number(segment.getAttribute('height'));
        const y = Number(segment.getAttribute('y'));
        expect(height).toBeCloseTo((row.shares[label.key] ?? 0) * PLOT_HEIGHT, 6);
        // Stacked: each segment sits right on the one below.
        expect(y + height).toBeCloseTo(bottom, 6);
        bottom = y;
      }
      // The shares sum to 1: the stack fills the plot.
      expect(bottom).toBeCloseTo(0, 6);
    });
  });

  it('layer 1 of the example: 40% shallow is 40% of the plot height', () => {
    const pooled = makeReport().figure2.pooled;
    const svg = renderChart(barsOf(pooled.layers, pooled.overall));
    const shallow = svg.querySelector('g.bar[data-layer="1"] rect[data-label="shallow"]');
    expect(Number(shallow?.getAttribute('height'))).toBeCloseTo(0.4 * PLOT_HEIGHT, 6);
    const notCovered = svg.querySelector('g.bar[data-layer="2"] rect[data-label="not-covered"]');
    expect(Number(notCovered?.getAttribute('height'))).toBeCloseTo(0.4 * PLOT_HEIGHT, 6);
  });

  it("fills bars and legend with the shared palette (the server's PNG reads the same file)", () => {
    const pooled = makeReport().figure2.pooled;
    const svg = renderChart(barsOf(pooled.layers, pooled.overall));
    for (const segment of Array.from(svg.querySelectorAll('rect.bar-segment'))) {
      const label = segment.getAttribute('data-label') as keyof typeof PALETTE;
      expect(segment.getAttribute('fill')).toBe(PALETTE[label]);
    }
    const swatches = Array.from(svg.querySelectorAll('rect.legend-swatch')).map((s) =>
      s.getAttribute('fill'),
    );
    expect(new Set(swatches)).toEqual(new Set(Object.values(PALETTE)));
  });

  it('draws an empty bar (no segments) for a layer without ratings', () => {
    const empty: ReportFigure2Row = {
      layer: 3,
      n: 0,
      ties: 0,
      counts: { shallow: 0, semantic: 0, shallow_semantic: 0, not_covered: 0 },
      shares: { shallow: null, semantic: null, shallow_semantic: null, not_covered: null },
    };
    const pooled = makeReport().figure2.pooled;
    const svg = renderChart(barsOf([...pooled.layers, empty], pooled.overall));
    const bar = svg.querySelector('g.bar[data-layer="3"]');
    expect(bar?.querySelectorAll('rect.bar-segment')).toHaveLength(0);
    expect(bar).toHaveTextContent('no data');
  });
});

describe('chart size', () => {
  it('grows with the bars, not with the title: a long title wraps instead', () => {
    expect(chartSize(12).width).toBeGreaterThan(chartSize(8).width);
    // A few bars spread over a minimum width instead of leaving a narrow chart.
    expect(chartSize(3).width).toBe(chartSize(1).width);
    // The demo study's title, which used to stretch the chart and leave its right part empty.
    const long =
      'example: SmolLM2 demonstration labels (made by a rule, not by people): share of trigger prefixes per label (pooled over annotations)';
    expect(chartSize(9, long).width).toBe(chartSize(9).width);
    expect(chartSize(9, long).height).toBeGreaterThan(chartSize(9).height);
    for (const line of wrapTitle(long, chartSize(9).width)) {
      expect(textWidth(line, 15)).toBeLessThanOrEqual(chartSize(9).width);
    }
    // Chinese has no spaces: it wraps between characters.
    const chinese = wrapTitle('图'.repeat(120), chartSize(3).width);
    expect(chinese.length).toBeGreaterThan(1);
    expect(chinese.join('')).toBe('图'.repeat(120));
  });

  it('draws a wrapped title as lines of one <text>, all of it kept', () => {
    const title = `${'a long study name '.repeat(8)}(pooled over annotations)`;
    const pooled = makeReport().figure2.pooled;
    const { container } = render(
      <Figure2Chart
        bars={barsOf(pooled.layers, pooled.overall)}
        title={title}
        labelNames={labelNames}
        axisTitle="Share"
        emptyText="no data"
        formatShare={(share) => `${share}`}
      />,
    );
    const lines = Array.from(container.querySelectorAll('text.chart-title tspan')).map(
      (t) => t.textContent,
    );
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.join(' ')).toBe(title.trim());
  });
});

describe('SVG serialiser', () => {
  it('writes a standalone SVG document that parses, with the namespace and every bar', () => {
    const pooled = makeReport().figure2.pooled;
    const svg = renderChart(barsOf(pooled.layers, pooled.overall));
    const text = serializeSvg(svg);

    expect(text.startsWith('<?xml')).toBe(true);
    expect(text).toContain('xmlns="http://www.w3.org/2000/svg"');
    expect(text).not.toContain('data-testid');

    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    expect(doc.getElementsByTagName('parsererror')).toHaveLength(0);
    const root = doc.documentElement;
    expect(root.localName).toBe('svg');
    expect(root.namespaceURI).toBe('http://www.w3.org/2000/svg');
    expect(Number(root.getAttribute('width'))).toBeGreaterThan(0);
    expect(Number(root.getAttribute('height'))).toBeGreaterThan(0);

    const bars = Array.from(root.getElementsByTagName('g')).filter(
      (g) => g.getAttribute('class') === 'bar',
    );
    expect(bars).toHaveLength(3);
    const segments = Array.from(root.getElementsByTagName('rect')).filter(
      (r) => r.getAttribute('class') === 'bar-segment',
    );
    // 4 + 3 (layer 2 has no shallow+semantic) + 4
    expect(segments).toHaveLength(11);
    // The page's own copy is untouched.
    expect(svg.querySelector('[data-testid]')).not.toBeNull();
  });

  it('makes safe file names', () => {
    expect(safeFileName('hand study / v2')).toBe('hand-study-v2');
    expect(safeFileName('  ')).toBe('study');
    expect(safeFileName('研究 1')).toBe('研究-1');
  });
});

describe('on a narrow screen', () => {
  function barsOfLayers(count: number): ChartBar[] {
    const row = makeReport().figure2.pooled.layers[0]!;
    return barsOf(
      Array.from({ length: count }, (_, i) => ({ ...row, layer: i + 1 })),
      makeReport().figure2.pooled.overall,
    );
  }

  function renderNarrow(bars: ChartBar[], maxWidth: number, title = 'Figure 2') {
    const { container } = render(
      <Figure2Chart
        bars={bars}
        title={title}
        labelNames={labelNames}
        axisTitle="Share"
        emptyText="no data"
        formatShare={(share) => `${share}`}
        note="Layers without ratings (not drawn): 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29"
        maxWidth={maxWidth}
      />,
    );
    return container.querySelector('svg')!;
  }

  it('fits the width it is given, legend under the plot, title and note wrapped', () => {
    const title = 'SmolLM2-135M-Instruct on wiki-vital: share of trigger prefixes per label';
    const svg = renderNarrow(barsOfLayers(4), 358, title);
    expect(Number(svg.getAttribute('width'))).toBe(358);
    expect(svg.getAttribute('viewBox')).toBe(`0 0 358 ${svg.getAttribute('height')}`);
    // Every bar is inside the chart, the legend below the plot (not to its right).
    const bars = Array.from(svg.querySelectorAll('rect.bar-segment'));
    const plot = svg.querySelector('g.plot-row')!.getAttribute('transform')!;
    const [left, top] = plot.match(/[\d.]+/g)!.map(Number) as [number, number];
    for (const bar of bars) {
      const right = left + Number(bar.getAttribute('x')) + Number(bar.getAttribute('width'));
      expect(right).toBeLessThanOrEqual(358);
    }
    const legend = svg.querySelector('g.legend')!.getAttribute('transform')!;
    const [legendX, legendY] = legend.match(/[\d.]+/g)!.map(Number) as [number, number];
    expect(legendY).toBeGreaterThanOrEqual(top + PLOT_HEIGHT);
    expect(legendX).toBeLessThan(358 / 2);
    const titleLines = Array.from(svg.querySelectorAll('text.chart-title tspan'));
    expect(titleLines.length).toBeGreaterThan(1);
    expect(titleLines.map((line) => line.textContent).join(' ')).toBe(title);
    const titleX = Number(svg.querySelector('text.chart-title')!.getAttribute('x'));
    for (const line of titleLines) {
      expect(titleX + textWidth(line.textContent ?? '', 15)).toBeLessThanOrEqual(358);
    }
    const noteLines = Array.from(svg.querySelectorAll('text.left-out tspan'));
    expect(noteLines.length).toBeGreaterThan(1);
    for (const line of noteLines) {
      expect(textWidth(line.textContent ?? '', 11)).toBeLessThanOrEqual(358);
    }
  });

  it('puts bars that do not fit side by side into further rows, each inside the width', () => {
    const svg = renderNarrow(barsOfLayers(30), 358);
    expect(Number(svg.getAttribute('width'))).toBe(358);
    const rows = Array.from(svg.querySelectorAll('g.plot-row'));
    expect(rows.length).toBeGreaterThan(1);
    expect(svg.querySelectorAll('g.bar')).toHaveLength(31);
    for (const row of rows) {
      const left = Number(row.getAttribute('transform')!.match(/[\d.]+/)![0]);
      for (const bar of Array.from(row.querySelectorAll('rect.bar-segment'))) {
        const right = left + Number(bar.getAttribute('x')) + Number(bar.getAttribute('width'));
        expect(right).toBeLessThanOrEqual(358);
      }
    }
    // A segment's height is still its share of the plot.
    const shallow = svg.querySelector('g.bar[data-layer="1"] rect[data-label="shallow"]');
    expect(Number(shallow?.getAttribute('height'))).toBeCloseTo(0.4 * PLOT_HEIGHT, 6);
  });

  it('keeps its own layout where it fits', () => {
    const svg = renderNarrow(barsOfLayers(2), 2000);
    expect(Number(svg.getAttribute('width'))).toBe(chartSize(3).width);
    expect(svg.querySelectorAll('g.plot-row')).toHaveLength(1);
  });
});
