import { downloadBlob } from '../../report/lib/svgExport';

/** A table's numbers as a CSV file (a figure's come with its SVG and PNG: FigureDownloads). */
export function CsvButton({
  label,
  fileName,
  csv,
}: {
  label: string;
  fileName: string;
  csv: () => string;
}) {
  return (
    <p className="download-row">
      <button
        type="button"
        onClick={() =>
          downloadBlob(new Blob([csv()], { type: 'text/csv;charset=utf-8' }), fileName)
        }
      >
        {label}
      </button>
    </p>
  );
}
