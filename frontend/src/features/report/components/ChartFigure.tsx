import { useRef } from 'react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

import { useWidth } from '../hooks/useWidth';
import { toCsv } from '../lib/composition';
import { FigureDownloads } from './FigureDownloads';
import { LayerChart } from './LayerChart';
import type { LayerChartProps } from './LayerChart';

/** A column of a figure's table: its heading, its CSV name, and how a value reads. */
export interface FigureColumn {
  name: string;
  /** The CSV's column name: the report's field name, the same in every language. */
  csv: string;
  format: (value: number | null) => string;
}

/** A figure's numbers: one row a layer, one value a column. */
export interface FigureTable {
  columns: readonly FigureColumn[];
  rows: readonly { layer: number; values: readonly (number | null)[] }[];
}

/**
 * One per-layer figure of §5 or sparsity: a heading, the chart, what the paper measured,
 * CSV / SVG / PNG downloads (as Figure 2's) and the numbers as a table, the chart's
 * alternative for a screen reader or a reader who wants the values.
 */
export function ChartFigure({
  id,
  heading,
  caption,
  children,
  chart,
  table,
  fileBase,
}: {
  /** "active", "change": names the test ids (`figure-…`, `chart-…`, `table-…`) and files. */
  id: string;
  heading: string;
  /** What the figure shows: for §5, what the paper measured. */
  caption: string;
  /** Notes under the caption. */
  children?: ReactNode;
  chart: Omit<LayerChartProps, 'maxWidth' | 'svgRef' | 'testId' | 'longLayer'>;
  table: FigureTable;
  fileBase: string;
}) {
  const { t } = useTranslation();
  const svgRef = useRef<SVGSVGElement>(null);
  const [frame, width] = useWidth<HTMLDivElement>();
  const headingId = `figure-${id}-heading`;
  const longLayer = (layer: number) => t('report.layer', { layer });
  const csv = () =>
    toCsv(
      ['layer', ...table.columns.map((column) => column.csv)],
      table.rows.map((row) => [row.layer, ...row.values]),
    );

  return (
    <figure className="chart-figure stack" aria-labelledby={headingId} data-testid={`figure-${id}`}>
      <h3 id={headingId}>{heading}</h3>
      <div className="chart-fit" ref={frame}>
        <LayerChart
          {...chart}
          longLayer={longLayer}
          maxWidth={width}
          svgRef={svgRef}
          testId={`chart-${id}`}
        />
      </div>
      <figcaption className="muted" data-testid={`caption-${id}`}>
        {caption}
      </figcaption>
      {children}
      <FigureDownloads figure={heading} fileBase={fileBase} csv={csv} svgRef={svgRef} />
      <details className="chart-data">
        <summary>{t('report.chart.table')}</summary>
        <table className="assignments report-table" data-testid={`table-${id}`}>
          <caption>{chart.title}</caption>
          <thead>
            <tr>
              <th scope="col">{t('report.layerColumn')}</th>
              {table.columns.map((column) => (
                <th scope="col" key={column.csv}>
                  {column.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.rows.map((row) => (
              <tr key={row.layer} data-layer={row.layer}>
                <th scope="row">{longLayer(row.layer)}</th>
                {table.columns.map((column, i) => (
                  <td
                    key={column.csv}
                    className="number"
                    data-label={column.name}
                    data-column={column.csv}
                  >
                    {column.format(row.values[i] ?? null)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
