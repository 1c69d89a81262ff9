import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { makePrefix } from '../test/factories';
import { PrefixText, splitAtSpan } from './PrefixText';

function shown(text: string, trigger: string, span: [number, number] | null, isCausal = true) {
  const prefix = makePrefix(1, {
    text,
    trigger_token: trigger,
    suffix: ' Mozart wrote it.',
    trigger_start: span?.[0] ?? null,
    trigger_end: span?.[1] ?? null,
  });
  render(<PrefixText prefix={prefix} isCausal={isCausal} />);
  const element = screen.getByTestId('prefix-text');
  return {
    text: element.textContent,
    marks: Array.from(element.querySelectorAll('mark')).map((mark) => mark.textContent),
  };
}

describe('PrefixText', () => {
  it('marks the trigger in place from its span, written as in the text, once', () => {
    // MiniLM is uncased: it decodes "Marriage" as "marriage".
    expect(shown('The Marriage', 'marriage', [4, 12])).toEqual({
      text: 'The Marriage',
      marks: ['Marriage'],
    });
  });

  it('keeps what follows the span and the greyed rest of an encoder sentence', () => {
    expect(shown('World War II ', 'war', [6, 9], false)).toEqual({
      text: 'World War II  Mozart wrote it.',
      marks: ['War'],
    });
  });

  it('counts the span in code points, as the server does, past characters outside the BMP', () => {
    // "😀" is one code point but two UTF-16 units.
    expect(shown('Fun 😀 Émile', 'emile', [6, 11])).toEqual({
      text: 'Fun 😀 Émile',
      marks: ['Émile'],
    });
  });

  it('falls back to matching the decoded token at the end of the text without a span', () => {
    expect(shown('The opera Figaro', ' Figaro', null)).toEqual({
      text: 'The opera Figaro',
      marks: [' Figaro'],
    });
    // Without a span a lowercased token cannot be found in the text: shown after it.
    expect(splitAtSpan('The Marriage', null, null)).toBeNull();
  });

  it('ignores a span that does not fit the text', () => {
    expect(splitAtSpan('short', 2, 9)).toBeNull();
    expect(splitAtSpan('short', 3, 3)).toBeNull();
    expect(splitAtSpan('short', -1, 2)).toBeNull();
    expect(splitAtSpan('short', 0, 5)).toEqual(['', 'short', '']);
  });
});
