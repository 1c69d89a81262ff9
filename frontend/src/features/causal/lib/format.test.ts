import { describe, expect, it } from 'vitest';

import { makeCausalFormatters } from './format';

const f = makeCausalFormatters('en');

describe('the probes’ numbers', () => {
  it('give a probability or an effect to three significant digits, a tiny one as 0%', () => {
    expect(f.probability(0.087)).toBe('8.7%');
    expect(f.probability(0.000312)).toBe('0.0312%');
    expect(f.probability(0.00007)).toBe('0.01%');
    expect(f.probability(1e-12)).toBe('0%');
    expect(f.probability(-1e-12)).toBe('0%');
    expect(f.probability(null)).toBe('—');
  });

  it('sign a change, and give an interval with its ends', () => {
    expect(f.delta(-0.42)).toBe('-0.420');
    expect(f.delta(0.031)).toBe('+0.031');
    expect(f.change(-0.29)).toBe('-29.0%');
    expect(f.interval({ mean: -0.42, low: -0.53, high: 0.01 })).toBe('-0.420 [-0.530, +0.010]');
    expect(f.interval(null)).toBe('—');
  });
});
