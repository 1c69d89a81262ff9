import { useId } from 'react';
import type { Ref } from 'react';

import {
  ChartSvg,
  ChartTitle,
  LegendText,
  stackRows,
  YAxis,
} from '../../../components/chart/frame';
import { TEXT, wrapText } from '../../../components/chart/text';
import { niceStep, valueScale } from './ValueAgreementChart';

/** A value at one layer, with its range (q1–q3) where it has one. */
export interface ChartPoint {
  value: number | null;
  low?: number | null;
  high?: number | null;
}

/** One line of points: `points[i]` is at `layers[i]` (null: no value there). */
export interface PointSeries {
  id: string;
  /** Shown in the legend and on hover. */
  name: string;
  color: string;
  /** A dashed line and hollow points, so that two lines stay apart in grey print too. */
  dashed?: boolean;
  points: readonly (ChartPoint | null)[];
}

/** One part of a stacked bar, bottom up. */
export interface StackPart {
  id: string;
  name: string;
  color: string;
}

export type LayerChartData =
  | { kind: 'points'; series: readonly PointSeries[] }
  | {
      kind: 'stack';
      parts: readonly StackPart[];
      /** Per layer, each part's share (summing to 1); null: no bar. */
      bars: readonly (Readonly<Record<string, number>> | null)[];
    };

export type LayerAxis = 'share' | 'number' | 'signed';

export interface LayerChartProps {
  layers: readonly number[];
  data: LayerChartData;
  title: string;
  axisTitle: string;
  /**
   * Ticks as percentages ('share') or as decimals ('number', a Gini coefficient), both from
   * 0 up; or decimals on a scale that also goes below 0 where a value does ('signed', a
   * change such as Δ log p), with a line at 0.
   */
  axis?: LayerAxis;
  /** "L3" under the axis, "Layer 3" on hover. */
  shortLayer: (layer: number) => string;
  longLayer: (layer: number) => string;
  /** A value as the hover text and the table write it. */
  format: (value: number) => string;
  /** The room on screen, in px: the layers' slots narrow to fit it (down to MIN_SLOT). */
  maxWidth?: number | null;
  svgRef?: Ref<SVGSVGElement>;
  testId?: string;
}

// Geometry in SVG user units; small multiples, so lower than Figure 2 and §4's chart.
export const LAYER_PLOT_HEIGHT = 160;
const SLOT = 24;
const MAX_SLOT = 48;
const MIN_SLOT = 8;
const MIN_WIDTH = 360;
const NARROWEST = 240;
const MARGIN = { top: 40, right: 16, bottom: 34, left: 56 };
const SIDE = 16;
const DODGE = 5;
const LAYER_LABEL_ROOM = 24;
const LEGEND_ROW = 20;
const LEGEND_SIZE = 12;
const LEGEND_LINE = 15;
// The room before an entry's text: a swatch, or a line with its point.
const LEGEND_TEXT = 30;
const TITLE_SIZE = 14;
const TITLE_LINE = 18;
const STACK_TICKS = [0, 0.25, 0.5, 0.75, 1];

/** Name every `step`-th layer (1, 2, 5 or 10) so that the names keep apart at `slot`. */
function labelStep(slot: number): number {
  return [1, 2, 5, 10].find((step) => step * slot >= LAYER_LABEL_ROOM) ?? 10;
}

function extremesOf(data: LayerChartData): { lowest: number; highest: number } {
  if (data.kind === 'stack') return { lowest: 0, highest: 1 };
  const points = data.series.flatMap((s) => s.points);
  const ends = (p: ChartPoint | null) =>
    [p?.low, p?.value, p?.high].filter((v): v is number => typeof v === 'number');
  return {
    lowest: Math.min(0, ...points.flatMap(ends)),
    highest: Math.max(0, ...points.flatMap(ends)),
  };
}

/**
 * The y axis: 0 to 1 for a stack; for points, from 0 to a round value above the highest;
 * on a 'signed' axis, from a round value below the lowest (or 0) to one above the highest
 * (or 0), unbounded.
 */
export function layerScale(
  data: LayerChartData,
  axis: LayerAxis = 'share',
): { bottom: number; top: number; ticks: number[] } {
  if (data.kind === 'stack') return { bottom: 0, top: 1, ticks: STACK_TICKS };
  const { lowest, highest } = extremesOf(data);
  if (axis !== 'signed') {
    const { top, ticks } = valueScale(highest);
    return { bottom: 0, top, ticks };
  }
  const step = niceStep(highest > lowest ? (highest - lowest) / 4 : 0.1);
  const bottom = Math.floor((lowest * (1 - 1e-9)) / step) * step;
  const top = Math.max(bottom + step, Math.ceil((highest * (1 - 1e-9)) / step) * step);
  const ticks: number[] = [];
  for (let i = 0; bottom + i * step <= top + step * 1e-9; i += 1) {
    // Rounded to the step's digits, so that 0 reads "0", not "-0" or "1e-17".
    ticks.push(Number((bottom + i * step).toPrecision(12)) || 0);
  }
  return { bottom, top, ticks };
}

function tickText(tick: number, step: number, axis: LayerAxis): string {
  if (axis === 'share') {
    const digits = Math.max(0, -Math.floor(Math.log10(step * 100) + 1e-9));
    return `${(tick * 100).toFixed(digits)}%`;
  }
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return tick.toFixed(digits);
}

/**
 * One §5 or sparsity figure per layer: points on a line (with a q1–q3 whisker where the
 * value has a range), or a stacked bar of shares. Hand-drawn, self-contained SVG (inline
 * colours and fonts, a white background) like Figure 2, so that the downloaded file looks
 * the same outside the page; narrower than its natural width, the layers' slots narrow.
 */
export function LayerChart({
  layers,
  data,
  title,
  axisTitle,
  axis = 'share',
  shortLayer,
  longLayer,
  format,
  maxWidth,
  svgRef,
  testId,
}: LayerChartProps) {
  const titleId = `layer-chart-${useId().replace(/[^\w-]/g, '')}`;
  const n = Math.max(layers.length, 1);
  const legend =
    data.kind === 'points'
      ? data.series.map((s) => ({ id: s.id, name: s.name, color: s.color, dashed: s.dashed }))
      : // Top of the bar first, as the bar reads.
        [...data.parts].reverse().map((p) => ({ ...p, dashed: false }));
  const natural = Math.ceil(Math.max(MIN_WIDTH, MARGIN.left + n * SLOT + MARGIN.right));
  const narrow = maxWidth != null && maxWidth > 0 && natural > maxWidth;
  // Past MIN_SLOT a layer (or NARROWEST) the chart scales down with its box instead (styles).
  const width = narrow
    ? Math.ceil(
        Math.max(NARROWEST, Math.floor(maxWidth), MARGIN.left + n * MIN_SLOT + MARGIN.right),
      )
    : natural;
  const slot = Math.max(MIN_SLOT, Math.min(MAX_SLOT, (width - MARGIN.left - MARGIN.right) / n));
  const step = labelStep(slot);
  const plotWidth = n * slot;
  const titleLines = wrapText(title, width - 2 * SIDE, TITLE_SIZE);
  const plotTop = MARGIN.top + (titleLines.length - 1) * TITLE_LINE;
  const legendTop = plotTop + LAYER_PLOT_HEIGHT + MARGIN.bottom;
  // One entry a row under the plot, a long name wrapped to the chart's width.
  const legendRows = legend.map((item) =>
    wrapText(item.name, width - 2 * SIDE - LEGEND_TEXT, LEGEND_SIZE),
  );
  const legendPlace = stackRows(legendRows, LEGEND_ROW, LEGEND_LINE);
  const height = legendTop + legendPlace.height + 4;
  const { bottom, top, ticks } = layerScale(data, axis);
  const tickStep = ticks.length > 1 ? ticks[1]! - ticks[0]! : top - bottom;
  // Clamped to the plot: a share is never below 0, nor above the scale's top.
  const y = (value: number) =>
    LAYER_PLOT_HEIGHT -
    ((Math.max(bottom, Math.min(value, top)) - bottom) / (top - bottom)) * LAYER_PLOT_HEIGHT;
  const radius = slot < 16 ? 2 : 3;

  return (
    <ChartSvg
      width={width}
      height={height}
      title={title}
      titleId={titleId}
      testId={testId}
      svgRef={svgRef}
      narrow={narrow}
    >
      <ChartTitle lines={titleLines} x={SIDE} y={22} size={TITLE_SIZE} lineHeight={TITLE_LINE} />
      <g transform={`translate(${MARGIN.left},${plotTop})`}>
        <YAxis
          ticks={ticks}
          y={y}
          tickText={(tick) => tickText(tick, tickStep, axis)}
          plotWidth={plotWidth}
          plotHeight={LAYER_PLOT_HEIGHT}
          title={axisTitle}
          titleOffset={44}
        />
        {layers.map((layer, i) =>
          i % step === 0 ? (
            <text
              key={layer}
              className="layer-name"
              x={i * slot + slot / 2}
              y={LAYER_PLOT_HEIGHT + 16}
              fontSize={11}
              textAnchor="middle"
              fill={TEXT}
            >
              {shortLayer(layer)}
            </text>
          ) : null,
        )}
        {data.kind === 'stack'
          ? layers.map((layer, i) => {
              const bar = data.bars[i];
              if (!bar) return null;
              const barWidth = Math.min(28, slot * 0.7);
              const x = i * slot + (slot - barWidth) / 2;
              let bottom = LAYER_PLOT_HEIGHT;
              return (
                <g key={layer} className="bar" data-layer={layer}>
                  {data.parts.map((part) => {
                    const share = bar[part.id] ?? 0;
                    if (share <= 0) return null;
                    const h = share * LAYER_PLOT_HEIGHT;
                    bottom -= h;
                    return (
                      <rect
                        key={part.id}
                        className="bar-segment"
                        data-part={part.id}
                        data-share={share}
                        x={x}
                        y={bottom}
                        width={barWidth}
                        height={h}
                        fill={part.color}
                      >
                        <title>{`${longLayer(layer)} · ${part.name}: ${format(share)}`}</title>
                      </rect>
                    );
                  })}
                </g>
              );
            })
          : data.series.map((s, si) => {
              const count = data.series.length;
              const dodge = count > 1 ? Math.min(DODGE, slot / (count + 1)) : 0;
              const x = (i: number) => i * slot + slot / 2 + (si - (count - 1) / 2) * dodge;
              // A layer without a value breaks the line.
              let path = '';
              let pen = false;
              s.points.forEach((point, i) => {
                if (point?.value === null || point?.value === undefined) {
                  pen = false;
                  return;
                }
                path += `${pen ? 'L' : 'M'}${x(i)},${y(point.value)}`;
                pen = true;
              });
              return (
                <g key={s.id} className="series" data-series={s.id}>
                  <path
                    d={path}
                    fill="none"
                    stroke={s.color}
                    strokeWidth={1.5}
                    strokeDasharray={s.dashed ? '5 3' : undefined}
                  />
                  {layers.map((layer, i) => {
                    const point = s.points[i];
                    if (!point || point.value === null) return null;
                    const cx = x(i);
                    const ranged =
                      point.low !== null &&
                      point.low !== undefined &&
                      point.high !== null &&
                      point.high !== undefined;
                    const range = ranged
                      ? ` [${format(point.low as number)}, ${format(point.high as number)}]`
                      : '';
                    return (
                      <g key={layer} className="point-group" data-layer={layer}>
                        {ranged && (
                          <line
                            className="whisker"
                            data-low={point.low}
                            data-high={point.high}
                            x1={cx}
                            x2={cx}
                            y1={y(point.low as number)}
                            y2={y(point.high as number)}
                            stroke={s.color}
                            strokeWidth={1}
                          />
                        )}
                        <circle
                          className="point"
                          data-value={point.value}
                          cx={cx}
                          cy={y(point.value)}
                          r={radius}
                          fill={s.dashed ? '#ffffff' : s.color}
                          stroke={s.color}
                          strokeWidth={1.5}
                        >
                          <title>{`${longLayer(layer)} · ${s.name}: ${format(point.value)}${range}`}</title>
                        </circle>
                      </g>
                    );
                  })}
                </g>
              );
            })}
        {/* The base line: the plot's bottom, or 0 on a signed axis that goes below it. */}
        <line
          className="zero-line"
          x1={0}
          x2={plotWidth}
          y1={y(0)}
          y2={y(0)}
          stroke={TEXT}
          strokeWidth={1}
        />
      </g>
      <g className="legend" transform={`translate(${SIDE},${legendTop})`}>
        {legend.map((item, i) => (
          <g key={item.id} transform={`translate(0,${legendPlace.tops[i]})`}>
            {data.kind === 'stack' ? (
              <rect className="legend-swatch" y={1} width={14} height={12} fill={item.color} />
            ) : (
              <>
                <line
                  x1={0}
                  x2={22}
                  y1={7}
                  y2={7}
                  stroke={item.color}
                  strokeWidth={1.5}
                  strokeDasharray={item.dashed ? '5 3' : undefined}
                />
                <circle
                  cx={11}
                  cy={7}
                  r={3}
                  fill={item.dashed ? '#ffffff' : item.color}
                  stroke={item.color}
                  strokeWidth={1.5}
                />
              </>
            )}
            <LegendText
              lines={legendRows[i]!}
              x={LEGEND_TEXT}
              size={LEGEND_SIZE}
              lineHeight={LEGEND_LINE}
            />
          </g>
        ))}
      </g>
    </ChartSvg>
  );
}
