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
import { layerScale } from '../../report/components/LayerChart';

export interface BarSeries {
  id: string;
  name: string;
  color: string;
  /** Hatched with white stripes, so that two series stay apart in grey print too. */
  hatched?: boolean;
}

export interface BarValue {
  value: number | null;
  low?: number | null;
  high?: number | null;
}

export interface BarGroup {
  id: string;
  name: string;
  /** One value per series, in the series' order. */
  bars: readonly BarValue[];
}

export interface GroupedBarsProps {
  groups: readonly BarGroup[];
  series: readonly BarSeries[];
  title: string;
  axisTitle: string;
  format: (value: number) => string;
  /** The room on screen, in px: below its own width the chart scales down (styles). */
  maxWidth?: number | null;
  svgRef?: Ref<SVGSVGElement>;
  testId?: string;
}

const PLOT_HEIGHT = 180;
const BAR = 40;
const GAP = 28;
const MARGIN = { left: 64, right: 16, bottom: 30 };
const SIDE = 16;
const MIN_WIDTH = 320;
const TITLE_SIZE = 14;
const TITLE_LINE = 18;
const LEGEND_ROW = 20;
const LEGEND_SIZE = 12;
const LEGEND_LINE = 15;

/**
 * Bars in groups on a scale that goes below 0 where a value does (a change of p or of log
 * p), each with its 95% interval where it has one: the keys ablated beside the random
 * control, a group on each prefix set. Self-contained SVG like the report's charts.
 */
export function GroupedBars({
  groups,
  series,
  title,
  axisTitle,
  format,
  maxWidth,
  svgRef,
  testId,
}: GroupedBarsProps) {
  const titleId = `bars-${useId().replace(/[^\w-]/g, '')}`;
  const patternId = `${titleId}-hatch`;
  const slot = series.length * BAR + GAP;
  const natural = Math.max(MIN_WIDTH, MARGIN.left + groups.length * slot + MARGIN.right);
  const width =
    maxWidth && maxWidth > 0 ? Math.max(MIN_WIDTH, Math.min(natural, maxWidth)) : natural;
  const groupSlot = (width - MARGIN.left - MARGIN.right) / Math.max(1, groups.length);
  const bar = Math.min(BAR, (groupSlot - 12) / Math.max(1, series.length));
  const titleLines = wrapText(title, width - 2 * SIDE, TITLE_SIZE);
  const plotTop = 40 + (titleLines.length - 1) * TITLE_LINE;
  const legendTop = plotTop + PLOT_HEIGHT + MARGIN.bottom;
  const legendLines = series.map((s) => wrapText(s.name, width - 2 * SIDE - 26, LEGEND_SIZE));
  const legend = stackRows(legendLines, LEGEND_ROW, LEGEND_LINE);
  const height = legendTop + legend.height + 4;
  // The report's per-layer scale, on its signed axis: round ticks below and above 0.
  const { bottom, top, ticks } = layerScale(
    {
      kind: 'points',
      series: [{ id: 'all', name: '', color: '', points: groups.flatMap((g) => g.bars) }],
    },
    'signed',
  );
  const y = (value: number) =>
    PLOT_HEIGHT -
    ((Math.max(bottom, Math.min(value, top)) - bottom) / (top - bottom)) * PLOT_HEIGHT;

  return (
    <ChartSvg
      width={width}
      height={height}
      title={title}
      titleId={titleId}
      testId={testId}
      svgRef={svgRef}
    >
      <defs>
        <pattern
          id={patternId}
          width={6}
          height={6}
          patternUnits="userSpaceOnUse"
          patternTransform="rotate(45)"
        >
          <rect width={6} height={6} fill="#ffffff" fillOpacity={0} />
          <line x1={0} y1={0} x2={0} y2={6} stroke="#ffffff" strokeWidth={2} />
        </pattern>
      </defs>
      <ChartTitle lines={titleLines} x={SIDE} y={22} size={TITLE_SIZE} lineHeight={TITLE_LINE} />
      <g transform={`translate(${MARGIN.left},${plotTop})`}>
        <YAxis
          ticks={ticks}
          y={y}
          tickText={format}
          plotWidth={groups.length * groupSlot}
          plotHeight={PLOT_HEIGHT}
          title={axisTitle}
          titleOffset={52}
        />
        {groups.map((group, g) => {
          const start = g * groupSlot + (groupSlot - bar * series.length) / 2;
          return (
            <g key={group.id} className="bar-group" data-group={group.id}>
              {group.bars.map((value, s) => {
                const each = series[s];
                if (!each || value.value === null) return null;
                const x = start + s * bar;
                const y0 = y(0);
                const y1 = y(value.value);
                const ranged = typeof value.low === 'number' && typeof value.high === 'number';
                const range = ranged
                  ? ` [${format(value.low as number)}, ${format(value.high as number)}]`
                  : '';
                const label = `${group.name} · ${each.name}: ${format(value.value)}${range}`;
                return (
                  <g key={each.id} className="bar" data-series={each.id} data-value={value.value}>
                    <rect
                      x={x + 2}
                      y={Math.min(y0, y1)}
                      width={bar - 4}
                      height={Math.max(1, Math.abs(y1 - y0))}
                      fill={each.color}
                    >
                      <title>{label}</title>
                    </rect>
                    {each.hatched && (
                      <rect
                        x={x + 2}
                        y={Math.min(y0, y1)}
                        width={bar - 4}
                        height={Math.max(1, Math.abs(y1 - y0))}
                        fill={`url(#${patternId})`}
                        pointerEvents="none"
                      />
                    )}
                    {ranged && (
                      <g
                        className="whisker"
                        data-low={value.low as number}
                        data-high={value.high as number}
                        stroke={TEXT}
                        strokeWidth={1.25}
                      >
                        <line
                          x1={x + bar / 2}
                          x2={x + bar / 2}
                          y1={y(value.low as number)}
                          y2={y(value.high as number)}
                        />
                        <line
                          x1={x + bar / 2 - 5}
                          x2={x + bar / 2 + 5}
                          y1={y(value.low as number)}
                          y2={y(value.low as number)}
                        />
                        <line
                          x1={x + bar / 2 - 5}
                          x2={x + bar / 2 + 5}
                          y1={y(value.high as number)}
                          y2={y(value.high as number)}
                        />
                      </g>
                    )}
                  </g>
                );
              })}
              <text
                className="group-name"
                x={g * groupSlot + groupSlot / 2}
                y={PLOT_HEIGHT + 18}
                fontSize={12}
                textAnchor="middle"
                fill={TEXT}
              >
                {group.name}
              </text>
            </g>
          );
        })}
        <line
          className="zero-line"
          x1={0}
          x2={groups.length * groupSlot}
          y1={y(0)}
          y2={y(0)}
          stroke={TEXT}
          strokeWidth={1}
        />
      </g>
      <g className="legend" transform={`translate(${SIDE},${legendTop})`}>
        {series.map((each, i) => (
          <g key={each.id} transform={`translate(0,${legend.tops[i]})`}>
            <rect y={1} width={16} height={12} fill={each.color} />
            {each.hatched && <rect y={1} width={16} height={12} fill={`url(#${patternId})`} />}
            <LegendText
              lines={legendLines[i]!}
              x={26}
              size={LEGEND_SIZE}
              lineHeight={LEGEND_LINE}
            />
          </g>
        ))}
      </g>
    </ChartSvg>
  );
}
