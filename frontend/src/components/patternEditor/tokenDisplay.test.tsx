import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import {
  decodeUtf8Runs,
  parseHexBytes,
  textParts,
  TokenText,
  tokenParts,
  VisibleText,
} from './tokenDisplay';
import type { Part } from './tokenDisplay';

/** The parts as a string: marks as their glyph in brackets, text as it is. */
function shape(parts: Part[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : `[${part.glyph}]`)).join('');
}

describe('tokenParts', () => {
  it('shows a whitespace token as visible marks, and an empty one as ∅', () => {
    expect(shape(tokenParts(' '))).toBe('[␣]');
    expect(shape(tokenParts('\n'))).toBe('[⏎]');
    expect(shape(tokenParts('  \t'))).toBe('[␣][␣][⇥]');
    expect(shape(tokenParts(''))).toBe('[∅]');
  });

  it("keeps a word's leading space as a space, and marks line breaks and invisible characters anywhere", () => {
    expect(shape(tokenParts(' the'))).toBe(' the');
    expect(shape(tokenParts('end\n'))).toBe('end[⏎]');
    expect(shape(tokenParts('a\u00a0b'))).toBe('a[⟨U+00A0⟩]b');
    expect(shape(tokenParts('\u200b'))).toBe('[⟨U+200B⟩]');
  });

  it('shows the raw bytes of a token that is part of a character, where they are known', () => {
    // "α" is CE B1 in UTF-8: a byte-level BPE may split it across two tokens.
    expect(shape(tokenParts('\uFFFD', 'ce'))).toBe('[⟨0xCE⟩]');
    // A space then a lone lead byte: the space is text, the byte a mark.
    expect(shape(tokenParts(' \uFFFD', '20ce'))).toBe(' [⟨0xCE⟩]');
    // Whole characters among the bytes decode as text.
    expect(shape(tokenParts('\uFFFD', 'ceb1e2'))).toBe('α[⟨0xE2⟩]');
  });

  it('shows ⟨?⟩ where the bytes of such a token are unknown', () => {
    expect(shape(tokenParts('\uFFFD'))).toBe('[⟨?⟩]');
    expect(shape(tokenParts('\uFFFD', 'zz'))).toBe('[⟨?⟩]');
    const [mark] = tokenParts('\uFFFD', null);
    expect(mark).toMatchObject({ type: 'mark', kind: 'unknownBytes' });
  });

  it('marks bidirectional controls instead of applying them', () => {
    expect(shape(tokenParts('\u202E'))).toBe('[⟨RLO⟩]');
  });
});

describe('textParts', () => {
  it('replaces every bidirectional control by a mark and keeps all other text', () => {
    expect(shape(textParts('abc\u202Edef\u202C ghi'))).toBe('abc[⟨RLO⟩]def[⟨PDF⟩] ghi');
    expect(shape(textParts('plain  text\n'))).toBe('plain  text\n');
  });
});

describe('bytes', () => {
  it('parses hex and refuses anything else', () => {
    expect(parseHexBytes('CEb1')).toEqual([0xce, 0xb1]);
    expect(parseHexBytes('abc')).toBeNull();
    expect(parseHexBytes('')).toBeNull();
    expect(parseHexBytes(null)).toBeNull();
  });

  it('decodes whole UTF-8 characters and keeps every other byte', () => {
    expect(decodeUtf8Runs([0x61, 0xf0, 0x9f, 0x98, 0x80, 0xb1])).toEqual(['a', '😀', 0xb1]);
    // Overlong and surrogate forms are not characters.
    expect(decodeUtf8Runs([0xc0, 0x80])).toEqual([0xc0, 0x80]);
    expect(decodeUtf8Runs([0xed, 0xa0, 0x80])).toEqual([0xed, 0xa0, 0x80]);
  });
});

describe('TokenText and VisibleText', () => {
  it('give every mark its explanation on hover and to a screen reader', () => {
    render(<TokenText token={' \uFFFD'} bytes="20ce" />);
    const mark = screen.getByTestId('glyph-mark');
    expect(mark).toHaveAttribute('title', expect.stringContaining('0xCE'));
    expect(mark).toHaveTextContent('⟨0xCE⟩');
    expect(mark.closest('bdi')).toHaveAttribute('title', 'Raw bytes: 0x20 0xCE');
  });

  it('isolate text in a bdi and never put a bidi control in the page', () => {
    const { container } = render(<VisibleText text={'evil\u202Etxt.exe'} />);
    expect(container.querySelector('bdi')).not.toBeNull();
    expect(container.textContent).not.toContain('\u202E');
    expect(screen.getByTestId('glyph-mark')).toHaveAttribute(
      'title',
      expect.stringContaining('RLO'),
    );
  });
});
