import type { ReactNode, Ref } from 'react';

import { FONT, GRID, MUTED, TEXT } from './text';

export interface ChartSvgProps {
  width: number;
  height: number;
  /** The accessible name, also the file's <title>. */
  title: string;
  titleId: string;
  testId?: string;
  svgRef?: Ref<SVGSVGElement>;
  /** Drawn narrower than its natural width (data-narrow, for the styles and tests). */
  narrow?: boolean;
  children: ReactNode;
}

/**
 * The root of a hand-drawn chart: a self-contained SVG (inline font, a white background,
 * its title as the accessible name) so that the downloaded file looks as on the page.
 */
export function ChartSvg({
  width,
  height,
  title,
  titleId,
  testId,
  svgRef,
  narrow,
  children,
}: ChartSvgProps) {
  return (
    <svg
      ref={svgRef}
      xmlns="http://www.w3.org/2000/svg"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-labelledby={titleId}
      fontFamily={FONT}
      data-testid={testId}
      data-narrow={narrow ? 'true' : undefined}
    >
      <title id={titleId}>{title}</title>
      <rect className="background" x={0} y={0} width={width} height={height} fill="#ffffff" />
      {children}
    </svg>
  );
}

export interface ChartTitleProps {
  /** The title already wrapped to the chart's width. */
  lines: readonly string[];
  x: number;
  /** The first line's baseline. */
  y: number;
  size: number;
  lineHeight: number;
}

/** The title drawn at the top, a line a tspan. */
export function ChartTitle({ lines, x, y, size, lineHeight }: ChartTitleProps) {
  return (
    <text className="chart-title" x={x} y={y} fontSize={size} fontWeight={600} fill={TEXT}>
      {lines.map((line, i) => (
        <tspan key={i} x={x} dy={i === 0 ? 0 : lineHeight}>
          {line}
        </tspan>
      ))}
    </text>
  );
}

export interface YAxisProps {
  ticks: readonly number[];
  /** A tick's height in the plot's units. */
  y: (tick: number) => number;
  tickText: (tick: number) => string;
  /** How far the grid lines run to the right. */
  plotWidth: number;
  plotHeight: number;
  title: string;
  /** The axis title's distance left of the plot. */
  titleOffset: number;
}

/** Grid lines with their values at the left, and the axis title turned upright. */
export function YAxis({
  ticks,
  y,
  tickText,
  plotWidth,
  plotHeight,
  title,
  titleOffset,
}: YAxisProps) {
  return (
    <>
      {ticks.map((tick) => (
        <g key={tick} className="tick">
          <line x1={0} x2={plotWidth} y1={y(tick)} y2={y(tick)} stroke={GRID} strokeWidth={1} />
          <text x={-8} y={y(tick) + 4} fontSize={11} textAnchor="end" fill={MUTED}>
            {tickText(tick)}
          </text>
        </g>
      ))}
      <text
        transform={`translate(-${titleOffset},${plotHeight / 2}) rotate(-90)`}
        fontSize={11}
        textAnchor="middle"
        fill={MUTED}
      >
        {title}
      </text>
    </>
  );
}

/**
 * Legend entries a row each, an entry `rowHeight` high plus `lineHeight` for each line it
 * wraps onto: each entry's top, and the whole legend's height.
 */
export function stackRows(
  entries: readonly (readonly string[])[],
  rowHeight: number,
  lineHeight: number,
): { tops: number[]; height: number } {
  const tops: number[] = [];
  let height = 0;
  for (const lines of entries) {
    tops.push(height);
    height += rowHeight + (Math.max(1, lines.length) - 1) * lineHeight;
  }
  return { tops, height };
}

/** A legend entry's text, wrapped, starting `x` right of its swatch's left. */
export function LegendText({
  lines,
  x,
  size,
  lineHeight,
}: {
  lines: readonly string[];
  x: number;
  size: number;
  lineHeight: number;
}) {
  return (
    <text x={x} y={11} fontSize={size} fill={TEXT}>
      {lines.map((line, j) => (
        <tspan key={j} x={x} dy={j === 0 ? 0 : lineHeight}>
          {line}
        </tspan>
      ))}
    </text>
  );
}
