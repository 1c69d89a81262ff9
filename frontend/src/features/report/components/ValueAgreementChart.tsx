import type {
  ReportRate,
  ReportValueAgreementEveryKeyRow,
  ValueAgreementVariant,
} from '../../../api/types';
import { ChartSvg, ChartTitle, YAxis } from '../../../components/chart/frame';
import { TEXT, textWidth, wrapText } from '../../../components/chart/text';

export const READINGS = ['next_token', 'trigger_token'] as const;
export type Reading = (typeof READINGS)[number];

/** One line of the chart: a reading under a variant. */
export interface ValueSeries {
  reading: Reading;
  variant: ValueAgreementVariant;
  /** Shown in the legend and on hover. */
  name: string;
}

// The palette of Figure 2 (reading by colour); the variant is the line's dash and the
// point's fill, so that the four lines stay apart in grey print too.
const READING_COLOR: Record<Reading, string> = { next_token: '#3d6fb6', trigger_token: '#e07b28' };
const DASHED: Record<ValueAgreementVariant, boolean> = {
  without_final_norm: true,
  with_final_norm: false,
};

export const VALUE_PLOT_HEIGHT = 220;
// 30 layers at 30 units each keep every layer's label and its four whiskers apart. On a
// narrower screen the slots narrow down to MIN_SLOT (the points shrink, and only every
// 2nd, 5th or 10th layer is named) so that the chart fits the width.
const SLOT = 30;
const MIN_SLOT = 8;
const DODGE = 5;
const LAYER_LABEL_ROOM = 24;
// The legend sits under the layer labels, so that 30 layers fit a 1024 px screen
// without scrolling sideways to read it.
const MARGIN = { top: 44, right: 16, bottom: 40, left: 64 };
const LEGEND_ROW = 22;
const BASELINE = '#8a8f98';
const TITLE_SIZE = 15;
const TITLE_LINE = 19;

/** The smallest 1, 2 or 5 × 10^k at least ``x`` (x > 0). */
export function niceStep(x: number): number {
  const power = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 5, 10]) if (m * power >= x * (1 - 1e-9)) return m * power;
  return 10 * power;
}

/** The y axis: from 0 to ``top`` (≥ every interval's high end and the baseline), in
 * about four steps. Rates near 0 (the paper's 0%-3.5%) get a scale of their own. */
export function valueScale(highest: number): { top: number; ticks: number[]; decimals: number } {
  const step = niceStep(highest > 0 ? Math.min(highest, 1) / 4 : 0.0025);
  const top = Math.min(1, Math.max(step, Math.ceil((highest * (1 - 1e-9)) / step) * step));
  const ticks: number[] = [];
  for (let i = 0; i * step <= top * (1 + 1e-9); i += 1) ticks.push(i * step);
  return { top, ticks, decimals: Math.max(0, -Math.floor(Math.log10(step * 100))) };
}

export function rateOf(
  row: ReportValueAgreementEveryKeyRow,
  series: ValueSeries,
): ReportRate | undefined {
  return row[series.reading][series.variant];
}

export interface ValueAgreementChartProps {
  rows: readonly ReportValueAgreementEveryKeyRow[];
  series: readonly ValueSeries[];
  /** 1/|V|, drawn as a dashed line; null when |V| is unknown. */
  baseline: number | null;
  title: string;
  axisTitle: string;
  baselineLabel: string;
  /** "L3" under the axis, "Layer 3" on hover. */
  shortLayer: (layer: number) => string;
  longLayer: (layer: number) => string;
  /** "0.33% [0.10%, 0.71%] (5/1,533)" on hover. */
  describe: (rate: ReportRate) => string;
  /** The room on screen, in px: the layers' slots narrow to fit it (down to MIN_SLOT). */
  maxWidth?: number | null;
}

/** Name every `step`-th layer (1, 2, 5 or 10) so that the names keep apart at `slot`. */
function labelStep(slot: number): number {
  return [1, 2, 5, 10].find((step) => step * slot >= LAYER_LABEL_ROOM) ?? 10;
}

/**
 * §4 over every key: per layer, the rate of each reading × variant as a point on a line,
 * its Wilson 95% interval as a whisker, and the random baseline 1/|V| as a dashed line.
 * Hand-drawn, self-contained SVG like Figure 2.
 */
export function ValueAgreementChart({
  rows,
  series,
  baseline,
  title,
  axisTitle,
  baselineLabel,
  shortLayer,
  longLayer,
  describe,
  maxWidth,
}: ValueAgreementChartProps) {
  const highs = rows.flatMap((row) => series.map((s) => rateOf(row, s)?.high ?? 0));
  const { top, ticks, decimals } = valueScale(Math.max(0, baseline ?? 0, ...highs));
  const n = Math.max(rows.length, 1);
  const legendWidth =
    Math.max(...series.map((s) => textWidth(s.name, 12)), textWidth(baselineLabel, 12)) + 30;
  const natural = Math.ceil(
    Math.max(
      MARGIN.left + n * SLOT + MARGIN.right,
      MARGIN.left + legendWidth + MARGIN.right,
      MARGIN.left + textWidth(title, TITLE_SIZE) + 16,
    ),
  );
  const narrow = maxWidth != null && maxWidth > 0 && natural > maxWidth;
  // Past MIN_SLOT a layer the chart scales down with the screen instead (styles).
  const width = narrow
    ? Math.ceil(
        Math.max(
          Math.floor(maxWidth),
          MARGIN.left + n * MIN_SLOT + MARGIN.right,
          16 + legendWidth + MARGIN.right,
        ),
      )
    : natural;
  const slot = narrow
    ? Math.max(MIN_SLOT, Math.min(SLOT, (width - MARGIN.left - MARGIN.right) / n))
    : SLOT;
  const dodge = (DODGE * slot) / SLOT;
  const radius = slot < SLOT / 2 ? 2 : 3;
  const step = labelStep(slot);
  const plotWidth = n * slot;
  const titleLeft = narrow ? 16 : MARGIN.left;
  const titleLines = narrow ? wrapText(title, width - 32, TITLE_SIZE) : [title];
  const plotTop = MARGIN.top + (titleLines.length - 1) * TITLE_LINE;
  const legendLeft = narrow ? 16 : MARGIN.left;
  const legendRows = series.length + (baseline !== null ? 1 : 0);
  const legendTop = plotTop + VALUE_PLOT_HEIGHT + MARGIN.bottom;
  const height = legendTop + legendRows * LEGEND_ROW + 8;
  const y = (value: number) => VALUE_PLOT_HEIGHT - (value / top) * VALUE_PLOT_HEIGHT;
  const x = (i: number, s: number) => i * slot + slot / 2 + (s - (series.length - 1) / 2) * dodge;

  return (
    <ChartSvg
      width={width}
      height={height}
      title={title}
      titleId="value-agreement-title"
      testId="value-agreement-chart"
    >
      <ChartTitle
        lines={titleLines}
        x={titleLeft}
        y={24}
        size={TITLE_SIZE}
        lineHeight={TITLE_LINE}
      />
      <g transform={`translate(${MARGIN.left},${plotTop})`}>
        <YAxis
          ticks={ticks}
          y={y}
          tickText={(tick) => `${(tick * 100).toFixed(decimals)}%`}
          plotWidth={plotWidth}
          plotHeight={VALUE_PLOT_HEIGHT}
          title={axisTitle}
          titleOffset={50}
        />
        {baseline !== null && (
          <line
            className="baseline"
            data-baseline={baseline}
            x1={0}
            x2={plotWidth}
            y1={y(baseline)}
            y2={y(baseline)}
            stroke={BASELINE}
            strokeWidth={1.5}
            strokeDasharray="2 3"
          >
            <title>{baselineLabel}</title>
          </line>
        )}
        {rows.map((row, i) =>
          i % step === 0 ? (
            <text
              key={row.layer ?? 'all'}
              className="layer-name"
              x={i * slot + slot / 2}
              y={VALUE_PLOT_HEIGHT + 16}
              fontSize={11}
              textAnchor="middle"
              fill={TEXT}
            >
              {shortLayer(row.layer ?? 0)}
            </text>
          ) : null,
        )}
        {series.map((s, si) => {
          const color = READING_COLOR[s.reading];
          // A layer without a rate (no key with a known next token) breaks the line.
          let path = '';
          let pen = false;
          rows.forEach((row, i) => {
            const value = rateOf(row, s)?.rate;
            if (value === null || value === undefined) {
              pen = false;
              return;
            }
            path += `${pen ? 'L' : 'M'}${x(i, si)},${y(value)}`;
            pen = true;
          });
          return (
            <g
              key={`${s.reading}/${s.variant}`}
              className="series"
              data-reading={s.reading}
              data-variant={s.variant}
            >
              <path
                d={path}
                fill="none"
                stroke={color}
                strokeWidth={1.5}
                strokeDasharray={DASHED[s.variant] ? '5 3' : undefined}
              />
              {rows.map((row, i) => {
                const r = rateOf(row, s);
                if (!r || r.rate === null || r.low === null || r.high === null) return null;
                const cx = x(i, si);
                const label = `${longLayer(row.layer ?? 0)} · ${s.name}: ${describe(r)}`;
                return (
                  <g
                    key={row.layer ?? 'all'}
                    className="point-group"
                    data-layer={row.layer ?? 'all'}
                  >
                    <line
                      className="whisker"
                      data-low={r.low}
                      data-high={r.high}
                      x1={cx}
                      x2={cx}
                      y1={y(r.low)}
                      y2={y(r.high)}
                      stroke={color}
                      strokeWidth={1}
                    />
                    <line
                      x1={cx - radius + 1}
                      x2={cx + radius - 1}
                      y1={y(r.high)}
                      y2={y(r.high)}
                      stroke={color}
                      strokeWidth={1}
                    />
                    <circle
                      className="point"
                      data-rate={r.rate}
                      cx={cx}
                      cy={y(r.rate)}
                      r={radius}
                      fill={DASHED[s.variant] ? '#ffffff' : color}
                      stroke={color}
                      strokeWidth={1.5}
                    >
                      <title>{label}</title>
                    </circle>
                  </g>
                );
              })}
            </g>
          );
        })}
        <line
          x1={0}
          x2={plotWidth}
          y1={VALUE_PLOT_HEIGHT}
          y2={VALUE_PLOT_HEIGHT}
          stroke={TEXT}
          strokeWidth={1}
        />
      </g>
      <g className="legend" transform={`translate(${legendLeft},${legendTop})`}>
        {series.map((s, i) => (
          <g key={`${s.reading}/${s.variant}`} transform={`translate(0,${i * LEGEND_ROW})`}>
            <line
              x1={0}
              x2={22}
              y1={7}
              y2={7}
              stroke={READING_COLOR[s.reading]}
              strokeWidth={1.5}
              strokeDasharray={DASHED[s.variant] ? '5 3' : undefined}
            />
            <circle
              cx={11}
              cy={7}
              r={3}
              fill={DASHED[s.variant] ? '#ffffff' : READING_COLOR[s.reading]}
              stroke={READING_COLOR[s.reading]}
              strokeWidth={1.5}
            />
            <text x={30} y={11} fontSize={12} fill={TEXT}>
              {s.name}
            </text>
          </g>
        ))}
        {baseline !== null && (
          <g transform={`translate(0,${series.length * LEGEND_ROW})`}>
            <line
              x1={0}
              x2={22}
              y1={7}
              y2={7}
              stroke={BASELINE}
              strokeWidth={1.5}
              strokeDasharray="2 3"
            />
            <text x={30} y={11} fontSize={12} fill={TEXT}>
              {baselineLabel}
            </text>
          </g>
        )}
      </g>
    </ChartSvg>
  );
}
