import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { SampleFolds } from './ExampleFolds';
import type { SampleExample } from './ExampleFolds';

function sample(index: number, kind: 'band' | 'random', band: number | null): SampleExample {
  const low = band === null ? null : (band - 1) * 2;
  return {
    kind,
    band,
    band_low: low,
    band_high: low === null ? null : low + 2,
    coefficient: low === null ? 0.3 : low + 1,
    text: `sample ${index} ends here`,
    trigger_token: ' here',
    suffix: '',
    trigger_start: null,
    trigger_end: null,
    trigger_token_bytes: '',
    sentence_index: 100 + index,
    position: 3,
    tokens: ['sample', ` ${index}`, ' ends', ' here'],
    token_coefficients: [0, 0.5, -0.5, low === null ? 0.3 : low + 1],
  };
}

// Band 1 and 2 (out of order), one random sentence.
const SAMPLES = [
  sample(1, 'band', 1),
  sample(2, 'band', 2),
  sample(3, 'band', 2),
  sample(4, 'random', null),
];

describe('SampleFolds', () => {
  it('folds the samples by band, the highest first, each with its range, then the random ones', () => {
    render(<SampleFolds samples={SAMPLES} isCausal shading={{ on: true, max: 10 }} />);
    const folds = screen.getAllByTestId('sample-fold');
    expect(folds.map((fold) => fold.dataset.fold)).toEqual(['band-2', 'band-1', 'random']);
    expect(within(folds[0]!).getByText(/Band 2/)).toBeInTheDocument();
    expect(folds[0]!.querySelector('summary')).toHaveTextContent('Band 2 2 – 4 · 2 sentences');
    expect(folds[2]!.querySelector('summary')).toHaveTextContent('Random sentences 1 sentence');
    // Closed until opened.
    expect(folds.every((fold) => !(fold as HTMLDetailsElement).open)).toBe(true);
  });

  // jsdom does not open a <details> from the keyboard; Chromium does (tests/e2e/test_evidence.py).
  it('opens a fold and shades its examples on the key scale', async () => {
    const user = userEvent.setup();
    render(<SampleFolds samples={SAMPLES} isCausal shading={{ on: true, max: 10 }} />);
    const fold = screen.getAllByTestId('sample-fold')[0] as HTMLDetailsElement;
    await user.click(fold.querySelector('summary')!);
    expect(fold.open).toBe(true);
    const rows = within(fold).getAllByTestId('example-row');
    expect(rows).toHaveLength(2);
    // Rows take focus (their values show by keyboard); none is an option of the prefix list.
    expect(rows[0]).toHaveAttribute('tabindex', '0');
    expect(rows[0]).not.toHaveAttribute('role', 'option');
    expect(within(rows[0]!).getAllByTestId('shaded-token').at(-1)!.dataset.share).toBe('0.300');
  });

  it('shows nothing where the key has no samples', () => {
    const { container } = render(
      <SampleFolds samples={[]} isCausal shading={{ on: true, max: 10 }} />,
    );
    expect(container).toBeEmptyDOMElement();
  });
});
