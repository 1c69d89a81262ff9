import { useState } from 'react';
import type { RefObject } from 'react';
import { useTranslation } from 'react-i18next';

import { downloadBlob, serializeSvg, svgSize, svgToPng } from '../lib/svgExport';

export type FigureFormat = 'csv' | 'svg' | 'png';
const FORMATS: readonly FigureFormat[] = ['csv', 'svg', 'png'];

/**
 * A figure's CSV / SVG / PNG buttons (as Figure 2's): the CSV is the figure's numbers, the
 * SVG and PNG the chart as drawn. Each button's name says which figure and format it saves.
 */
export function FigureDownloads({
  figure,
  fileBase,
  csv,
  svgRef,
}: {
  /** The figure's heading, in the buttons' names. */
  figure: string;
  fileBase: string;
  /** The CSV's text, made when its button is pressed. */
  csv: () => string;
  svgRef: RefObject<SVGSVGElement | null>;
}) {
  const { t } = useTranslation();
  const [downloadError, setDownloadError] = useState<string | null>(null);

  async function download(format: FigureFormat) {
    setDownloadError(null);
    if (format === 'csv') {
      downloadBlob(new Blob([csv()], { type: 'text/csv;charset=utf-8' }), `${fileBase}.csv`);
      return;
    }
    const svg = svgRef.current;
    if (!svg) return;
    if (format === 'svg') {
      downloadBlob(new Blob([serializeSvg(svg)], { type: 'image/svg+xml' }), `${fileBase}.svg`);
      return;
    }
    try {
      downloadBlob(await svgToPng(serializeSvg(svg), svgSize(svg)), `${fileBase}.png`);
    } catch {
      setDownloadError(t('report.figure2.pngFailed'));
    }
  }

  return (
    <>
      <p className="download-row">
        <span>{t('report.downloads')}</span>
        {FORMATS.map((format) => (
          <button
            key={format}
            type="button"
            aria-label={t('report.chart.download', {
              figure,
              format: t(`report.chart.formats.${format}`),
            })}
            onClick={() => void download(format)}
          >
            {t(`report.chart.formats.${format}`)}
          </button>
        ))}
      </p>
      {downloadError && (
        <p role="alert" className="alert">
          {downloadError}
        </p>
      )}
    </>
  );
}
