import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import i18n from '../../../i18n';
import { makePatternScores, makeReport } from '../../../test/factories';
import { makeFormatters } from '../lib/format';
import { PatternScoresTable } from './PatternScoresTable';

describe('PatternScoresTable', () => {
  it('shows written, suggested and shuffled scores per layer, folding empty layers', async () => {
    await i18n.changeLanguage('en');
    render(<PatternScoresTable report={makeReport()} f={makeFormatters('en')} />);
    const table = screen.getByTestId('pattern-scores-table');
    const rows = within(table).getAllByTestId('pattern-scores-row');
    expect(rows).toHaveLength(2); // layer 1 and the overall row; layer 2 folded
    expect(within(table).getByTestId('folded-layers')).toHaveTextContent('no scored patterns');
    const first = rows[0]!;
    expect(within(first).getByRole('rowheader')).toHaveTextContent('Layer 1');
    expect(within(first).getByTestId('score-written-embedding')).toHaveTextContent(
      '0.820 [0.770, 0.870]',
    );
    expect(within(first).getByTestId('score-shuffled-detection')).toHaveTextContent('0.500');
    expect(within(first).getByTestId('score-suggestion-embedding')).toHaveTextContent('—');
    expect(within(table).getByRole('columnheader', { name: 'Written: detection' })).toBeVisible();
  });

  it('says so when no pattern has a score', () => {
    const scores = makePatternScores();
    const empty = { n: 0, detection: { mean: null, low: null, high: null } };
    const none = { ...empty, embedding: empty.detection };
    scores.overall = { written: none, suggestion: none, shuffled: none };
    render(
      <PatternScoresTable
        report={makeReport({ pattern_scores: scores })}
        f={makeFormatters('en')}
      />,
    );
    expect(screen.getByTestId('pattern-scores-empty')).toHaveTextContent('No pattern has a score');
  });

  it('speaks Chinese too', async () => {
    await i18n.changeLanguage('zh-CN');
    render(<PatternScoresTable report={makeReport()} f={makeFormatters('zh-CN')} />);
    expect(screen.getByRole('columnheader', { name: '打乱基线：嵌入' })).toBeVisible();
    await i18n.changeLanguage('en');
  });
});
