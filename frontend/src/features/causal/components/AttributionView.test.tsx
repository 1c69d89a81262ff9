import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { makeAttributionResult } from '../../../test/causalFactories';
import { f, renderView } from '../../../test/causalRender';
import { AttributionView } from './AttributionView';

describe('the attribution view', () => {
  it('sets suppressing and amplifying the selected keys beside the random control', () => {
    renderView(<AttributionView result={makeAttributionResult()} f={f} fileBase="demo" />);
    const view = screen.getByTestId('attribution-result');
    expect(view).toHaveAccessibleName('Knowledge attribution result');
    const effects = screen.getByTestId('attribution-effects');
    const suppress = within(effects).getByRole('row', { name: /Suppress/ });
    expect(within(suppress).getByRole('rowheader')).toHaveTextContent('Suppress (×0)');
    expect(suppress.querySelector('[data-column="selected"]')).toHaveTextContent('-29.0%');
    expect(suppress.querySelector('[data-column="control"]')).toHaveTextContent('-1.5%');
    const amplify = within(effects).getByRole('row', { name: /Amplify/ });
    expect(amplify.querySelector('[data-column="selected"]')).toHaveTextContent('+41.0%');
    expect(amplify.querySelector('[data-column="control"]')).toHaveTextContent('+1.2%');
    const chart = screen.getByTestId('chart-attribution-effects');
    expect(chart.querySelectorAll('g.bar')).toHaveLength(4);
    expect(
      chart.querySelector('g[data-group="suppress"] g.bar[data-series="control"]'),
    ).toHaveAttribute('data-value', '-0.015');
    expect(screen.getByTestId('attribution-anchor')).toHaveTextContent(
      "lowers the answer's probability by about 29%, against about 1.5% for random neurons",
    );
  });

  it('gives each prompt its p and its top attributions, and links the selected keys', () => {
    renderView(<AttributionView result={makeAttributionResult()} f={f} fileBase="demo" />);
    const prompts = screen.getByTestId('attribution-prompts');
    expect(within(prompts).getByRole('row', { name: /located in the city of/ })).toHaveTextContent(
      'The Eiffel Tower is located in the city of37%0.312',
    );
    const selected = screen.getByTestId('attribution-selected');
    expect(selected).toHaveTextContent('2 keys kept by at least 70.0% of the 2 prompts');
    expect(within(selected).getByRole('link', { name: 'L3 · key 12' })).toHaveAttribute(
      'href',
      '/manage/review/keys/501',
    );
    expect(within(selected).getByText('L4 · key 400')).toBeInTheDocument();
    const top = screen.getAllByTestId('attribution-top')[0]!;
    expect(within(top).getByRole('link', { name: 'L3 · key 12' })).toBeInTheDocument();
  });

  it('says so when no key was selected', () => {
    renderView(
      <AttributionView
        result={makeAttributionResult({ selected: [], control_keys: [], effects: null })}
        f={f}
        fileBase="demo"
      />,
    );
    expect(screen.getByTestId('attribution-selected')).toHaveTextContent(
      'No key was kept by enough of the prompts',
    );
    expect(screen.queryByTestId('attribution-effects')).not.toBeInTheDocument();
  });

  it('gives no control, and says why, where no random group as large exists', () => {
    const base = makeAttributionResult();
    const effects = base.effects!;
    const note = 'layer 3: 600 of its 1024 keys are selected, over half: no random group as large';
    renderView(
      <AttributionView
        result={makeAttributionResult({
          control_keys: [],
          control_note: note,
          effects: {
            suppress: {
              ...effects.suppress,
              control: null,
              per_prompt: { ...effects.suppress.per_prompt, control: null },
            },
            amplify: {
              ...effects.amplify,
              control: null,
              per_prompt: { ...effects.amplify.per_prompt, control: null },
            },
          },
        })}
        f={f}
        fileBase="demo"
      />,
    );
    const table = screen.getByTestId('attribution-effects');
    const suppress = within(table).getByRole('row', { name: /Suppress/ });
    expect(suppress.querySelector('[data-column="selected"]')).toHaveTextContent('-29.0%');
    expect(suppress.querySelector('[data-column="control"]')).toHaveTextContent('not available');
    const amplify = within(table).getByRole('row', { name: /Amplify/ });
    expect(amplify.querySelector('[data-column="control"]')).toHaveTextContent('not available');
    expect(screen.getByTestId('attribution-control-note')).toHaveTextContent(note);
    const chart = screen.getByTestId('chart-attribution-effects');
    expect(chart.querySelectorAll('g.bar')).toHaveLength(2);
    expect(chart.querySelectorAll('g.bar[data-series="control"]')).toHaveLength(0);
  });

  it('gives no control note where the control exists', () => {
    renderView(<AttributionView result={makeAttributionResult()} f={f} fileBase="demo" />);
    expect(screen.queryByTestId('attribution-control-note')).not.toBeInTheDocument();
  });
});
