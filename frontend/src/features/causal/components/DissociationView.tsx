import { Fragment } from 'react';
import { useTranslation } from 'react-i18next';

import { toCsv } from '../../report/lib/composition';
import PALETTE from '../../report/lib/compositionPalette.json';
import type { CausalFormatters } from '../lib/format';
import type { DissociationResult, Interval } from '../lib/results';
import { CausalFigure } from './CausalFigure';
import { GroupedBars } from './GroupedBars';
import { KeyList } from './KeyLink';

const GROUPS = ['a', 'b'] as const;
const SETS = ['p', 'q'] as const;

/** "positive", "negative" or "zero": the interaction's sign in words. */
export function signWord(sign: number): 'positive' | 'negative' | 'zero' {
  return sign > 0 ? 'positive' : sign < 0 ? 'negative' : 'zero';
}

/**
 * Double dissociation (Rahman et al. 2025): the 2×2 table of the mean loss change when group
 * A or B is ablated on prefix set P or Q, the interaction with its interval and sign, and
 * whether each group's ablation costs more on its own set (both intervals above 0).
 */
export function DissociationView({
  result,
  f,
  fileBase,
}: {
  result: DissociationResult;
  f: CausalFormatters;
  fileBase: string;
}) {
  const { t } = useTranslation();
  const groupName = (g: (typeof GROUPS)[number]) => t(`causal.dissociation.groups.${g}`);
  const setName = (s: (typeof SETS)[number]) => t(`causal.dissociation.sets.${s}`);
  const interaction = result.interaction;
  const heading = t('causal.dissociation.chartHeading');
  const cell = (g: (typeof GROUPS)[number], s: (typeof SETS)[number]): Interval | null =>
    result.table[g][s];
  // An interval is null where a change is not finite (a probability of 0 in float32).
  const shown = (interval: Interval | null): string =>
    interval ? f.interval(interval) : t('causal.notAvailable');
  const row = (name: string, interval: Interval | null, sign: number | null = null) => [
    name,
    null,
    null,
    interval?.mean ?? null,
    interval?.low ?? null,
    interval?.high ?? null,
    sign,
  ];
  const undecided = !result.double_dissociation && (!result.a_p_minus_a_q || !result.b_q_minus_b_p);
  const verdict = result.double_dissociation
    ? 'causal.dissociation.yes'
    : undecided
      ? 'causal.dissociation.undecided'
      : 'causal.dissociation.no';

  return (
    <section
      className="stack"
      aria-label={t('causal.dissociation.name')}
      data-testid="dissociation-table"
    >
      <p className="notice" data-testid="dissociation-anchor">
        {t('causal.dissociation.anchor')}
      </p>
      <dl className="facts">
        {GROUPS.map((g) => (
          <Fragment key={g}>
            <dt>{groupName(g)}</dt>
            <dd>
              <details>
                <summary>{t('causal.keyCount', { count: result.groups[g].length })}</summary>
                <KeyList keys={result.groups[g]} keyIds={result.key_ids} />
              </details>
            </dd>
          </Fragment>
        ))}
        <dt>{t('causal.ablation.scale')}</dt>
        <dd>
          {result.scale === 0
            ? t('causal.ablation.zeroed')
            : t('causal.ablation.scaled', { scale: f.number(result.scale) })}
        </dd>
        <dt>{t('causal.seed')}</dt>
        <dd>
          {t('causal.seedValue', { seed: result.seed, replicates: f.count(result.replicates) })}
        </dd>
      </dl>

      <table className="assignments report-table" data-testid="dissociation-cells">
        <caption>{t('causal.dissociation.caption')}</caption>
        <thead>
          <tr>
            <td />
            {SETS.map((s) => (
              <th scope="col" key={s}>
                {t('causal.dissociation.setColumn', {
                  set: setName(s),
                  n: f.count(result.n[s]),
                })}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {GROUPS.map((g) => (
            <tr key={g} data-group={g}>
              <th scope="row">
                {t('causal.dissociation.groupRow', {
                  group: groupName(g),
                  count: result.groups[g].length,
                })}
              </th>
              {SETS.map((s) => (
                <td key={s} className="number" data-label={setName(s)} data-cell={`${g}${s}`}>
                  {shown(cell(g, s))}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>

      <p data-testid="dissociation-interaction" data-sign={interaction?.sign}>
        {interaction ? (
          <>
            {t('causal.dissociation.interaction', {
              value: f.interval(interaction),
              sign: t(`causal.dissociation.sign.${signWord(interaction.sign)}`),
            })}{' '}
            {interaction.excludes_zero
              ? t('causal.dissociation.excludesZero')
              : t('causal.dissociation.includesZero')}
          </>
        ) : (
          t('causal.dissociation.interactionUnavailable')
        )}
      </p>
      <p
        data-testid="dissociation-verdict"
        data-double={result.double_dissociation ? 'true' : undecided ? 'undecided' : 'false'}
        className={result.double_dissociation ? 'success' : undefined}
      >
        {t(verdict, {
          a: shown(result.a_p_minus_a_q),
          b: shown(result.b_q_minus_b_p),
        })}
      </p>

      <CausalFigure
        id="dissociation"
        heading={heading}
        caption={t('causal.dissociation.chartCaption')}
        csv={() =>
          toCsv(
            ['row', 'set', 'n', 'mean', 'low', 'high', 'sign'],
            [
              ...GROUPS.flatMap((g) =>
                SETS.map((s) => [
                  g,
                  s,
                  result.n[s],
                  cell(g, s)?.mean ?? null,
                  cell(g, s)?.low ?? null,
                  cell(g, s)?.high ?? null,
                  null,
                ]),
              ),
              row('a_p_minus_a_q', result.a_p_minus_a_q),
              row('b_q_minus_b_p', result.b_q_minus_b_p),
              row('interaction', interaction, interaction?.sign ?? null),
            ],
          )
        }
        fileBase={`${fileBase}-dissociation`}
        chart={(svgRef, width) => (
          <GroupedBars
            groups={SETS.map((s) => ({
              id: s,
              name: setName(s),
              bars: GROUPS.map((g) => ({
                value: cell(g, s)?.mean ?? null,
                low: cell(g, s)?.low ?? null,
                high: cell(g, s)?.high ?? null,
              })),
            }))}
            series={[
              { id: 'a', name: groupName('a'), color: PALETTE.first },
              { id: 'b', name: groupName('b'), color: PALETTE.second, hatched: true },
            ]}
            title={heading}
            axisTitle={t('causal.dissociation.axis')}
            format={(value) => f.delta(value)}
            maxWidth={width}
            svgRef={svgRef}
            testId="chart-dissociation"
          />
        )}
        table={
          <table className="assignments report-table">
            <thead>
              <tr>
                <th scope="col">{t('causal.dissociation.ablatedGroup')}</th>
                <th scope="col">{t('causal.dissociation.prefixSet')}</th>
                <th scope="col">{t('causal.dissociation.lossChange')}</th>
              </tr>
            </thead>
            <tbody>
              {GROUPS.flatMap((g) =>
                SETS.map((s) => (
                  <tr key={`${g}${s}`}>
                    <th scope="row">{groupName(g)}</th>
                    <td data-label={t('causal.dissociation.prefixSet')}>{setName(s)}</td>
                    <td className="number" data-label={t('causal.dissociation.lossChange')}>
                      {shown(cell(g, s))}
                    </td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        }
      />
    </section>
  );
}
