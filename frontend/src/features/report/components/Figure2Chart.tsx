import type { Ref } from 'react';

import type { ReportFigure2Row, ReportLabelValues } from '../../../api/types';
// The one palette of Figure 2: the server's PNG and SVG (reports/figures.py) read it too.
import PALETTE from '../../../pages/manage/report/figure2Palette.json';

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
  /** The room on screen, in px: a chart wider than this reflows to fit (see `figure2Layout`). */
  maxWidth?: number | null;
  svgRef?: Ref<SVGSVGElement>;
}

const TITLE_SIZE = 15;
const TITLE_LINE = 19;
const NOTE_SIZE = 11;
const NOTE_LINE = 16;
// A chart of a few bars spreads them over this width rather than shrinking, so that
// its title keeps a readable line length and nothing is left empty beside the plot.
const MIN_PLOT_WIDTH = 360;
// Reflowed to fit a narrow screen: the narrowest slot that keeps a layer's name ("L30")
// under its bar, the right margin once the legend has moved under the plot, and the
// legend's rows.
const MIN_SLOT = 30;
const NARROW_RIGHT = 16;
const LEGEND_ROW = 22;
const LEGEND_SIZE = 12;
const COUNT_SIZE = 9;

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
 * A text in lines of at most `room` units at `fontSize`. Breaks between words, and
 * between any two wide (CJK) characters, which have no spaces between them.
 */
export function wrapText(text: string, room: number, fontSize: number): string[] {
  const pieces = text.trim().match(/[\u2e80-\u{10ffff}]|[^\s\u2e80-\u{10ffff}]+|\s+/gu) ?? [];
  const lines: string[] = [];
  let line = '';
  for (const piece of pieces) {
    const next = line + piece;
    if (line.trim() && textWidth(next.trimEnd(), fontSize) > room && piece.trim()) {
      lines.push(line.trimEnd());
      line = piece;
    } else {
      line = next;
    }
  }
  if (line.trim()) lines.push(line.trim());
  return lines.map((each) => each.trimStart());
}

/** The title in lines that fit a chart `width` wide. */
export function wrapTitle(title: string, width: number): string[] {
  return wrapText(title, width - MARGIN.left - 16, TITLE_SIZE);
}

/** The chart's size at its own width, legend beside the plot (a long title wraps). */
export function chartSize(
  barCount: number,
  title = '',
  note = '',
): { width: number; height: number } {
  const { width, height } = figure2Layout({ barCount, title, note, legend: [] });
  return { width, height };
}

/** Where everything of the chart goes. */
export interface Figure2Layout {
  width: number;
  height: number;
  /** Reflowed to a narrow width: legend under the plot, bars narrower or in rows. */
  narrow: boolean;
  titleLeft: number;
  titleLines: string[];
  slot: number;
  barWidth: number;
  /** Rows of bars (one, unless the bars do not fit side by side): each row's top (the
   * plot's top edge), its right end, and its bars' indices and left edges. */
  rows: { top: number; right: number; bars: { index: number; x: number }[] }[];
  legend: { x: number; y: number; items: { x: number; y: number }[] };
  noteLines: string[];
  noteTop: number;
}

/**
 * Figure 2's geometry. At its own width (no `maxWidth`, or one it fits in) the bars stand
 * side by side with the legend to their right. On a narrower screen the chart is exactly
 * `maxWidth` wide: the legend moves under the plot and flows in rows, the bars narrow
 * down to `MIN_SLOT`, and where even that does not fit they continue in further rows,
 * each with its own axis. Title and note wrap to the width.
 */
export function figure2Layout({
  barCount,
  title,
  note = '',
  legend,
  overallAt = barCount - 1,
  maxWidth,
}: {
  barCount: number;
  title: string;
  note?: string;
  /** The legend's texts, top to bottom. */
  legend: readonly string[];
  /** The index of the overall bar (a wider gap before it); -1 for none. */
  overallAt?: number;
  maxWidth?: number | null;
}): Figure2Layout {
  const slot = slotWidth(barCount);
  const natural = Math.ceil(MARGIN.left + barCount * slot + BAR_GAP + OVERALL_GAP + MARGIN.right);
  const narrow = maxWidth != null && maxWidth > 0 && natural > maxWidth;
  // Past 240 units the chart scales down with the screen instead (styles: max-width).
  const width = narrow ? Math.max(240, Math.floor(maxWidth)) : natural;
  // Narrow, the title takes the whole width rather than starting above the plot.
  const titleLines = narrow
    ? wrapText(title, width - 2 * NARROW_RIGHT, TITLE_SIZE)
    : wrapTitle(title, width);
  const top = MARGIN.top + Math.max(0, titleLines.length - 1) * TITLE_LINE;
  const noteRoom = width - MARGIN.left - 16;

  if (!narrow) {
    let x = BAR_GAP;
    const bars = Array.from({ length: barCount }, (_, index) => {
      if (index === overallAt) x += OVERALL_GAP;
      // Centred in its slot (a wider slot than the bar when there are few bars).
      const at = x + (slot - BAR_WIDTH - BAR_GAP) / 2;
      x += slot;
      return { index, x: at };
    });
    const noteLines = note ? wrapText(note, noteRoom, NOTE_SIZE) : [];
    const noteTop = top + PLOT_HEIGHT + MARGIN.bottom;
    return {
      width,
      height: noteTop + noteLines.length * NOTE_LINE + (noteLines.length ? 2 : 0),
      narrow,
      titleLeft: MARGIN.left,
      titleLines,
      slot,
      barWidth: BAR_WIDTH,
      rows: [{ top, right: x, bars }],
      legend: {
        x: MARGIN.left + x + 20,
        y: top,
        items: legend.map((_, i) => ({ x: 0, y: i * LEGEND_ROW })),
      },
      noteLines,
      noteTop,
    };
  }

  const room = width - MARGIN.left - NARROW_RIGHT - BAR_GAP - OVERALL_GAP;
  const perRow = Math.max(1, Math.floor(room / MIN_SLOT));
  const rowCount = Math.ceil(barCount / perRow);
  const narrowSlot = Math.min(BAR_WIDTH + BAR_GAP, room / Math.min(perRow, barCount));
  const barWidth = Math.min(BAR_WIDTH, Math.round(narrowSlot * 0.7));
  const rows = Array.from({ length: rowCount }, (_, r) => {
    let x = BAR_GAP;
    const bars = [];
    for (let index = r * perRow; index < Math.min(barCount, (r + 1) * perRow); index += 1) {
      if (index === overallAt && index > r * perRow) x += OVERALL_GAP;
      bars.push({ index, x: x + (narrowSlot - barWidth) / 2 });
      x += narrowSlot;
    }
    return { top: top + r * (PLOT_HEIGHT + MARGIN.bottom), right: x, bars };
  });
  // The legend flows left to right under the last row, as many entries a line as fit.
  const legendTop = top + rowCount * (PLOT_HEIGHT + MARGIN.bottom);
  const legendLeft = NARROW_RIGHT;
  let lx = 0;
  let ly = 0;
  const items = legend.map((text) => {
    const itemWidth = 20 + textWidth(text, LEGEND_SIZE) + 14;
    if (lx > 0 && legendLeft + lx + itemWidth > width - NARROW_RIGHT) {
      lx = 0;
      ly += LEGEND_ROW;
    }
    const item = { x: lx, y: ly };
    lx += itemWidth;
    return item;
  });
  const legendHeight = legend.length ? ly + LEGEND_ROW : 0;
  const noteLines = note ? wrapText(note, width - 2 * NARROW_RIGHT, NOTE_SIZE) : [];
  const noteTop = legendTop + legendHeight + 4;
  return {
    width,
    height: noteTop + noteLines.length * NOTE_LINE + 4,
    narrow,
    titleLeft: NARROW_RIGHT,
    titleLines,
    slot: narrowSlot,
    barWidth,
    rows,
    legend: { x: legendLeft, y: legendTop, items },
    noteLines,
    noteTop,
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
      data-narrow={layout.narrow ? 'true' : undefined}
    >
      <title id="figure2-title">{title}</title>
      <rect className="background" x={0} y={0} width={width} height={height} fill="#ffffff" />
      <text
        className="chart-title"
        x={layout.titleLeft}
        y={24}
        fontSize={TITLE_SIZE}
        fontWeight={600}
        fill={TEXT}
      >
        {layout.titleLines.map((line, i) => (
          <tspan key={i} x={layout.titleLeft} dy={i === 0 ? 0 : TITLE_LINE}>
            {line}
          </tspan>
        ))}
      </text>
      {layout.rows.map((row, r) => (
        <g key={r} className="plot-row" transform={`translate(${MARGIN.left},${row.top})`}>
          {TICKS.map((tick) => {
            const y = PLOT_HEIGHT - tick * PLOT_HEIGHT;
            return (
              <g key={tick} className="tick">
                <line x1={0} x2={row.right} y1={y} y2={y} stroke={GRID} strokeWidth={1} />
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
    </svg>
  );
}

function formatCount(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
