import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { makePrefix } from '../../test/factories';
import { ExampleText } from './ExampleText';
import { SHADE_SCHEMES, cssRgb, shadeColour } from './shading';

const causal = makePrefix(1, {
  text: 'The cat sat',
  trigger_token: ' sat',
  position: 2,
});
const tokens = { tokens: ['The', ' cat', ' sat'], token_coefficients: [0.5, -1, 2] };

describe('ExampleText with shading', () => {
  it('shades each token on the key scale, not the example own maximum', () => {
    render(
      <ExampleText example={{ ...causal, ...tokens }} isCausal shading={{ on: true, max: 4 }} />,
    );
    const shaded = screen.getAllByTestId('shaded-token');
    expect(shaded.map((token) => token.textContent?.replace(/[-−\d.,]+$/, ''))).toEqual([
      'The',
      ' cat',
      ' sat',
    ]);
    // 2 of a key maximum of 4 is half the scale (the example's own maximum is 2).
    expect(shaded.map((token) => token.dataset.share)).toEqual(['0.125', '-0.250', '0.500']);
    expect(shaded[2]!.style.getPropertyValue('--shade-light')).toBe(
      cssRgb(shadeColour(0.5, SHADE_SCHEMES.light)),
    );
    expect(shaded[1]!.style.getPropertyValue('--shade-light')).toBe(
      cssRgb(shadeColour(-0.25, SHADE_SCHEMES.light)),
    );
  });

  it('gives each token its value on hover and as a label for the keyboard', () => {
    render(
      <ExampleText example={{ ...causal, ...tokens }} isCausal shading={{ on: true, max: 4 }} />,
    );
    const shaded = screen.getAllByTestId('shaded-token');
    expect(shaded[1]).toHaveAttribute('title', 'Coefficient -1');
    expect(within(shaded[2]!).getByTestId('shade-value')).toHaveTextContent('2');
  });

  it('keeps the trigger marked: the last token of a causal prefix', () => {
    render(
      <ExampleText example={{ ...causal, ...tokens }} isCausal shading={{ on: true, max: 4 }} />,
    );
    const shaded = screen.getAllByTestId('shaded-token');
    expect(shaded.map((token) => token.classList.contains('shade-trigger'))).toEqual([
      false,
      false,
      true,
    ]);
  });

  it('covers an encoder whole sentence, the tokens after the trigger set apart', () => {
    const encoder = {
      // Position 2 counts the [CLS] that the tokens leave out.
      ...makePrefix(1, { text: 'the war', trigger_token: 'war', suffix: ' ended .', position: 2 }),
      tokens: ['the', 'war', 'ended', '.'],
      token_coefficients: [0.1, 3, 0.2, 0],
    };
    render(<ExampleText example={encoder} isCausal={false} shading={{ on: true, max: 3 }} />);
    const shaded = screen.getAllByTestId('shaded-token');
    expect(shaded).toHaveLength(4);
    expect(shaded[1]).toHaveClass('shade-trigger');
    expect(shaded.slice(2).every((token) => token.classList.contains('shade-after'))).toBe(true);
    expect(shaded.slice(0, 2).some((token) => token.classList.contains('shade-after'))).toBe(false);
  });

  it('shows the text as before where shading is off or the tokens are missing', () => {
    const { unmount } = render(
      <ExampleText example={{ ...causal, ...tokens }} isCausal shading={{ on: false, max: 4 }} />,
    );
    expect(screen.queryAllByTestId('shaded-token')).toHaveLength(0);
    expect(screen.getByTestId('prefix-text')).toHaveTextContent('The cat sat');
    unmount();
    render(<ExampleText example={causal} isCausal shading={{ on: true, max: 4 }} />);
    expect(screen.queryAllByTestId('shaded-token')).toHaveLength(0);
    expect(screen.getByTestId('prefix-text').querySelector('mark.trigger')).toHaveTextContent(
      'sat',
    );
  });
});
