import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import i18n from '../../../i18n';
import { makePrefix } from '../../../test/factories';
import { isAlmostNeverActive } from '../lib/keyActivity';
import { KeyActivityNotice } from './KeyActivityNotice';
import {
  exactNumber,
  formatCoefficient,
  formatProbability,
} from '../../../components/patternEditor/numbers';
import { PrefixList } from './PrefixList';
import { initialSelection } from '../../../components/patternEditor/selection';
import { ValueTokens } from '../../../components/patternEditor/ValueTokens';

// A quiet key: one prefix above 0, then 24 just below it (which must not read "-0").
const quiet = [
  makePrefix(1, { coefficient: 0.031 }),
  ...Array.from({ length: 24 }, (_, i) => makePrefix(i + 2, { coefficient: -0.00017 - i * 1e-5 })),
];

describe('numbers', () => {
  it('writes a tiny coefficient with its digits, never as -0 or 0', () => {
    expect(formatCoefficient(-0.00017, 'en')).toBe('-1.7E-4');
    expect(formatCoefficient(0.0004, 'en')).toBe('4E-4');
    expect(formatCoefficient(-0.0012, 'en')).toBe('-0.001');
    expect(formatCoefficient(7.19, 'en')).toBe('7.19');
    expect(formatCoefficient(0, 'en')).toBe('0');
  });

  it('writes small probabilities with two significant digits, the exact value aside', () => {
    expect(formatProbability(4e-5, 'en')).toBe('0.004%');
    expect(formatProbability(0.000103, 'en')).toBe('0.01%');
    expect(formatProbability(9.5e-5, 'en')).toBe('0.0095%');
    expect(formatProbability(0.0042, 'en')).toBe('0.42%');
    expect(formatProbability(0.4567, 'en')).toBe('45.7%');
    expect(formatProbability(3e-9, 'en')).toBe('<0.0001%');
    expect(formatProbability(0, 'en')).toBe('0%');
    expect(exactNumber(4e-5)).toBe('4e-5');
    expect(exactNumber(0.25)).toBe('0.25');
  });
});

describe('a key that is almost never active', () => {
  it('is one with fewer than 3 positive prefixes among its top ones', () => {
    expect(isAlmostNeverActive(quiet)).toBe(true);
    expect(isAlmostNeverActive(quiet.map((p) => ({ ...p, coefficient: 0 })))).toBe(true);
    const three = quiet.map((p) => (p.rank <= 3 ? { ...p, coefficient: 0.01 } : p));
    expect(isAlmostNeverActive(three)).toBe(false);
    expect(isAlmostNeverActive(Array.from({ length: 25 }, (_, i) => makePrefix(i + 1)))).toBe(
      false,
    );
    // Two prefixes in all, both active: a small corpus, not a quiet key.
    expect(isAlmostNeverActive([makePrefix(1), makePrefix(2)])).toBe(false);
    expect(isAlmostNeverActive([])).toBe(false);
  });

  it('says so on the key, in English and in Chinese', async () => {
    const { rerender } = render(<KeyActivityNotice prefixes={quiet} />);
    const notice = screen.getByTestId('almost-never-active');
    expect(notice).toHaveTextContent('This key is almost never active in this corpus.');
    expect(notice).toHaveTextContent('Only 1 of its 25 top prefixes has a positive coefficient');
    await i18n.changeLanguage('zh-CN');
    rerender(<KeyActivityNotice prefixes={quiet} />);
    expect(screen.getByTestId('almost-never-active')).toHaveTextContent('几乎从不激活');
  });

  it('says nothing on a key that fires', () => {
    render(
      <KeyActivityNotice prefixes={Array.from({ length: 25 }, (_, i) => makePrefix(i + 1))} />,
    );
    expect(screen.queryByTestId('almost-never-active')).toBeNull();
  });

  it('shows each inactive coefficient as such, with its digits', () => {
    render(
      <PrefixList
        prefixes={quiet}
        isCausal
        selection={initialSelection()}
        dispatch={() => undefined}
        patterns={[]}
        labels={new Map()}
        readOnly={false}
      />,
    );
    const values = screen.getAllByTestId('coefficient').map((el) => el.textContent);
    expect(values[0]).toBe('0.031');
    expect(values[1]).toBe('-1.7E-4');
    expect(values).not.toContain('-0');
    const second = screen.getAllByTestId('prefix-row')[1]!;
    expect(within(second).getByTitle(/not active/)).toHaveAttribute(
      'title',
      'Memory coefficient -1.7e-4: not active (0 or below)',
    );
  });
});

describe('value tokens', () => {
  it('never print 0.0% for a probability of 4e-5', () => {
    render(
      <ValueTokens
        tokens={[
          { token: ' Paris', probability: 0.5 },
          { token: ' basics', probability: 4e-5 },
        ]}
      />,
    );
    const shown = screen.getAllByTestId('value-token-probability');
    expect(shown.map((el) => el.textContent)).toEqual(['50%', '0.004%']);
    expect(shown[1]).toHaveAttribute('title', 'Probability 4e-5');
  });
});
