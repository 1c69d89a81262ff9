import type { Ref } from 'react';

import type { ReportFigure2Row, ReportLabelValues } from '../../../api/types';
// The one palette of Figure 2: the server's PNG and SVG (reports/figures.py) read it too.
import PALETTE from './figure2Palette.json';

/** The four labels, bottom to top in each bar, with the report's field names. */
export const LABELS = [
  { key: 'shallow', label: 'shallow', color: PALETTE['shallow'] },
  { key: 'semantic', label: 'semantic', color: PALETTE['semantic'] },
  { key: 'shallow_semantic', label: 'shallow+semantic', color: PALETTE['shallow+semantic'] },
  { key: 'not_covered', label: 'not-covered', color: PALETTE['not-covered'] },
] as const satisfies ReadonlyArray<{ key: keyof ReportLabelValues; label: string; color: string }>;

export type ChartLabel = (typeof LABELS)[number]['label'];

// Geometry, in SVG user units. The chart is self-contained (inline colours and fonts,
// a white background) so that the serialised file looks the same outside the page.
export const PLOT_HEIGHT = 240;
const BAR_WIDTH = 40;
const BAR_GAP = 18;
const OVERALL_GAP = 18;
const MARGIN = { top: 44, right: 190, bottom: 46, left: 56 };
const TEXT = '#1b1d21';
const MUTED = '#5a606b';
const GRID = '#d6d9de';
const FONT =
  "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Noto Sans CJK SC', sans-serif";
const TICKS = [0, 0.25, 0.5, 0.75, 1];

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
  svgRef?: Ref<SVGSVGElement>;
}

const TITLE_SIZE = 15;
const TITLE_LINE = 19;
const NOTE_LINE = 18;
// A chart of a few bars spreads them over this width rather than shrinking, so that
// its title keeps a readable line length and nothing is left empty beside the plot.
const MIN_PLOT_WIDTH = 360;

/** The horizontal room of one bar and the gap after it. */
function slotWidth(barCount: number): number {
  return Math.max(
    BAR_WIDTH + BAR_GAP,
    (MIN_PLOT_WIDTH - BAR_GAP - OVERALL_GAP) / Math.max(1, barCount),
  );
}

/** A generous guess of a text's width: wide (CJK) characters count a full em. */
export function textWidth(text: string, fontSize: number): number {
  let ems = 0;
  for (const char of text) ems += (char.codePointAt(0) ?? 0) >= 0x2e80 ? 1 : 0.62;
  return ems * fontSize;
}

/**
 * The title in lines that fit a chart `width` wide. Breaks between words, and between
 * any two wide (CJK) characters, which have no spaces between them.
 */
export function wrapTitle(title: string, width: number): string[] {
  const room = width - MARGIN.left - 16;
  const pieces = title.trim().match(/[\u2e80-\u{10ffff}]|[^\s\u2e80-\u{10ffff}]+|\s+/gu) ?? [];
  const lines: string[] = [];
  let line = '';
  for (const piece of pieces) {
    const next = line + piece;
    if (line.trim() && textWidth(next.trimEnd(), TITLE_SIZE) > room && piece.trim()) {
      lines.push(line.trimEnd());
      line = piece;
    } else {
      line = next;
    }
  }
  if (line.trim()) lines.push(line.trim());
  return lines.map((each) => each.trimStart());
}

/** The chart's size: its width from the bars and legend only (a long title wraps). */
export function chartSize(
  barCount: number,
  title = '',
  note = '',
): { width: number; height: number } {
  const plotWidth = barCount * slotWidth(barCount) + BAR_GAP + OVERALL_GAP;
  const width = Math.ceil(MARGIN.left + plotWidth + MARGIN.right);
  const extraLines = Math.max(0, wrapTitle(title, width).length - 1);
  const noteHeight = note ? NOTE_LINE : 0;
  return {
    width,
    height: MARGIN.top + extraLines * TITLE_LINE + PLOT_HEIGHT + MARGIN.bottom + noteHeight,
  };
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
  svgRef,
}: Figure2ChartProps) {
  const { width, height } = chartSize(bars.length, title, note);
  const titleLines = wrapTitle(title, width);
  const top = MARGIN.top + Math.max(0, titleLines.length - 1) * TITLE_LINE;
  const slot = slotWidth(bars.length);
  let x = BAR_GAP;
  const placed = bars.map((bar) => {
    if (bar.overall) x += OVERALL_GAP;
    // Centred in its slot (a wider slot than the bar when there are few bars).
    const at = x + (slot - BAR_WIDTH - BAR_GAP) / 2;
    x += slot;
    return { ...bar, x: at };
  });
  const plotRight = x;
  return (
    <svg
      ref={svgRef}
      xmlns="http://www.w3.org/2000/svg"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-labelledby="figure2-title"
      fontFamily={FONT}
      data-testid="figure2-chart"
    >
      <title id="figure2-title">{title}</title>
      <rect className="background" x={0} y={0} width={width} height={height} fill="#ffffff" />
      <text
        className="chart-title"
        x={MARGIN.left}
        y={24}
        fontSize={TITLE_SIZE}
        fontWeight={600}
        fill={TEXT}
      >
        {titleLines.map((line, i) => (
          <tspan key={i} x={MARGIN.left} dy={i === 0 ? 0 : TITLE_LINE}>
            {line}
          </tspan>
        ))}
      </text>
      <g transform={`translate(${MARGIN.left},${top})`}>
        {TICKS.map((tick) => {
          const y = PLOT_HEIGHT - tick * PLOT_HEIGHT;
          return (
            <g key={tick} className="tick">
              <line x1={0} x2={plotRight} y1={y} y2={y} stroke={GRID} strokeWidth={1} />
              <text x={-8} y={y + 4} fontSize={11} textAnchor="end" fill={MUTED}>
                {`${Math.round(tick * 100)}%`}
              </text>
            </g>
          );
        })}
        <text
          transform={`translate(-42,${PLOT_HEIGHT / 2}) rotate(-90)`}
          fontSize={11}
          textAnchor="middle"
          fill={MUTED}
        >
          {axisTitle}
        </text>
        {placed.map((bar) => {
          const segments = stack(bar.row.shares);
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
                  x={bar.x}
                  y={segment.y}
                  width={BAR_WIDTH}
                  height={segment.height}
                  fill={segment.color}
                >
                  <title>{`${bar.longName} · ${labelNames[segment.label]}: ${formatShare(segment.share)}`}</title>
                </rect>
              ))}
              {segments.length === 0 && (
                <text
                  x={bar.x + BAR_WIDTH / 2}
                  y={PLOT_HEIGHT - 6}
                  fontSize={10}
                  textAnchor="middle"
                  fill={MUTED}
                >
                  {emptyText}
                </text>
              )}
              <text
                x={bar.x + BAR_WIDTH / 2}
                y={PLOT_HEIGHT + 16}
                fontSize={11}
                textAnchor="middle"
                fill={TEXT}
                fontWeight={bar.overall ? 600 : 400}
              >
                {bar.name}
              </text>
              <text
                x={bar.x + BAR_WIDTH / 2}
                y={PLOT_HEIGHT + 30}
                fontSize={9}
                textAnchor="middle"
                fill={MUTED}
              >
                {`n=${formatCount(bar.row.n)}`}
              </text>
            </g>
          );
        })}
        <line
          x1={0}
          x2={plotRight}
          y1={PLOT_HEIGHT}
          y2={PLOT_HEIGHT}
          stroke={TEXT}
          strokeWidth={1}
        />
      </g>
      {note && (
        <text className="left-out" x={MARGIN.left} y={height - 8} fontSize={11} fill={MUTED}>
          {note}
        </text>
      )}
      <g className="legend" transform={`translate(${MARGIN.left + plotRight + 20},${top})`}>
        {[...LABELS].reverse().map(({ label, color }, i) => (
          <g key={label} transform={`translate(0,${i * 22})`}>
            <rect className="legend-swatch" width={14} height={14} fill={color} />
            <text x={20} y={11} fontSize={12} fill={TEXT}>
              {labelNames[label]}
            </text>
          </g>
        ))}
      </g>
    </svg>
  );
}

function formatCount(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
