import { useTranslation } from 'react-i18next';

import { TokenText, VisibleText } from '../../../components/patternEditor/tokenDisplay';
import { toCsv } from '../../report/lib/composition';
import { layerRanges } from '../../report/lib/format';
import PALETTE from '../../report/lib/compositionPalette.json';
import type { CausalFormatters } from '../lib/format';
import type { AttributionResult } from '../lib/results';
import { CausalFigure } from './CausalFigure';
import { GroupedBars } from './GroupedBars';
import { KeyLink, KeyList } from './KeyLink';

const EFFECTS = ['suppress', 'amplify'] as const;

/**
 * Knowledge attribution (Dai et al. 2022): per prompt p(answer) and its largest
 * attributions; the keys selected across the prompts; and what suppressing (×0) and
 * amplifying (×2) them does to p(answer), beside as many random keys of the same layers.
 */
export function AttributionView({
  result,
  f,
  fileBase,
}: {
  result: AttributionResult;
  f: CausalFormatters;
  fileBase: string;
}) {
  const { t } = useTranslation();
  const effects = result.effects;
  const effectName = (what: (typeof EFFECTS)[number]) => t(`causal.attribution.effects.${what}`);
  const seriesNames = {
    selected: t('causal.attribution.selectedKeys'),
    control: t('causal.attribution.controlKeys'),
  };
  const heading = t('causal.attribution.effectsHeading');
  // The controls are null where over half of a layer's keys were selected (control_note).
  const hasControl = effects !== null && EFFECTS.some((what) => effects[what].control !== null);
  const keyColumns = hasControl ? (['selected', 'control'] as const) : (['selected'] as const);
  const series = [
    { id: 'selected', name: seriesNames.selected, color: PALETTE.first },
    ...(hasControl
      ? [{ id: 'control', name: seriesNames.control, color: PALETTE.second, hatched: true }]
      : []),
  ];

  return (
    <section
      className="stack"
      aria-label={t('causal.attribution.name')}
      data-testid="attribution-result"
    >
      <p className="notice" data-testid="attribution-anchor">
        {t('causal.attribution.anchor')}
      </p>
      <dl className="facts">
        <dt>{t('causal.trace.answer')}</dt>
        <dd>
          “<TokenText token={result.prompts[0]?.answer_token ?? result.answer} />”
        </dd>
        <dt>{t('causal.attribution.settings')}</dt>
        <dd>
          {t('causal.attribution.settingsValue', {
            steps: result.steps,
            threshold: f.number(result.threshold),
            share: f.percent(result.share),
            seed: result.seed,
          })}
        </dd>
        <dt>{t('causal.attribution.layers')}</dt>
        <dd>{layerRanges(result.layers)}</dd>
      </dl>

      <table className="assignments report-table" data-testid="attribution-prompts">
        <caption>{t('causal.attribution.promptsCaption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('causal.attribution.prompt')}</th>
            <th scope="col">{t('causal.attribution.p')}</th>
            <th scope="col">{t('causal.attribution.largest')}</th>
            <th scope="col">{t('causal.attribution.kept')}</th>
          </tr>
        </thead>
        <tbody>
          {result.prompts.map((prompt, i) => (
            <tr key={i}>
              <th scope="row">
                <VisibleText text={prompt.prompt} className="user-text" />
              </th>
              <td className="number" data-label={t('causal.attribution.p')}>
                {f.probability(prompt.p)}
              </td>
              <td className="number" data-label={t('causal.attribution.largest')}>
                {f.number(prompt.max_attribution)}
              </td>
              <td className="number" data-label={t('causal.attribution.kept')}>
                {prompt.kept.length}
              </td>
            </tr>
          ))}
        </tbody>
      </table>

      {result.prompts.map((prompt, i) => (
        <details key={i} className="chart-data" data-testid="attribution-top">
          <summary>{t('causal.attribution.topOf', { prompt: prompt.prompt })}</summary>
          <table className="assignments report-table">
            <thead>
              <tr>
                <th scope="col">{t('causal.keyColumn')}</th>
                <th scope="col">{t('causal.attribution.attribution')}</th>
              </tr>
            </thead>
            <tbody>
              {prompt.top.map((row) => (
                <tr key={`${row.layer}:${row.index}`}>
                  <th scope="row">
                    <KeyLink layer={row.layer} index={row.index} keyIds={result.key_ids} />
                  </th>
                  <td className="number" data-label={t('causal.attribution.attribution')}>
                    {f.number(row.attribution)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ))}

      <section
        className="stack"
        aria-labelledby="attribution-selected-heading"
        data-testid="attribution-selected"
      >
        <h3 id="attribution-selected-heading">{t('causal.attribution.selectedHeading')}</h3>
        {result.selected.length === 0 ? (
          <p className="muted">{t('causal.attribution.noneSelected')}</p>
        ) : (
          <>
            <p className="muted">
              {t('causal.attribution.selectedCount', {
                count: result.selected.length,
                share: f.percent(result.share),
                prompts: result.prompts.length,
              })}
            </p>
            <KeyList keys={result.selected} keyIds={result.key_ids} />
          </>
        )}
      </section>

      {effects && (
        <>
          <table className="assignments report-table" data-testid="attribution-effects">
            <caption>{t('causal.attribution.effectsCaption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('causal.attribution.effect')}</th>
                <th scope="col">{seriesNames.selected}</th>
                <th scope="col">{seriesNames.control}</th>
              </tr>
            </thead>
            <tbody>
              {EFFECTS.map((what) => (
                <tr key={what} data-effect={what}>
                  <th scope="row">{effectName(what)}</th>
                  <td className="number" data-label={seriesNames.selected} data-column="selected">
                    {f.change(effects[what].selected)}
                  </td>
                  <td className="number" data-label={seriesNames.control} data-column="control">
                    {effects[what].control === null
                      ? t('causal.notAvailable')
                      : f.change(effects[what].control)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {result.control_note && (
            <p className="muted" data-testid="attribution-control-note">
              {result.control_note}
            </p>
          )}
          <CausalFigure
            id="attribution-effects"
            heading={heading}
            caption={t('causal.attribution.figureCaption', { prompts: result.prompts.length })}
            csv={() =>
              toCsv(
                ['effect', 'keys', 'prompt', 'relative_change'],
                EFFECTS.flatMap((what) =>
                  (['selected', 'control'] as const).flatMap((keys) => [
                    [what, keys, 'mean', effects[what][keys]],
                    ...(effects[what].per_prompt[keys] ?? []).map((value, i) => [
                      what,
                      keys,
                      result.prompts[i]?.prompt ?? String(i),
                      value,
                    ]),
                  ]),
                ),
              )
            }
            fileBase={`${fileBase}-attribution`}
            chart={(svgRef, width) => (
              <GroupedBars
                groups={EFFECTS.map((what) => ({
                  id: what,
                  name: effectName(what),
                  bars: [
                    { value: effects[what].selected },
                    ...(hasControl ? [{ value: effects[what].control }] : []),
                  ],
                }))}
                series={series}
                title={heading}
                axisTitle={t('causal.attribution.axis')}
                format={(value) => f.change(value)}
                maxWidth={width}
                svgRef={svgRef}
                testId="chart-attribution-effects"
              />
            )}
            table={
              <table className="assignments report-table">
                <thead>
                  <tr>
                    <th scope="col">{t('causal.attribution.prompt')}</th>
                    {EFFECTS.flatMap((what) =>
                      keyColumns.map((keys) => (
                        <th scope="col" key={`${what}-${keys}`}>
                          {t('causal.attribution.perPromptColumn', {
                            effect: effectName(what),
                            keys: seriesNames[keys],
                          })}
                        </th>
                      )),
                    )}
                  </tr>
                </thead>
                <tbody>
                  {result.prompts.map((prompt, i) => (
                    <tr key={i}>
                      <th scope="row">
                        <VisibleText text={prompt.prompt} className="user-text" />
                      </th>
                      {EFFECTS.flatMap((what) =>
                        keyColumns.map((keys) => (
                          <td
                            key={`${what}-${keys}`}
                            className="number"
                            data-label={t('causal.attribution.perPromptColumn', {
                              effect: effectName(what),
                              keys: seriesNames[keys],
                            })}
                          >
                            {f.change(effects[what].per_prompt[keys]?.[i])}
                          </td>
                        )),
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            }
          />
          {result.control_keys.length > 0 && (
            <details className="chart-data">
              <summary>{t('causal.attribution.controlList')}</summary>
              <KeyList keys={result.control_keys} keyIds={result.key_ids} />
            </details>
          )}
        </>
      )}
    </section>
  );
}
