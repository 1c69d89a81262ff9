import { cleanup, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { makePrefix } from '../../test/factories';
import { PrefixText, splitAtSpan, splitTrigger } from './PrefixText';

function shown(
  text: string,
  trigger: string,
  span: [number, number] | null,
  isCausal = true,
  bytes = '',
) {
  const prefix = makePrefix(1, {
    text,
    trigger_token: trigger,
    trigger_token_bytes: bytes,
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
    // The token's leading space is the word's, not the trigger's: it is not highlighted.
    expect(shown('The opera Figaro', ' Figaro', null)).toEqual({
      text: 'The opera Figaro',
      marks: ['Figaro'],
    });
    expect(splitTrigger('The opera Figaro', ' Figaro')).toEqual(['The opera ', 'Figaro']);
    expect(splitTrigger('1 2\n', '\n')).toEqual(['1 2', '\n']);
    // Without a span a lowercased token cannot be found in the text: shown after it.
    expect(splitAtSpan('The Marriage', null, null)).toBeNull();
  });

  it('ignores a span that does not fit the text', () => {
    expect(splitAtSpan('short', 2, 9)).toBeNull();
    expect(splitAtSpan('short', 3, 3)).toBeNull();
    expect(splitAtSpan('short', -1, 2)).toBeNull();
    expect(splitAtSpan('short', 0, 5)).toEqual(['', 'short', '']);
  });

  it('shows a whitespace trigger as a visible mark, in place and without a span', () => {
    const inPlace = shown('Line one\n', '\n', [8, 9]);
    expect(inPlace.marks).toEqual(['⏎A line break']);
    cleanup();
    const matched = shown('two  ', ' ', null);
    expect(matched.marks).toEqual(['␣A space']);
  });

  it('shows a trigger that is part of a character as its bytes, or ⟨?⟩ where they are unknown', () => {
    // Decoded alone, the last byte of "é" (C3 A9) is U+FFFD: not found in the text.
    expect(shown('Café', '\ufffd', null, true, 'a9').marks).toEqual([
      expect.stringContaining('⟨0xA9⟩'),
    ]);
    cleanup();
    expect(shown('Café', '\ufffd', null).marks).toEqual([expect.stringContaining('⟨?⟩')]);
  });

  it('shows bidirectional controls as marks, and isolates the text', () => {
    const { container } = render(
      <PrefixText
        prefix={makePrefix(1, { text: 'abc\u202Edef', trigger_token: 'def' })}
        isCausal
      />,
    );
    const text = container.querySelector('[data-testid="prefix-text"]')!;
    expect(text.textContent).not.toContain('\u202E');
    expect(text.textContent).toContain('⟨RLO⟩');
  });
});
