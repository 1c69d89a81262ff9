import { textWidth, wrapText } from '../../../components/chart/text';

// Geometry, in SVG user units. The chart is self-contained (inline colours and fonts,
// a white background) so that the serialised file looks the same outside the page.
export const PLOT_HEIGHT = 240;
export const BAR_WIDTH = 40;
export const BAR_GAP = 18;
export const OVERALL_GAP = 18;
export const MARGIN = { top: 44, right: 190, bottom: 46, left: 56 };
export const TICKS = [0, 0.25, 0.5, 0.75, 1];

export const TITLE_SIZE = 15;
export const TITLE_LINE = 19;
export const NOTE_SIZE = 11;
export const NOTE_LINE = 16;
// A chart of a few bars spreads them over this width rather than shrinking, so that
// its title keeps a readable line length and nothing is left empty beside the plot.
export const MIN_PLOT_WIDTH = 360;
// Reflowed to fit a narrow screen: the narrowest slot that keeps a layer's name ("L30")
// under its bar, the right margin once the legend has moved under the plot, and the
// legend's rows.
export const MIN_SLOT = 30;
export const NARROW_RIGHT = 16;
export const LEGEND_ROW = 22;
export const LEGEND_SIZE = 12;
export const COUNT_SIZE = 9;

/** The horizontal room of one bar and the gap after it. */
function slotWidth(barCount: number): number {
  return Math.max(
    BAR_WIDTH + BAR_GAP,
    (MIN_PLOT_WIDTH - BAR_GAP - OVERALL_GAP) / Math.max(1, barCount),
  );
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
