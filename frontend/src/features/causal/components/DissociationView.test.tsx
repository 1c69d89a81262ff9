import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { makeDissociationResult } from '../../../test/causalFactories';
import { captureDownloads, f, renderView } from '../../../test/causalRender';
import { DissociationView } from './DissociationView';

describe('the dissociation view', () => {
  it('gives the 2×2 table, the interaction with its sign, and the verdict', () => {
    renderView(<DissociationView result={makeDissociationResult()} f={f} fileBase="demo" />);
    const view = screen.getByTestId('dissociation-table');
    expect(view).toHaveAccessibleName('Double dissociation result');
    const cells = screen.getByTestId('dissociation-cells');
    expect(
      within(cells)
        .getAllByRole('columnheader')
        .map((th) => th.textContent),
    ).toEqual(['Prefix set P (120 prefixes)', 'Prefix set Q (130 prefixes)']);
    expect(
      within(cells).getByRole('rowheader', { name: 'Group A ablated (2 keys)' }),
    ).toBeInTheDocument();
    expect(cells.querySelector('[data-cell="ap"]')).toHaveTextContent('+0.800 [+0.600, +1.000]');
    expect(cells.querySelector('[data-cell="aq"]')).toHaveTextContent('+0.100 [0.000, +0.200]');
    expect(cells.querySelector('[data-cell="bp"]')).toHaveTextContent('+0.050 [-0.020, +0.120]');
    expect(cells.querySelector('[data-cell="bq"]')).toHaveTextContent('+0.500 [+0.350, +0.660]');
    const interaction = screen.getByTestId('dissociation-interaction');
    expect(interaction).toHaveAttribute('data-sign', '1');
    expect(interaction).toHaveTextContent(
      'Interaction (A on P − A on Q) − (B on P − B on Q): +1.150 [+0.900, +1.400], positive. Its 95% interval excludes 0.',
    );
    const verdict = screen.getByTestId('dissociation-verdict');
    expect(verdict).toHaveAttribute('data-double', 'true');
    expect(verdict).toHaveTextContent(/^A double dissociation: ablating A costs more on P/);
    expect(screen.getByTestId('dissociation-anchor')).toHaveTextContent(
      "each group's ablation breaks only its own task",
    );
    expect(screen.getByTestId('chart-dissociation').querySelectorAll('g.whisker')).toHaveLength(4);
  });

  it('says when the interaction is negative and there is no double dissociation', () => {
    renderView(
      <DissociationView
        result={makeDissociationResult({
          interaction: { mean: -0.2, low: -0.5, high: 0.1, sign: -1, excludes_zero: false },
          a_p_minus_a_q: { mean: -0.1, low: -0.3, high: 0.1 },
          double_dissociation: false,
        })}
        f={f}
        fileBase="demo"
      />,
    );
    expect(screen.getByTestId('dissociation-interaction')).toHaveTextContent(
      '-0.200 [-0.500, +0.100], negative. Its 95% interval includes 0.',
    );
    expect(screen.getByTestId('dissociation-verdict')).toHaveTextContent(
      /^Not a double dissociation: A on P − A on Q is -0.100/,
    );
  });

  it('links the groups’ keys and downloads the table as CSV', async () => {
    const user = userEvent.setup();
    const saved = captureDownloads();
    renderView(<DissociationView result={makeDissociationResult()} f={f} fileBase="demo" />);
    expect(screen.getByRole('link', { name: 'L4 · key 7' })).toHaveAttribute(
      'href',
      '/manage/review/keys/502',
    );
    await user.click(
      screen.getByRole('button', {
        name: 'Download Loss change per group and prefix set as CSV',
      }),
    );
    expect(saved[0]?.name).toBe('demo-dissociation.csv');
    const text = await saved[0]!.blob.text();
    expect(text.split('\r\n').slice(0, 3)).toEqual([
      'row,set,n,mean,low,high,sign',
      'a,p,120,0.8,0.6,1,',
      'a,q,130,0.1,0,0.2,',
    ]);
    expect(text).toContain('interaction,,,1.15,0.9,1.4,1');
  });

  it('says "not available" where a log-probability is not finite, and leaves the verdict open', async () => {
    const user = userEvent.setup();
    const saved = captureDownloads();
    const base = makeDissociationResult();
    renderView(
      <DissociationView
        result={makeDissociationResult({
          table: { ...base.table, a: { p: null, q: base.table.a.q } },
          interaction: null,
          a_p_minus_a_q: null,
          b_q_minus_b_p: null,
          double_dissociation: false,
        })}
        f={f}
        fileBase="demo"
      />,
    );
    const cells = screen.getByTestId('dissociation-cells');
    expect(cells.querySelector('[data-cell="ap"]')).toHaveTextContent('not available');
    expect(cells.querySelector('[data-cell="bq"]')).toHaveTextContent('+0.500 [+0.350, +0.660]');
    const interaction = screen.getByTestId('dissociation-interaction');
    expect(interaction).not.toHaveAttribute('data-sign');
    expect(interaction).toHaveTextContent(
      'Interaction (A on P − A on Q) − (B on P − B on Q): not available',
    );
    const verdict = screen.getByTestId('dissociation-verdict');
    expect(verdict).toHaveAttribute('data-double', 'undecided');
    expect(verdict).toHaveTextContent(/cannot be decided/);
    expect(verdict).toHaveTextContent('A on P − A on Q is not available');
    expect(screen.getByTestId('chart-dissociation').querySelectorAll('g.whisker')).toHaveLength(3);
    await user.click(
      screen.getByRole('button', {
        name: 'Download Loss change per group and prefix set as CSV',
      }),
    );
    const text = await saved[0]!.blob.text();
    expect(text.split('\r\n')).toContain('a,p,120,,,,');
    expect(text.split('\r\n')).toContain('interaction,,,,,,');
    expect(text.split('\r\n')).toContain('a_p_minus_a_q,,,,,,');
  });
});
