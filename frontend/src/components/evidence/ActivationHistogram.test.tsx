import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { ActivationHistogram } from './ActivationHistogram';

describe('ActivationHistogram', () => {
  it('draws one bar per bin, taller for more, with the density and the range', () => {
    render(
      <ActivationHistogram
        histogram={{ edges: [-1, 0, 1, 2], counts: [9, 100, 0] }}
        density={0.125}
      />,
    );
    const bars = screen.getAllByTestId('histogram-bar');
    expect(bars.map((bar) => bar.dataset.count)).toEqual(['9', '100', '0']);
    const heights = bars.map((bar) => Number(bar.getAttribute('height')));
    expect(heights[1]).toBeGreaterThan(heights[0]!);
    expect(heights[2]).toBe(0);
    expect(screen.getByTestId('density')).toHaveTextContent('12.5%');
    // The bins as a table for screen readers.
    expect(screen.getAllByRole('row')).toHaveLength(4);
    expect(screen.getByRole('cell', { name: '0 – 1' })).toBeInTheDocument();
  });

  it('leaves out a malformed histogram and shows nothing without either', () => {
    const { container, rerender } = render(
      <ActivationHistogram histogram={{ edges: [0, 1], counts: [1, 2] }} density={0.5} />,
    );
    expect(screen.queryAllByTestId('histogram-bar')).toHaveLength(0);
    expect(screen.getByTestId('density')).toBeInTheDocument();
    rerender(<ActivationHistogram histogram={null} density={null} />);
    expect(container).toBeEmptyDOMElement();
  });
});
