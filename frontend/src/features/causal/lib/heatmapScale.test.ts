import { describe, expect, it } from 'vitest';

import { heatColor } from './heatmapScale';

/** Relative luminance (WCAG), to check that the scale darkens steadily. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

describe('the heatmap scale', () => {
  it('runs from near white to dark blue, clamped at both ends', () => {
    expect(heatColor(0)).toBe('#ffffd9');
    expect(heatColor(1)).toBe('#081d58');
    expect(heatColor(-0.3)).toBe('#ffffd9');
    expect(heatColor(2)).toBe('#081d58');
    expect(heatColor(Number.NaN)).toBe('#ffffd9');
  });

  it('darkens steadily, so that it reads in grey and for colour-blind readers', () => {
    const steps = Array.from({ length: 21 }, (_, i) => luminance(heatColor(i / 20)));
    for (let i = 1; i < steps.length; i += 1) expect(steps[i]).toBeLessThan(steps[i - 1]!);
  });
});
