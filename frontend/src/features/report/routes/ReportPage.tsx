import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { api, urls } from '../../../api/client';
import type { ReportQuery } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { ReportFigure2Block, StudyDetail, StudyReport } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../../manage/api/queryKeys';
import { reportKeys } from '../api/queryKeys';
import { ExportSection } from '../components/ExportSection';
import { Figure2Chart, LABELS } from '../components/Figure2Chart';
import type { ChartBar, ChartLabel } from '../components/Figure2Chart';
import { layerRanges, makeFormatters } from '../lib/format';
import {
  AgreementTables,
  CoverageTable,
  GoldAgreementTable,
  GoldCoverageTable,
  JaccardTable,
  NoRatings,
  PerturbationTable,
} from '../components/ReportTables';
import { downloadBlob, safeFileName, serializeSvg, svgSize, svgToPng } from '../lib/svgExport';
import { useWidth } from '../hooks/useWidth';
import { ValueAgreementSection } from '../components/ValueAgreementSection';

export const DEFAULT_QUERY: ReportQuery = {
  annotators: null,
  layers: null,
  submittedOnly: true,
  goldAsCoder: false,
};

/** The annotators a report names (its per-annotator figures and its coders). */
export function annotatorsOf(report: StudyReport): string[] {
  // Gold counted as a coder is no annotator to filter by.
  const gold = report.agreement.gold_as_coder ? report.agreement.gold_coder : null;
  const names = new Set<string>(report.agreement.coders.filter((name) => name !== gold));
  for (const block of report.figure2.per_annotator) names.add(block.annotator);
  return [...names].sort((a, b) => a.localeCompare(b));
}

export function ReportPage() {
  const { studyId } = useParams();
  const id = Number(studyId);
  const { t } = useTranslation();
  const study = useQuery({ queryKey: manageKeys.study(id), queryFn: () => api.admin.study(id) });
  const [query, setQuery] = useState<ReportQuery>(DEFAULT_QUERY);
  // The report on screen stays there while the next one (other filters) loads.
  const report = useQuery({
    queryKey: reportKeys.report(id, query),
    queryFn: () => api.admin.report(id, query),
    placeholderData: keepPreviousData,
  });
  // The last report answered, still shown under the message when the next one fails; and
  // every annotator seen in a report of this study: the first (unfiltered) report names
  // them all, and a filter must not make the others disappear from the choice.
  const [last, setLast] = useState<StudyReport | null>(null);
  const [knownAnnotators, setKnownAnnotators] = useState<string[]>([]);
  if (report.data !== undefined && !report.isPlaceholderData && report.data !== last) {
    const data = report.data;
    setLast(data);
    setKnownAnnotators((known) => [...new Set([...known, ...annotatorsOf(data)])].sort());
  }

  if (study.data === undefined) {
    return study.isError ? (
      <p role="alert" className="alert">
        {errorMessage(study.error, t)}
      </p>
    ) : (
      <Loading />
    );
  }
  const shown = report.data ?? last;
  return (
    <section className="stack report">
      <Link to={`/manage/studies/${id}`} className="back-link">
        {t('manage.backToStudy')}
      </Link>
      <h1>{t('report.heading', { name: study.data.name })}</h1>
      <p>
        <Link to={`/manage/studies/${id}/annotators`} data-testid="annotator-table-link">
          {t('report.annotatorTable')}
        </Link>
      </p>
      <ReportFilters
        study={study.data}
        annotators={knownAnnotators}
        value={query}
        busy={report.isFetching}
        onApply={setQuery}
      />
      {report.isFetching && <Loading />}
      {report.isError && (
        <p role="alert" className="alert">
          {errorMessage(report.error, t)}
        </p>
      )}
      {shown && <ReportBody report={shown} studyId={id} query={query} />}
      <h2>{t('report.data')}</h2>
      <ExportSection studyId={id} keyCount={study.data.key_count} />
    </section>
  );
}

function ReportFilters({
  study,
  annotators,
  value,
  busy,
  onApply,
}: {
  study: StudyDetail;
  annotators: readonly string[];
  value: ReportQuery;
  busy: boolean;
  onApply: (query: ReportQuery) => void;
}) {
  const { t } = useTranslation();
  const [chosenAnnotators, setChosenAnnotators] = useState<string[]>([...(value.annotators ?? [])]);
  const [chosenLayers, setChosenLayers] = useState<number[]>([...(value.layers ?? [])]);
  const [submittedOnly, setSubmittedOnly] = useState(value.submittedOnly);
  const [goldAsCoder, setGoldAsCoder] = useState(value.goldAsCoder ?? false);

  function toggle<T>(list: T[], item: T, on: boolean): T[] {
    return on
      ? [...list.filter((each) => each !== item), item]
      : list.filter((each) => each !== item);
  }

  function apply(event: FormEvent) {
    event.preventDefault();
    onApply({
      annotators: chosenAnnotators.length > 0 ? [...chosenAnnotators].sort() : null,
      layers: chosenLayers.length > 0 ? [...chosenLayers].sort((a, b) => a - b) : null,
      submittedOnly,
      goldAsCoder,
    });
  }

  return (
    <form
      className="card form-grid"
      onSubmit={apply}
      aria-labelledby="filters-heading"
      data-testid="report-filters"
    >
      <h2 id="filters-heading">{t('report.filters.heading')}</h2>
      <fieldset>
        <legend>{t('report.filters.annotators')}</legend>
        {annotators.length === 0 && (
          <span className="muted">{t('report.filters.noAnnotators')}</span>
        )}
        {annotators.map((name) => (
          <label key={name} className="checkbox">
            <input
              type="checkbox"
              checked={chosenAnnotators.includes(name)}
              onChange={(event) =>
                setChosenAnnotators((list) => toggle(list, name, event.target.checked))
              }
            />
            {name}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>{t('report.filters.layers')}</legend>
        {study.layers.map(({ layer }) => (
          <label key={layer} className="checkbox">
            <input
              type="checkbox"
              checked={chosenLayers.includes(layer)}
              onChange={(event) =>
                setChosenLayers((list) => toggle(list, layer, event.target.checked))
              }
            />
            {t('report.layer', { layer })}
          </label>
        ))}
      </fieldset>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={submittedOnly}
          onChange={(event) => setSubmittedOnly(event.target.checked)}
        />
        {t('report.filters.submittedOnly')}
      </label>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={goldAsCoder}
          onChange={(event) => setGoldAsCoder(event.target.checked)}
          data-testid="gold-as-coder"
        />
        {t('report.filters.goldAsCoder')}
      </label>
      <p className="muted">{t('report.filters.hint')}</p>
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {t('report.filters.apply')}
        </button>
      </div>
    </form>
  );
}

type View = 'pooled' | 'per_annotator' | 'majority' | 'gold';
const VIEWS: readonly View[] = ['pooled', 'per_annotator', 'majority', 'gold'];

function ReportBody({
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

      <section className="stack" aria-labelledby="values-heading">
        <h2 id="values-heading">{t('report.values.heading')}</h2>
        <ValueAgreementSection
          everyKey={report.value_agreement_every_key}
          sampled={report.value_agreement}
          gold={report.value_agreement_gold}
          f={f}
        />
      </section>

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
