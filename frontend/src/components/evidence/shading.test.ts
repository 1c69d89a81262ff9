import { describe, expect, it } from 'vitest';

import {
  contrastRatio,
  hasTokens,
  SHADE_SCHEMES,
  shadeColour,
  shadeShare,
  triggerIndex,
} from './shading';

const SHARES = Array.from({ length: 41 }, (_, i) => -1 + i / 20);

describe('token shading', () => {
  it('normalises to the key scale and keeps the sign, clamped to [-1, 1]', () => {
    expect(shadeShare(2, 8)).toBe(0.25);
    expect(shadeShare(-4, 8)).toBe(-0.5);
    expect(shadeShare(12, 8)).toBe(1);
    expect(shadeShare(-20, 8)).toBe(-1);
    // No scale (a key without its maximum, or a dead key): nothing is shaded.
    expect(shadeShare(3, 0)).toBe(0);
    expect(shadeShare(3, null)).toBe(0);
  });

  it('shades positive and negative values in two hues, darker as they grow', () => {
    const { light } = SHADE_SCHEMES;
    expect(shadeColour(0, light)).toEqual(light.base);
    expect(shadeColour(1, light)).toEqual(light.positive);
    expect(shadeColour(-1, light)).toEqual(light.negative);
    const [r, , b] = shadeColour(0.5, light);
    const [r2, , b2] = shadeColour(-0.5, light);
    // Blue above zero, orange below.
    expect(b).toBeGreaterThan(r);
    expect(r2).toBeGreaterThan(b2);
    expect(contrastRatio(shadeColour(0.8, light), light.base)).toBeGreaterThan(
      contrastRatio(shadeColour(0.2, light), light.base),
    );
  });

  it('keeps the text readable (WCAG AA, 4.5:1) on every shade in both schemes', () => {
    for (const scheme of [SHADE_SCHEMES.light, SHADE_SCHEMES.dark]) {
      for (const share of SHARES) {
        expect(
          contrastRatio(scheme.ink, shadeColour(share, scheme)),
          String(share),
        ).toBeGreaterThanOrEqual(4.5);
      }
    }
  });

  it('tells the two ends apart in lightness too, not by hue alone', () => {
    // Under a colour-vision deficiency hue can fade; the two strongest shades still differ
    // from the unshaded surface by a clear step of lightness.
    for (const scheme of [SHADE_SCHEMES.light, SHADE_SCHEMES.dark]) {
      expect(contrastRatio(scheme.positive, scheme.base)).toBeGreaterThan(1.8);
      expect(contrastRatio(scheme.negative, scheme.base)).toBeGreaterThan(1.8);
    }
  });

  it('finds the trigger: the last token of a causal prefix, in an encoder sentence by its position', () => {
    // The stored tokens leave out [CLS] and [SEP]; the position counts them.
    const example = {
      tokens: ['the', 'war', 'ended', '.'],
      token_coefficients: [0, 1, 2, 3],
      position: 2,
      trigger_token: 'war',
    };
    expect(triggerIndex(example, false)).toBe(1);
    expect(triggerIndex(example, true)).toBe(3);
    // A repeated token: the one at the position less the leading [CLS].
    expect(triggerIndex({ ...example, tokens: ['war', 'war', '.'], position: 1 }, false)).toBe(0);
    // A model without leading specials.
    expect(triggerIndex({ ...example, position: 1 }, false)).toBe(1);
    // Nothing reads as the trigger: the position itself, or the last token.
    expect(triggerIndex({ ...example, trigger_token: 'peace' }, false)).toBe(2);
    expect(triggerIndex({ ...example, trigger_token: 'peace', position: 9 }, false)).toBe(3);
  });

  it('shades only examples whose tokens and coefficients match one to one', () => {
    expect(hasTokens({ tokens: ['a', 'b'], token_coefficients: [1, 2] })).toBe(true);
    expect(hasTokens({ tokens: ['a', 'b'], token_coefficients: [1] })).toBe(false);
    expect(hasTokens({ tokens: [], token_coefficients: [] })).toBe(false);
    expect(hasTokens({})).toBe(false);
  });
});
