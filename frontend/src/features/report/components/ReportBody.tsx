import { useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { urls } from '../../../api/client';
import type { ReportQuery } from '../../../api/client';
import type { ReportFigure2Block, StudyReport } from '../../../api/types';
import { Figure2Chart, LABELS } from './Figure2Chart';
import type { ChartBar, ChartLabel } from './Figure2Chart';
import { layerRanges, makeFormatters } from '../lib/format';
import { AgreementTables } from './AgreementTables';
import { CompositionSection } from './CompositionSection';
import { NoRatings } from './LayerRows';
import { PatternScoresTable } from './PatternScoresTable';
import {
  CoverageTable,
  GoldAgreementTable,
  GoldCoverageTable,
  JaccardTable,
  PerturbationTable,
} from './ReportTables';
import { downloadBlob, safeFileName, serializeSvg, svgSize, svgToPng } from '../lib/svgExport';
import { useWidth } from '../hooks/useWidth';
import { SparsitySection } from './SparsitySection';
import { ValueAgreementSection } from './ValueAgreementSection';

export type View = 'pooled' | 'per_annotator' | 'majority' | 'gold';
export const VIEWS: readonly View[] = ['pooled', 'per_annotator', 'majority', 'gold'];

export function ReportBody({
  report,
  studyId,
  query,
}: {
  report: StudyReport;
  studyId: number;
  query: ReportQuery;
}) {
  const { t, i18n } = useTranslation();
  const f = useMemo(() => makeFormatters(i18n.language), [i18n.language]);
  const [view, setView] = useState<View>('pooled');
  const [annotator, setAnnotator] = useState<string>('');
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const svgRef = useRef<SVGSVGElement>(null);
  const [chartFrame, chartWidth] = useWidth<HTMLDivElement>();

  const perAnnotator = report.figure2.per_annotator;
  const chosen = perAnnotator.find((block) => block.annotator === annotator) ?? perAnnotator[0];
  let block: ReportFigure2Block | undefined;
  let viewName: string;
  if (view === 'pooled') {
    block = report.figure2.pooled;
    viewName = t('report.figure2.views.pooled');
  } else if (view === 'majority') {
    block = report.figure2.majority;
    viewName = t('report.figure2.views.majority');
  } else if (view === 'gold') {
    block = report.figure2.gold;
    viewName = t('report.figure2.views.gold');
  } else {
    block = chosen;
    viewName = chosen
      ? t('report.figure2.annotatorView', { name: chosen.annotator })
      : t('report.figure2.views.per_annotator');
  }

  const labelNames = Object.fromEntries(
    LABELS.map(({ label }) => [label, t(`labels.${label}`)]),
  ) as Record<ChartLabel, string>;
  // Layers without ratings (a mined study has keys in every layer, its first
  // annotations in the first few) are named under the plot, not drawn as blank bars.
  const leftOut = (block?.layers ?? []).flatMap((row) =>
    row.n === 0 && row.layer !== null ? [row.layer] : [],
  );
  const bars: ChartBar[] = block
    ? [
        ...block.layers
          .filter((row) => row.n > 0)
          .map((row) => ({
            name: t('report.figure2.layerShort', { layer: row.layer }),
            longName: t('report.layer', { layer: row.layer }),
            row,
          })),
        {
          name: t('report.figure2.all'),
          longName: t('report.allLayers'),
          row: block.overall,
          overall: true,
        },
      ]
    : [];
  const title = t('report.figure2.chartTitle', { name: report.study.name, view: viewName });
  const fileBase = `${safeFileName(report.study.name)}-figure2-${view === 'per_annotator' && chosen ? safeFileName(chosen.annotator) : view}`;

  function downloadSvg() {
    if (!svgRef.current) return;
    setDownloadError(null);
    downloadBlob(
      new Blob([serializeSvg(svgRef.current)], { type: 'image/svg+xml' }),
      `${fileBase}.svg`,
    );
  }

  async function downloadPng() {
    if (!svgRef.current) return;
    setDownloadError(null);
    try {
      const svg = svgRef.current;
      downloadBlob(await svgToPng(serializeSvg(svg), svgSize(svg)), `${fileBase}.png`);
    } catch {
      setDownloadError(t('report.figure2.pngFailed'));
    }
  }

  return (
    <>
      <section className="card stack" aria-labelledby="figure2-heading" data-testid="figure2">
        <div className="section-head">
          <h2 id="figure2-heading">{t('report.figure2.heading')}</h2>
        </div>
        <fieldset className="view-switch">
          <legend>{t('report.figure2.view')}</legend>
          {VIEWS.map((each) => (
            <label key={each} className="radio">
              <input
                type="radio"
                name="figure2-view"
                value={each}
                checked={view === each}
                disabled={each === 'per_annotator' && perAnnotator.length === 0}
                onChange={() => setView(each)}
              />
              {t(`report.figure2.views.${each}`)}
            </label>
          ))}
          {view === 'per_annotator' && perAnnotator.length > 0 && (
            <label className="inline-select">
              {t('report.figure2.annotator')}
              <select
                value={chosen?.annotator ?? ''}
                onChange={(event) => setAnnotator(event.target.value)}
              >
                {perAnnotator.map((each) => (
                  <option key={each.annotator} value={each.annotator}>
                    {each.annotator}
                  </option>
                ))}
              </select>
            </label>
          )}
        </fieldset>
        {block ? (
          <div className="chart-fit" ref={chartFrame}>
            <Figure2Chart
              bars={bars}
              title={title}
              labelNames={labelNames}
              axisTitle={t('report.figure2.axis')}
              emptyText={t('report.figure2.empty')}
              formatShare={f.percent}
              note={
                leftOut.length > 0
                  ? t('report.figure2.leftOut', { layers: layerRanges(leftOut) })
                  : undefined
              }
              maxWidth={chartWidth}
              svgRef={svgRef}
            />
          </div>
        ) : (
          <p className="muted">{t('report.figure2.noData')}</p>
        )}
        {block && block.overall.n === 0 && view !== 'gold' && (
          <NoRatings report={report} testId="figure2-empty" />
        )}
        {view === 'gold' && block && block.overall.n === 0 && (
          <p className="muted" data-testid="figure2-gold-empty">
            {t('report.gold.none')}
          </p>
        )}
        {view === 'majority' && (
          <p className="muted" data-testid="majority-ties">
            {t('report.figure2.tiesExplained')}{' '}
            <strong>
              {t('report.figure2.ties', {
                count: report.figure2.majority.overall.ties,
                total: f.count(report.figure2.majority.overall.n),
              })}
            </strong>
          </p>
        )}
        <p className="download-row">
          <span>{t('report.downloads')}</span>
          <button type="button" onClick={downloadSvg} disabled={!block}>
            {t('report.figure2.downloadSvg')}
          </button>
          <button type="button" onClick={() => void downloadPng()} disabled={!block}>
            {t('report.figure2.downloadPng')}
          </button>
          <a
            href={urls.reportCsv(studyId, query)}
            download
            className="button-link"
            data-testid="report-csv"
          >
            {t('report.downloadCsv')}
          </a>
        </p>
        {downloadError && (
          <p role="alert" className="alert">
            {downloadError}
          </p>
        )}
      </section>

      <section className="stack" aria-labelledby="coverage-heading">
        <h2 id="coverage-heading">{t('report.coverage.heading')}</h2>
        <CoverageTable report={report} f={f} />
        <GoldCoverageTable report={report} f={f} />
      </section>

      <section className="stack" aria-labelledby="agreement-heading">
        <h2 id="agreement-heading">{t('report.agreement.heading')}</h2>
        <p className="muted" data-testid="gold-as-coder-note">
          {report.agreement.gold_as_coder
            ? t('report.agreement.goldAsCoderYes', { name: report.agreement.gold_coder })
            : t('report.agreement.goldAsCoderNo')}
        </p>
        <AgreementTables report={report} f={f} />
      </section>

      <section className="stack" aria-labelledby="gold-heading">
        <h2 id="gold-heading">{t('report.gold.heading')}</h2>
        <GoldAgreementTable report={report} f={f} />
      </section>

      <section className="stack" aria-labelledby="jaccard-heading">
        <h2 id="jaccard-heading">{t('report.jaccard.heading')}</h2>
        <JaccardTable report={report} f={f} />
      </section>

      <section className="stack" aria-labelledby="scores-heading">
        <h2 id="scores-heading">{t('report.scores.heading')}</h2>
        <p className="muted">{t('report.scores.definition')}</p>
        <PatternScoresTable report={report} f={f} />
        <p className="muted">{t('report.scores.anchor')}</p>
      </section>

      <section className="stack" aria-labelledby="values-heading">
        <h2 id="values-heading">{t('report.values.heading')}</h2>
        <ValueAgreementSection
          everyKey={report.value_agreement_every_key}
          sampled={report.value_agreement}
          gold={report.value_agreement_gold}
          f={f}
        />
      </section>

      <CompositionSection
        composition={report.composition}
        studyId={studyId}
        studyName={report.study.name}
        f={f}
      />

      <SparsitySection sparsity={report.sparsity} studyName={report.study.name} f={f} />

      <section className="stack" aria-labelledby="perturbation-heading">
        <h2 id="perturbation-heading">{t('report.perturbation.heading')}</h2>
        <PerturbationTable report={report} f={f} />
      </section>

      <details className="card definitions">
        <summary>{t('report.definitions')}</summary>
        <dl className="facts">
          {Object.entries(report.definitions).map(([term, text]) => (
            <div key={term} className="definition" data-term={term}>
              <dt>{t(`report.terms.${term}`, { defaultValue: term })}</dt>
              {/* The report's own words, translated; what only this study knows (its
                  mining run, its checkpoint) is shown as the server wrote it. */}
              <dd>{t(`report.definitionTexts.${term}`, { defaultValue: text })}</dd>
            </div>
          ))}
        </dl>
      </details>
    </>
  );
}
