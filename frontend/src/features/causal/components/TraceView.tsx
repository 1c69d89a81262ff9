import { useTranslation } from 'react-i18next';

import { TokenText, VisibleText } from '../../../components/patternEditor/tokenDisplay';
import { toCsv } from '../../report/lib/composition';
import type { CausalFormatters } from '../lib/format';
import { TRACE_KINDS } from '../lib/results';
import type { TraceKind, TraceResult } from '../lib/results';
import { tokenLabel } from '../lib/tokens';
import { CausalFigure } from './CausalFigure';
import { CsvButton } from './CsvButton';
import { Heatmap } from './Heatmap';
import { KeyLink } from './KeyLink';

/**
 * Causal tracing (ROME §2.1): the indirect effect of each hidden state, MLP and attention
 * site as three heatmaps, p(answer) clean and corrupted, the peaks, and the strongest keys
 * at the peak MLP site, each linked to its page where the study mined it.
 */
export function TraceView({
  result,
  f,
  fileBase,
}: {
  result: TraceResult;
  f: CausalFormatters;
  fileBase: string;
}) {
  const { t } = useTranslation();
  const [s0, s1] = result.subject_span;
  const labels = result.tokens.map(tokenLabel);
  const answer = result.answer_token;
  const tokenName = (i: number) =>
    t('causal.trace.token', { position: i, token: labels[i] ?? '' }) +
    (i >= s0 && i < s1 ? ` ${t('causal.trace.subjectMark')}` : '');
  const keys = result.keys;

  return (
    <section className="stack" aria-label={t('causal.trace.name')} data-testid="trace-result">
      <p className="notice" data-testid="trace-anchor">
        {t('causal.trace.anchor')}
      </p>
      <dl className="facts" data-testid="trace-facts">
        <dt>{t('causal.trace.prompt')}</dt>
        <dd>
          <VisibleText text={result.prompt} className="user-text" />
        </dd>
        <dt>{t('causal.trace.subject')}</dt>
        <dd>
          <VisibleText text={result.subject} className="user-text" />{' '}
          <span className="muted">
            {t('causal.trace.subjectTokens', {
              tokens: labels.slice(s0, s1).join(' · '),
              start: s0,
              end: s1 - 1,
            })}
          </span>
        </dd>
        <dt>{t('causal.trace.answer')}</dt>
        <dd>
          “<TokenText token={answer} />”
        </dd>
        <dt>{t('causal.trace.pClean', { answer })}</dt>
        <dd data-testid="trace-p-clean">{f.probability(result.p_clean)}</dd>
        <dt>{t('causal.trace.pCorrupted', { answer })}</dt>
        <dd data-testid="trace-p-corrupted">{f.probability(result.p_corrupted)}</dd>
        <dt>{t('causal.trace.noise')}</dt>
        <dd>
          {t('causal.trace.noiseValue', {
            noise: f.number(result.noise),
            std: f.number(result.noise_std),
            samples: result.samples,
            window: result.window,
            seed: result.seed,
          })}
        </dd>
      </dl>

      <table className="assignments report-table" data-testid="trace-peaks">
        <caption>{t('causal.trace.peaksCaption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('causal.trace.site')}</th>
            <th scope="col">{t('report.layerColumn')}</th>
            <th scope="col">{t('causal.trace.tokenColumn')}</th>
            <th scope="col">{t('causal.trace.effect')}</th>
          </tr>
        </thead>
        <tbody>
          {TRACE_KINDS.map((kind) => {
            const peak = result.peaks[kind];
            return (
              <tr key={kind} data-kind={kind}>
                <th scope="row">{t(`causal.trace.kinds.${kind}`)}</th>
                <td data-label={t('report.layerColumn')}>{peak.layer}</td>
                <td data-label={t('causal.trace.tokenColumn')}>{tokenName(peak.token)}</td>
                <td className="number" data-label={t('causal.trace.effect')}>
                  {f.probability(peak.effect)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>

      <div className="figure-grid">
        {TRACE_KINDS.map((kind) => (
          <TraceHeatmap
            key={kind}
            kind={kind}
            result={result}
            labels={labels}
            tokenName={tokenName}
            f={f}
            fileBase={fileBase}
          />
        ))}
      </div>

      <section className="stack" aria-labelledby="trace-keys-heading" data-testid="trace-keys">
        <h3 id="trace-keys-heading">{t('causal.trace.keysHeading')}</h3>
        <p className="muted">
          {t('causal.trace.keysCaption', {
            layer: keys.layer,
            token: tokenName(keys.token),
            effect: f.probability(keys.effect),
          })}
        </p>
        <table className="assignments report-table">
          <thead>
            <tr>
              <th scope="col">{t('causal.keyColumn')}</th>
              <th scope="col">{t('report.layerColumn')}</th>
              <th scope="col">{t('causal.indexColumn')}</th>
              <th scope="col">{t('causal.trace.score')}</th>
              <th scope="col">{t('causal.trace.m')}</th>
            </tr>
          </thead>
          <tbody>
            {keys.top.map((row) => (
              <tr key={`${row.layer}:${row.index}`} data-key={`${row.layer}:${row.index}`}>
                <th scope="row">
                  <KeyLink layer={row.layer} index={row.index} keyIds={result.key_ids} />
                </th>
                <td data-label={t('report.layerColumn')}>{row.layer}</td>
                <td data-label={t('causal.indexColumn')}>{row.index}</td>
                <td className="number" data-label={t('causal.trace.score')}>
                  {f.number(row.score)}
                </td>
                <td className="number" data-label={t('causal.trace.m')}>
                  {f.number(row.m)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <CsvButton
          label={t('causal.trace.keysCsv')}
          fileName={`${fileBase}-trace-keys.csv`}
          csv={() =>
            toCsv(
              ['layer', 'index', 'score', 'm', 'key_id'],
              keys.top.map((row) => [
                row.layer,
                row.index,
                row.score,
                row.m,
                result.key_ids[`${row.layer}:${row.index}`] ?? null,
              ]),
            )
          }
        />
      </section>
    </section>
  );
}

/** One kind's heatmap with its downloads and its table. */
function TraceHeatmap({
  kind,
  result,
  labels,
  tokenName,
  f,
  fileBase,
}: {
  kind: TraceKind;
  result: TraceResult;
  labels: readonly string[];
  tokenName: (i: number) => string;
  f: CausalFormatters;
  fileBase: string;
}) {
  const { t } = useTranslation();
  const effects = result.effects[kind];
  const [s0, s1] = result.subject_span;
  const peak = result.peaks[kind];
  const site = t(`causal.trace.kinds.${kind}`);
  const heading = t('causal.trace.heatmapHeading', { site });
  const title = t('causal.trace.heatmapTitle', { site, answer: result.answer_token });
  const csv = () =>
    toCsv(
      ['layer', 'position', 'token', 'subject', 'indirect_effect'],
      effects.flatMap((row, j) =>
        row.map((value, i) => [j + 1, i, result.tokens[i] ?? '', i >= s0 && i < s1 ? 1 : 0, value]),
      ),
    );
  return (
    <CausalFigure
      id={`trace-${kind}`}
      heading={heading}
      caption={t('causal.trace.heatmapCaption', {
        layer: peak.layer,
        token: tokenName(peak.token),
        effect: f.probability(peak.effect),
      })}
      scroll
      csv={csv}
      fileBase={`${fileBase}-trace-${kind}`}
      chart={(svgRef) => (
        <Heatmap
          values={effects}
          columns={labels}
          marked={[s0, s1]}
          peak={{ layer: peak.layer, token: peak.token }}
          title={title}
          legendTitle={t('causal.trace.legend')}
          markedNote={t('causal.trace.markedNote')}
          shortLayer={(layer) => t('report.figure2.layerShort', { layer })}
          describe={(layer, i, value) =>
            `${t('report.layer', { layer })} · ${tokenName(i)}: ${f.probability(value)}`
          }
          format={(value) => f.probability(value)}
          svgRef={svgRef}
          testId={`heatmap-${kind}`}
        />
      )}
      table={
        <table className="heat-table" data-testid={`table-trace-${kind}`}>
          <caption>{title}</caption>
          <thead>
            <tr>
              <th scope="col">{t('report.layerColumn')}</th>
              {labels.map((label, i) => (
                <th scope="col" key={i} data-subject={i >= s0 && i < s1 ? 'true' : undefined}>
                  <span aria-hidden="true">{i >= s0 && i < s1 ? `${label}*` : label}</span>
                  <span className="visually-hidden">{tokenName(i)}</span>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {effects.map((row, j) => (
              <tr key={j}>
                <th scope="row">{j + 1}</th>
                {row.map((value, i) => (
                  <td key={i} className="number">
                    {f.probability(value)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      }
    />
  );
}
