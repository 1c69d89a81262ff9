import type { Ref } from 'react';

import type { ReportFigure2Row, ReportLabelValues } from '../../../api/types';
// The one palette of Figure 2: the server's PNG and SVG (reports/figures.py) read it too.
import { ChartSvg, ChartTitle, YAxis } from '../../../components/chart/frame';
import { MUTED, TEXT, textWidth } from '../../../components/chart/text';
import PALETTE from '../lib/figure2Palette.json';
import {
  COUNT_SIZE,
  figure2Layout,
  LEGEND_SIZE,
  MARGIN,
  NARROW_RIGHT,
  NOTE_LINE,
  NOTE_SIZE,
  PLOT_HEIGHT,
  TICKS,
  TITLE_LINE,
  TITLE_SIZE,
} from '../lib/figure2Layout';

/** The four labels, bottom to top in each bar, with the report's field names. */
export const LABELS = [
  { key: 'shallow', label: 'shallow', color: PALETTE['shallow'] },
  { key: 'semantic', label: 'semantic', color: PALETTE['semantic'] },
  { key: 'shallow_semantic', label: 'shallow+semantic', color: PALETTE['shallow+semantic'] },
  { key: 'not_covered', label: 'not-covered', color: PALETTE['not-covered'] },
] as const satisfies ReadonlyArray<{ key: keyof ReportLabelValues; label: string; color: string }>;

export type ChartLabel = (typeof LABELS)[number]['label'];

export interface ChartBar {
  /** Shown under the bar ("L3", "All"). */
  name: string;
  /** Spoken and shown on hover ("Layer 3"). */
  longName: string;
  row: ReportFigure2Row;
  overall?: boolean;
}

export interface Figure2ChartProps {
  bars: readonly ChartBar[];
  title: string;
  /** Translated names of the four labels, by label. */
  labelNames: Record<ChartLabel, string>;
  /** Axis title, e.g. "Share of prefixes". */
  axisTitle: string;
  /** What to show under an empty bar (no ratings). */
  emptyText: string;
  formatShare: (share: number) => string;
  /** A line under the plot, kept in the downloaded files (e.g. the layers left out). */
  note?: string;
  /** The room on screen, in px: a chart wider than this reflows to fit (see `figure2Layout`). */
  maxWidth?: number | null;
  svgRef?: Ref<SVGSVGElement>;
}

/** The stacked segments of one bar: [label, share, y, height] from the bottom up. */
export function stack(shares: ReportLabelValues) {
  let top = PLOT_HEIGHT;
  const segments = [];
  for (const { key, label, color } of LABELS) {
    const share = shares[key];
    if (share === null || share <= 0) continue;
    const height = share * PLOT_HEIGHT;
    top -= height;
    segments.push({ key, label, color, share, y: top, height });
  }
  return segments;
}

/**
 * Figure 2: per layer (and over all layers), the share of trigger prefixes with each
 * label, as a stacked bar. Hand-drawn SVG; every segment is a <rect class="bar-segment">
 * whose height is its share of the plot's height.
 */
export function Figure2Chart({
  bars,
  title,
  labelNames,
  axisTitle,
  emptyText,
  formatShare,
  note,
  maxWidth,
  svgRef,
}: Figure2ChartProps) {
  const legendLabels = [...LABELS].reverse();
  const layout = figure2Layout({
    barCount: bars.length,
    title,
    note,
    legend: legendLabels.map(({ label }) => labelNames[label]),
    overallAt: bars.findIndex((bar) => bar.overall),
    maxWidth,
  });
  const { width, height, barWidth, slot } = layout;
  return (
    <ChartSvg
      width={width}
      height={height}
      title={title}
      titleId="figure2-title"
      testId="figure2-chart"
      svgRef={svgRef}
      narrow={layout.narrow}
    >
      <ChartTitle
        lines={layout.titleLines}
        x={layout.titleLeft}
        y={24}
        size={TITLE_SIZE}
        lineHeight={TITLE_LINE}
      />
      {layout.rows.map((row, r) => (
        <g key={r} className="plot-row" transform={`translate(${MARGIN.left},${row.top})`}>
          <YAxis
            ticks={TICKS}
            y={(tick) => PLOT_HEIGHT - tick * PLOT_HEIGHT}
            tickText={(tick) => `${Math.round(tick * 100)}%`}
            plotWidth={row.right}
            plotHeight={PLOT_HEIGHT}
            title={axisTitle}
            titleOffset={42}
          />
          {row.bars.map(({ index, x }) => {
            const bar = bars[index]!;
            const segments = stack(bar.row.shares);
            const count = `n=${formatCount(bar.row.n)}`;
            return (
              <g
                key={bar.name}
                className="bar"
                data-testid="figure2-bar"
                data-layer={bar.row.layer ?? 'all'}
              >
                {segments.map((segment) => (
                  <rect
                    key={segment.key}
                    className="bar-segment"
                    data-label={segment.label}
                    data-share={segment.share}
                    x={x}
                    y={segment.y}
                    width={barWidth}
                    height={segment.height}
                    fill={segment.color}
                  >
                    <title>{`${bar.longName} · ${labelNames[segment.label]}: ${formatShare(segment.share)} (${count})`}</title>
                  </rect>
                ))}
                {segments.length === 0 && (
                  <text
                    x={x + barWidth / 2}
                    y={PLOT_HEIGHT - 6}
                    fontSize={10}
                    textAnchor="middle"
                    fill={MUTED}
                  >
                    {emptyText}
                  </text>
                )}
                <text
                  x={x + barWidth / 2}
                  y={PLOT_HEIGHT + 16}
                  fontSize={11}
                  textAnchor="middle"
                  fill={TEXT}
                  fontWeight={bar.overall ? 600 : 400}
                >
                  {bar.name}
                </text>
                {/* The count under the bar where it fits its slot (always in the tooltip). */}
                {textWidth(count, COUNT_SIZE) <= slot - 2 && (
                  <text
                    x={x + barWidth / 2}
                    y={PLOT_HEIGHT + 30}
                    fontSize={COUNT_SIZE}
                    textAnchor="middle"
                    fill={MUTED}
                  >
                    {count}
                  </text>
                )}
              </g>
            );
          })}
          <line
            x1={0}
            x2={row.right}
            y1={PLOT_HEIGHT}
            y2={PLOT_HEIGHT}
            stroke={TEXT}
            strokeWidth={1}
          />
        </g>
      ))}
      {layout.noteLines.length > 0 && (
        <text
          className="left-out"
          x={layout.narrow ? NARROW_RIGHT : MARGIN.left}
          y={layout.noteTop + NOTE_SIZE}
          fontSize={NOTE_SIZE}
          fill={MUTED}
        >
          {layout.noteLines.map((line, i) => (
            <tspan
              key={i}
              x={layout.narrow ? NARROW_RIGHT : MARGIN.left}
              dy={i === 0 ? 0 : NOTE_LINE}
            >
              {line}
            </tspan>
          ))}
        </text>
      )}
      <g className="legend" transform={`translate(${layout.legend.x},${layout.legend.y})`}>
        {legendLabels.map(({ label, color }, i) => {
          const at = layout.legend.items[i]!;
          return (
            <g key={label} transform={`translate(${at.x},${at.y})`}>
              <rect className="legend-swatch" width={14} height={14} fill={color} />
              <text x={20} y={11} fontSize={LEGEND_SIZE} fill={TEXT}>
                {labelNames[label]}
              </text>
            </g>
          );
        })}
      </g>
    </ChartSvg>
  );
}

function formatCount(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
