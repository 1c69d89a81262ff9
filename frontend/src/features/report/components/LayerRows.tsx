import { Fragment } from 'react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

import type { StudyReport } from '../../../api/types';
import { layerRanges } from '../lib/format';

/** "Layer 3", or "All layers" for the overall row (layer null). */
function useLayerName() {
  const { t } = useTranslation();
  return (layer: number | null) =>
    layer === null ? t('report.allLayers') : t('report.layer', { layer });
}

export function RowHead({ layer }: { layer: number | null }) {
  const layerName = useLayerName();
  return (
    <th scope="row" className={layer === null ? 'overall' : undefined}>
      {layerName(layer)}
    </th>
  );
}

/** A row of a per-layer table, or a run of layers folded into one line. */
export type LayerEntry<R> = { row: R } | { folded: number[] };

/**
 * The rows of a per-layer table with each run of consecutive layers that have nothing to
 * show folded into one entry, so that a study with keys in 30 layers and annotations in
 * 4 lists 4 rows and one line, not 26 empty rows. The overall row (layer null) stays.
 */
export function foldEmptyLayers<R extends { layer: number | null }>(
  rows: readonly R[],
  isEmpty: (row: R) => boolean,
): LayerEntry<R>[] {
  const out: LayerEntry<R>[] = [];
  for (const row of rows) {
    const last = out[out.length - 1];
    if (row.layer === null || !isEmpty(row)) out.push({ row });
    else if (last && 'folded' in last) last.folded.push(row.layer);
    else out.push({ folded: [row.layer] });
  }
  return out;
}

/** The line of a table that stands for a run of empty layers: "Layers 5–30: no ratings". */
export function FoldedLayers({
  layers,
  columns,
  why,
}: {
  layers: readonly number[];
  columns: number;
  why: string;
}) {
  const { t } = useTranslation();
  return (
    <tr className="folded-layers" data-testid="folded-layers">
      <th scope="row" colSpan={columns}>
        {t('report.foldedLayers', { count: layers.length, layers: layerRanges(layers), why })}
      </th>
    </tr>
  );
}

/** Each entry of `foldEmptyLayers` as a table row: `render` draws the rows with data. */
export function LayerRows<R extends { layer: number | null }>({
  rows,
  isEmpty,
  columns,
  why,
  render,
}: {
  rows: readonly R[];
  isEmpty: (row: R) => boolean;
  columns: number;
  why: string;
  render: (row: R) => ReactNode;
}) {
  return (
    <>
      {foldEmptyLayers(rows, isEmpty).map((entry) =>
        'folded' in entry ? (
          <FoldedLayers
            key={`folded-${entry.folded[0]}`}
            layers={entry.folded}
            columns={columns}
            why={why}
          />
        ) : (
          <Fragment key={entry.row.layer ?? 'all'}>{render(entry.row)}</Fragment>
        ),
      )}
    </>
  );
}

/** Why a report has no ratings at all: nothing (submitted) matches its filters. */
export function NoRatings({ report, testId }: { report: StudyReport; testId: string }) {
  const { t } = useTranslation();
  return (
    <p className="muted" data-testid={testId}>
      {report.filters.submitted_only
        ? t('report.empty.noSubmittedRatings')
        : t('report.empty.noRatings')}
    </p>
  );
}
