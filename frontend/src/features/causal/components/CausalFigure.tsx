import { useRef } from 'react';
import type { ReactNode, RefObject } from 'react';
import { useTranslation } from 'react-i18next';

import { FigureDownloads } from '../../report/components/FigureDownloads';
import { useWidth } from '../../report/hooks/useWidth';
import { ScrollBox } from './ScrollBox';

/**
 * One figure of a probe, as the report's ChartFigure: a heading, the chart, a caption,
 * CSV / SVG / PNG downloads, and the numbers as a table (the chart's alternative). For
 * charts other than the per-layer LayerChart (which ChartFigure draws itself): a heatmap
 * keeps its cells' size and scrolls in its own box (`scroll`), bars fit their frame.
 */
export function CausalFigure({
  id,
  heading,
  caption,
  children,
  chart,
  scroll = false,
  csv,
  fileBase,
  table,
}: {
  /** Names the test ids (`figure-…`) and the heading's id. */
  id: string;
  heading: string;
  caption: string;
  children?: ReactNode;
  /** The chart, drawn into `svgRef` at most `width` px wide (null: not measured). */
  chart: (svgRef: RefObject<SVGSVGElement | null>, width: number | null) => ReactNode;
  scroll?: boolean;
  csv: () => string;
  fileBase: string;
  table: ReactNode;
}) {
  const { t } = useTranslation();
  const svgRef = useRef<SVGSVGElement>(null);
  const [frame, width] = useWidth<HTMLDivElement>();
  const headingId = `figure-${id}-heading`;
  return (
    <figure className="chart-figure stack" aria-labelledby={headingId} data-testid={`figure-${id}`}>
      <h3 id={headingId}>{heading}</h3>
      {scroll ? (
        <ScrollBox label={heading}>{chart(svgRef, null)}</ScrollBox>
      ) : (
        <div className="chart-fit" ref={frame}>
          {chart(svgRef, width)}
        </div>
      )}
      <figcaption className="muted" data-testid={`caption-${id}`}>
        {caption}
      </figcaption>
      {children}
      <FigureDownloads figure={heading} fileBase={fileBase} csv={csv} svgRef={svgRef} />
      <details className="chart-data">
        <summary>{t('report.chart.table')}</summary>
        <ScrollBox label={t('causal.tableOf', { figure: heading })}>{table}</ScrollBox>
      </details>
    </figure>
  );
}
