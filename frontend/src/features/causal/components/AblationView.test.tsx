import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { makeAblationResult } from '../../../test/causalFactories';
import { captureDownloads, f, renderView } from '../../../test/causalRender';
import { AblationView } from './AblationView';

describe('the ablation view', () => {
  it('gives per prefix set the ablated keys beside the random control, overall and per layer', () => {
    renderView(<AblationView result={makeAblationResult()} f={f} fileBase="demo" />);
    const view = screen.getByTestId('ablation-result');
    expect(view).toHaveAccessibleName('Key ablation result');
    // The keys' own prefixes first, then random ones.
    const sets = within(view).getAllByRole('heading', { level: 3 });
    expect(sets[0]).toHaveTextContent("On the keys' own trigger prefixes (40 prefixes)");
    const own = screen.getByTestId('ablation-own-layers');
    const headers = within(own)
      .getAllByRole('columnheader')
      .map((th) => th.textContent);
    expect(headers).toEqual(['Where', 'Prefixes', 'Ablated keys', 'Random keys (control)']);
    const overall = own.querySelector('tr[data-row="overall"]')!;
    expect(overall.querySelector('[data-column="ablated"]')).toHaveTextContent(
      '-0.420 [-0.530, -0.310]',
    );
    expect(overall.querySelector('[data-column="control"]')).toHaveTextContent(
      '-0.010 [-0.030, +0.010]',
    );
    expect(own.querySelector('tr[data-layer="3"]')).toHaveTextContent('Layer 340');
    // Random prefixes are no key's own: overall only, no layer or key rows, no chart.
    const random = screen.getByTestId('ablation-random-layers');
    expect(random.querySelectorAll('tbody tr')).toHaveLength(1);
    expect(random).toHaveTextContent('-0.020 [-0.040, 0.000]');
    expect(screen.queryByTestId('ablation-random-keys')).not.toBeInTheDocument();
    expect(screen.queryByTestId('chart-ablation-random')).not.toBeInTheDocument();
    expect(screen.getByTestId('ablation-anchor')).toHaveTextContent('breaks only its own task');
  });

  it('gives per key its change and its value top token’s, the keys linked', () => {
    renderView(<AblationView result={makeAblationResult()} f={f} fileBase="demo" />);
    const keys = screen.getByTestId('ablation-own-keys');
    const row = keys.querySelector('tr[data-key="3:12"]')!;
    expect(within(row as HTMLElement).getByRole('link', { name: 'L3 · key 12' })).toHaveAttribute(
      'href',
      '/manage/review/keys/501',
    );
    expect(row.querySelector('[data-column="ablated"]')).toHaveTextContent(
      '-0.500 [-0.600, -0.400]',
    );
    expect(row.querySelector('[data-column="value-top-ablated"]')).toHaveTextContent(
      '-0.800 [-1.000, -0.600]',
    );
    expect(row).toHaveTextContent('“ the”');
    expect(
      within(keys.querySelector('tr[data-key="3:400"]') as HTMLElement).getByText('L3 · key 400'),
    ).toBeInTheDocument();
  });

  it('charts the layers on a signed axis, ablated beside control, and downloads their CSV', async () => {
    const user = userEvent.setup();
    const saved = captureDownloads();
    renderView(<AblationView result={makeAblationResult()} f={f} fileBase="demo-job3" />);
    const chart = screen.getByTestId('chart-ablation-own');
    expect(chart.querySelectorAll('g.series')).toHaveLength(2);
    const ticks = Array.from(chart.querySelectorAll('g.tick text')).map((t) => t.textContent);
    expect(ticks[0]).toMatch(/^-0\.\d/); // the scale goes below 0
    const figure = screen.getByTestId('figure-ablation-own');
    await user.click(
      within(figure).getByRole('button', {
        name: "Download Δ log p per layer on the keys' own trigger prefixes as CSV",
      }),
    );
    expect(saved[0]?.name).toBe('demo-job3-ablation-own.csv');
    expect(await saved[0]!.blob.text()).toBe(
      'layer,n,ablated_mean,ablated_low,ablated_high,control_mean,control_low,control_high\r\n' +
        '3,40,-0.42,-0.53,-0.31,-0.01,-0.03,0.01\r\n',
    );
  });
});
