import { useTranslation } from 'react-i18next';

import type { StudyReport } from '../../../api/types';
import type { Formatters } from '../lib/format';
import { LayerRows, RowHead } from './LayerRows';

type PatternScores = StudyReport['pattern_scores'];
type Row = PatternScores['overall'] & { layer: number | null };
type Group = 'written' | 'suggestion' | 'shuffled';
type Estimate = Row['written']['detection'];

const GROUPS: readonly Group[] = ['written', 'suggestion', 'shuffled'];
const SCORES = ['detection', 'embedding'] as const;

/** "0.612 [0.540, 0.690]"; the interval is left out when the bootstrap gave none. */
function estimate(f: Formatters, e: Estimate): string {
  const mean = f.decimal(e.mean);
  if (e.mean === null || e.low === null || e.high === null) return mean;
  return `${mean} [${f.decimal(e.low)}, ${f.decimal(e.high)}]`;
}

/**
 * The held-out scores per layer: written patterns, accepted suggestions and the shuffled
 * baseline side by side, then the overall row (docs/evidence.md, "Scores").
 */
export function PatternScoresTable({ report, f }: { report: StudyReport; f: Formatters }) {
  const { t } = useTranslation();
  const scores = report.pattern_scores;
  const overall: Row = { ...scores.overall, layer: null };
  const rows: Row[] = [...scores.layers, overall];
  const empty = (row: Row) => GROUPS.every((g) => row[g].n === 0);
  if (empty(overall))
    return (
      <p className="muted" data-testid="pattern-scores-empty">
        {t('report.scores.empty')}
      </p>
    );
  const label = (key: 'n' | 'detection' | 'embedding', group: Group) =>
    t(`report.scores.${key}`, { group: t(`report.scores.${group}`) });
  return (
    <table className="assignments report-table" data-testid="pattern-scores-table">
      <caption>{t('report.scores.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('report.layerColumn')}</th>
          {GROUPS.flatMap((group) => [
            <th scope="col" key={`${group}-n`}>
              {label('n', group)}
            </th>,
            ...SCORES.map((score) => (
              <th scope="col" key={`${group}-${score}`}>
                {label(score, group)}
              </th>
            )),
          ])}
        </tr>
      </thead>
      <tbody>
        <LayerRows
          rows={rows}
          isEmpty={empty}
          columns={1 + GROUPS.length * 3}
          why={t('report.scores.noScores')}
          render={(row) => (
            <tr data-testid="pattern-scores-row">
              <RowHead layer={row.layer} />
              {GROUPS.flatMap((group) => [
                <td key={`${group}-n`} data-label={label('n', group)}>
                  {f.count(row[group].n)}
                </td>,
                ...SCORES.map((score) => (
                  <td
                    key={`${group}-${score}`}
                    data-label={label(score, group)}
                    data-testid={`score-${group}-${score}`}
                  >
                    {estimate(f, row[group][score])}
                  </td>
                )),
              ])}
            </tr>
          )}
        />
      </tbody>
    </table>
  );
}
