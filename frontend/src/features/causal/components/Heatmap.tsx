import { useId } from 'react';
import type { Ref } from 'react';

import { ChartSvg, ChartTitle } from '../../../components/chart/frame';
import { GRID, MUTED, TEXT, textWidth, wrapText } from '../../../components/chart/text';
import { heatColor } from '../lib/heatmapScale';

export interface HeatmapProps {
  /** [layers][tokens]: row i is layer i + 1. */
  values: readonly (readonly number[])[];
  /** The columns' names (the tokens as shown), one per column of `values`. */
  columns: readonly string[];
  /** [start, end): the columns marked as the subject. */
  marked: readonly [number, number];
  /** The cell outlined as the peak, or null. */
  peak: { layer: number; token: number } | null;
  title: string;
  /** The legend's title: what the colour measures. */
  legendTitle: string;
  /** The legend's note on the marked columns ("* subject token"). */
  markedNote: string;
  /** "L3" beside a row. */
  shortLayer: (layer: number) => string;
  /** A cell's hover text. */
  describe: (layer: number, column: number, value: number) => string;
  format: (value: number) => string;
  svgRef?: Ref<SVGSVGElement>;
  testId?: string;
}

// Geometry in SVG user units. The cells keep their size (a long prompt scrolls sideways in
// its box rather than squeezing its tokens' names together).
const CELL_WIDTH = 30;
const SIDE = 16;
const LABEL_SIZE = 11;
const TITLE_SIZE = 14;
const TITLE_LINE = 18;
const MAX_LABEL = 16; // characters of a token's name before it is cut with "…"
const LEGEND_STEPS = 10;
const LEGEND_SWATCH = 18;
const LEGEND_HEIGHT = 10;
const MIN_WIDTH = 320;
const SLANT = Math.SQRT1_2; // names at 45°

function cellHeight(layers: number): number {
  if (layers <= 16) return 18;
  if (layers <= 32) return 12;
  return 8;
}

/** Name every `step`-th layer (1, 2, 5 or 10) so that the names keep apart. */
function rowStep(height: number): number {
  return [1, 2, 5, 10].find((step) => step * height >= 12) ?? 10;
}

function cut(label: string): string {
  const chars = Array.from(label);
  return chars.length > MAX_LABEL ? `${chars.slice(0, MAX_LABEL - 1).join('')}…` : label;
}

/**
 * The indirect effect of each site (ROME's Figure 1): one row a layer (layer 1 on top), one
 * column a token, a sequential colour from 0 to the largest effect (a negative effect reads
 * as 0; the hover and the table give its value), the subject's columns framed and starred,
 * the peak outlined. Self-contained SVG (inline colours and fonts, a white background) like
 * the report's charts, so that the downloaded file looks the same.
 */
export function Heatmap({
  values,
  columns,
  marked,
  peak,
  title,
  legendTitle,
  markedNote,
  shortLayer,
  describe,
  format,
  svgRef,
  testId,
}: HeatmapProps) {
  const titleId = `heatmap-${useId().replace(/[^\w-]/g, '')}`;
  const nLayers = values.length;
  const nCols = columns.length;
  const height = cellHeight(nLayers);
  const step = rowStep(height);
  const names = columns.map((name, i) => cut(i >= marked[0] && i < marked[1] ? `${name}*` : name));
  const longest = Math.max(0, ...names.map((name) => textWidth(name, LABEL_SIZE)));
  // A slanted name reaches left of its column by its length × cos 45°.
  const left = Math.max(44, Math.ceil(longest * SLANT - CELL_WIDTH / 2 + 8));
  const plotWidth = nCols * CELL_WIDTH;
  const width = Math.max(MIN_WIDTH, left + plotWidth + SIDE);
  const titleLines = wrapText(title, width - 2 * SIDE, TITLE_SIZE);
  const top = 30 + (titleLines.length - 1) * TITLE_LINE;
  const plotHeight = nLayers * height;
  const labelsHeight = Math.ceil(longest * SLANT) + 16;
  const legendTop = top + plotHeight + labelsHeight + 8;
  const legendTitleLines = wrapText(legendTitle, width - 2 * SIDE, LABEL_SIZE);
  const swatchesTop = legendTop + legendTitleLines.length * 15;
  const svgHeight = swatchesTop + 52;
  const highest = Math.max(0, ...values.flatMap((row) => row));
  const scaleTop = highest > 0 ? highest : 1;
  const shade = (value: number) => heatColor(value / scaleTop);

  return (
    <ChartSvg
      width={width}
      height={svgHeight}
      title={title}
      titleId={titleId}
      testId={testId}
      svgRef={svgRef}
    >
      <ChartTitle lines={titleLines} x={SIDE} y={20} size={TITLE_SIZE} lineHeight={TITLE_LINE} />
      <g transform={`translate(${left},${top})`}>
        {values.map((row, j) => (
          <g key={j} className="heat-row" data-layer={j + 1}>
            {j % step === 0 || j === nLayers - 1 ? (
              <text
                className="layer-name"
                x={-6}
                y={j * height + height / 2 + 4}
                fontSize={LABEL_SIZE - 1}
                textAnchor="end"
                fill={TEXT}
              >
                {shortLayer(j + 1)}
              </text>
            ) : null}
            {row.map((value, i) => (
              <rect
                key={i}
                className="heat-cell"
                data-layer={j + 1}
                data-token={i}
                data-value={value}
                x={i * CELL_WIDTH}
                y={j * height}
                width={CELL_WIDTH}
                height={height}
                fill={shade(value)}
              >
                <title>{describe(j + 1, i, value)}</title>
              </rect>
            ))}
          </g>
        ))}
        <rect
          x={0}
          y={0}
          width={plotWidth}
          height={plotHeight}
          fill="none"
          stroke={GRID}
          strokeWidth={1}
        />
        {marked[1] > marked[0] && (
          <rect
            className="subject-frame"
            x={marked[0] * CELL_WIDTH}
            y={0}
            width={(marked[1] - marked[0]) * CELL_WIDTH}
            height={plotHeight}
            fill="none"
            stroke={TEXT}
            strokeWidth={1.5}
            strokeDasharray="4 2"
          />
        )}
        {peak && (
          <rect
            className="peak-cell"
            data-layer={peak.layer}
            data-token={peak.token}
            x={peak.token * CELL_WIDTH + 1}
            y={(peak.layer - 1) * height + 1}
            width={CELL_WIDTH - 2}
            height={height - 2}
            fill="none"
            stroke="#d55e00"
            strokeWidth={2}
          />
        )}
        {names.map((name, i) => {
          const x = i * CELL_WIDTH + CELL_WIDTH / 2;
          const y = plotHeight + 10;
          const subject = i >= marked[0] && i < marked[1];
          return (
            <text
              key={i}
              className="token-name"
              data-token={i}
              data-subject={subject ? 'true' : undefined}
              transform={`translate(${x},${y}) rotate(-45)`}
              fontSize={LABEL_SIZE}
              fontWeight={subject ? 700 : 400}
              textAnchor="end"
              fill={TEXT}
            >
              {name}
            </text>
          );
        })}
      </g>
      <g className="legend" transform={`translate(${SIDE},${legendTop})`}>
        <text x={0} y={11} fontSize={LABEL_SIZE} fill={MUTED}>
          {legendTitleLines.map((line, i) => (
            <tspan key={i} x={0} dy={i === 0 ? 0 : 15}>
              {line}
            </tspan>
          ))}
        </text>
        <g transform={`translate(0,${swatchesTop - legendTop + 4})`}>
          {Array.from({ length: LEGEND_STEPS }, (_, k) => (
            <rect
              key={k}
              className="legend-swatch"
              x={k * LEGEND_SWATCH}
              y={0}
              width={LEGEND_SWATCH}
              height={LEGEND_HEIGHT}
              fill={heatColor(k / (LEGEND_STEPS - 1))}
            />
          ))}
          <text x={0} y={LEGEND_HEIGHT + 13} fontSize={LABEL_SIZE - 1} fill={TEXT}>
            {`≤ ${format(0)}`}
          </text>
          <text
            className="legend-top"
            x={LEGEND_STEPS * LEGEND_SWATCH}
            y={LEGEND_HEIGHT + 13}
            fontSize={LABEL_SIZE - 1}
            textAnchor="end"
            fill={TEXT}
          >
            {format(scaleTop)}
          </text>
          <text x={0} y={LEGEND_HEIGHT + 29} fontSize={LABEL_SIZE - 1} fill={MUTED}>
            {markedNote}
          </text>
        </g>
      </g>
    </ChartSvg>
  );
}
