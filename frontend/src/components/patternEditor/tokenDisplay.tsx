// How tokens and corpus text are shown so that nothing in them is invisible or acts on
// the page: a whitespace token is a visible ␣ ⏎ ⇥, an empty one ∅, a byte-level token
// that is part of a multi-byte character its bytes ⟨0xCE⟩ (or ⟨?⟩ where the bytes were
// not kept), and a bidirectional control is a marked ⟨RLO⟩ that reorders nothing: the
// text reads in its logical order. Each mark says on hover what it stands for.
import { Fragment } from 'react';
import { useTranslation } from 'react-i18next';

/** What a mark stands for; the key of its explanation under `tokens.` in the i18n files. */
export type MarkKind =
  'space' | 'newline' | 'tab' | 'return' | 'empty' | 'char' | 'byte' | 'unknownBytes' | 'bidi';

export type Part =
  { type: 'text'; text: string } | { type: 'mark'; kind: MarkKind; glyph: string; detail?: string };

/** U+FFFD: what a byte-level token that holds part of a character decodes to alone. */
export const REPLACEMENT = '\uFFFD';

// Bidirectional formatting characters (Unicode's Bidi_Control property), by name.
const BIDI_CONTROLS: Record<string, string> = {
  '\u061C': 'ALM',
  '\u200E': 'LRM',
  '\u200F': 'RLM',
  '\u202A': 'LRE',
  '\u202B': 'RLE',
  '\u202C': 'PDF',
  '\u202D': 'LRO',
  '\u202E': 'RLO',
  '\u2066': 'LRI',
  '\u2067': 'RLI',
  '\u2068': 'FSI',
  '\u2069': 'PDI',
};

const WHITESPACE: Record<string, { kind: MarkKind; glyph: string }> = {
  ' ': { kind: 'space', glyph: '␣' },
  '\n': { kind: 'newline', glyph: '⏎' },
  '\t': { kind: 'tab', glyph: '⇥' },
  '\r': { kind: 'return', glyph: '␍' },
};

// Characters that show as nothing (or as a gap) inside a token: controls, other
// spaces, zero-width characters, the byte-order mark.
const INVISIBLE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x0000, 0x001f],
  [0x007f, 0x00a0],
  [0x1680, 0x1680],
  [0x2000, 0x200d],
  [0x2028, 0x202f],
  [0x205f, 0x2064],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];

function isInvisible(char: string): boolean {
  const cp = char.codePointAt(0)!;
  return INVISIBLE_RANGES.some(([low, high]) => cp >= low && cp <= high);
}

function codePoint(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

function hexByte(byte: number): string {
  return `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

function pushText(parts: Part[], text: string): void {
  const last = parts[parts.length - 1];
  if (last?.type === 'text') last.text += text;
  else parts.push({ type: 'text', text });
}

function bidiMark(char: string): Part | null {
  const name = BIDI_CONTROLS[char];
  return name ? { type: 'mark', kind: 'bidi', glyph: `⟨${name}⟩`, detail: name } : null;
}

/**
 * Corpus or imported text with every bidirectional control replaced by a visible mark,
 * so that it reorders nothing; all else as it is.
 */
export function textParts(text: string): Part[] {
  const parts: Part[] = [];
  for (const char of text) {
    const mark = bidiMark(char);
    if (mark) parts.push(mark);
    else pushText(parts, char);
  }
  return parts;
}

/**
 * Text to be put inside a sentence of the UI (a translated message, a title) where no
 * element can isolate it: its bidirectional controls written out as ⟨RLO⟩, so that none
 * reorders the words around it.
 */
export function markBidiControls(text: string): string {
  let out = '';
  for (const char of text) out += BIDI_CONTROLS[char] ? `⟨${BIDI_CONTROLS[char]}⟩` : char;
  return out;
}

/**
 * Raw bytes as hex ("ceb1"), or null where the string is not an even run of hex digits.
 */
export function parseHexBytes(hex: string | null | undefined): number[] | null {
  if (!hex || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) return null;
  const bytes: number[] = [];
  for (let i = 0; i < hex.length; i += 2) bytes.push(parseInt(hex.slice(i, i + 2), 16));
  return bytes;
}

/**
 * Bytes decoded as UTF-8 where they form whole characters; each byte that does not (a
 * lone lead or continuation byte of a character split across tokens) is kept as a number.
 */
export function decodeUtf8Runs(bytes: readonly number[]): Array<string | number> {
  const out: Array<string | number> = [];
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const length =
      lead < 0x80
        ? 1
        : lead >= 0xc2 && lead <= 0xdf
          ? 2
          : lead >= 0xe0 && lead <= 0xef
            ? 3
            : lead >= 0xf0 && lead <= 0xf4
              ? 4
              : 0;
    let ok = length > 0 && i + length <= bytes.length;
    for (let j = 1; ok && j < length; j += 1) ok = (bytes[i + j]! & 0xc0) === 0x80;
    let cp = 0;
    if (ok) {
      cp = length === 1 ? lead : lead & (0xff >> (length + 1));
      for (let j = 1; j < length; j += 1) cp = (cp << 6) | (bytes[i + j]! & 0x3f);
      // Overlong forms, surrogates and values past U+10FFFF are not characters.
      const min = [0, 0, 0x80, 0x800, 0x10000][length]!;
      ok = cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (ok) {
      out.push(String.fromCodePoint(cp));
      i += length;
    } else {
      out.push(lead);
      i += 1;
    }
  }
  return out;
}

/**
 * A token as it is shown on its own (the next token, a trigger that is not found in its
 * text, a value's top token). A token of whitespace only shows each character as a mark
 * (a leading space of a word stays a space); line breaks, tabs, invisible characters and
 * bidirectional controls are marks wherever they are; an empty token is ∅. Where the
 * token decodes to U+FFFD, its raw bytes (hex) are shown as ⟨0x..⟩ for the bytes that
 * are not whole characters, or ⟨?⟩ where they are unknown.
 */
export function tokenParts(token: string, bytesHex?: string | null): Part[] {
  if (token === '') return [{ type: 'mark', kind: 'empty', glyph: '∅' }];
  const bytes = token.includes(REPLACEMENT) ? parseHexBytes(bytesHex) : null;
  const runs: Array<string | number> = bytes ? decodeUtf8Runs(bytes) : Array.from(token);
  const chars = runs.filter((run): run is string => typeof run === 'string');
  const allWhitespace =
    runs.every((run) => typeof run === 'string') && chars.every((c) => /\s/u.test(c));
  const parts: Part[] = [];
  for (const run of runs) {
    if (typeof run === 'number') {
      parts.push({ type: 'mark', kind: 'byte', glyph: `⟨${hexByte(run)}⟩`, detail: hexByte(run) });
      continue;
    }
    const bidi = bidiMark(run);
    const space = WHITESPACE[run];
    if (bidi) parts.push(bidi);
    else if (run === REPLACEMENT) parts.push({ type: 'mark', kind: 'unknownBytes', glyph: '⟨?⟩' });
    else if (space && (allWhitespace || run !== ' ')) parts.push({ type: 'mark', ...space });
    else if (isInvisible(run))
      parts.push({
        type: 'mark',
        kind: 'char',
        glyph: `⟨${codePoint(run)}⟩`,
        detail: codePoint(run),
      });
    else pushText(parts, run);
  }
  return parts;
}

/** Where the raw bytes are known, all of them as "0xCE 0xB1" (for the hover). */
export function bytesTitle(bytesHex: string | null | undefined): string | null {
  const bytes = parseHexBytes(bytesHex);
  return bytes ? bytes.map(hexByte).join(' ') : null;
}

function Parts({ parts }: { parts: readonly Part[] }) {
  const { t } = useTranslation();
  return (
    <>
      {parts.map((part, index) =>
        part.type === 'text' ? (
          <Fragment key={index}>{part.text}</Fragment>
        ) : (
          <span
            key={index}
            className={`glyph-mark glyph-${part.kind}`}
            title={t(`tokens.${part.kind}`, { detail: part.detail })}
            data-testid="glyph-mark"
          >
            <span aria-hidden="true">{part.glyph}</span>
            <span className="visually-hidden">
              {t(`tokens.${part.kind}`, { detail: part.detail })}
            </span>
          </span>
        ),
      )}
    </>
  );
}

/**
 * A token on its own, isolated from the text around it (`<bdi>`), with its marks; the
 * hover gives its raw bytes where they are known.
 */
export function TokenText({
  token,
  bytes,
  className = 'token',
}: {
  token: string;
  bytes?: string | null;
  className?: string;
}) {
  const { t } = useTranslation();
  const raw = token.includes(REPLACEMENT) ? bytesTitle(bytes) : null;
  return (
    <bdi className={className} title={raw ? t('tokens.rawBytes', { bytes: raw }) : undefined}>
      <Parts parts={tokenParts(token, bytes)} />
    </bdi>
  );
}

/**
 * Corpus or imported text (a prefix, a sentence, a description, a note, a username):
 * isolated from what is around it (`<bdi>`), its bidirectional controls shown as marks.
 */
export function VisibleText({ text, className }: { text: string; className?: string }) {
  return (
    <bdi className={className}>
      <Parts parts={textParts(text)} />
    </bdi>
  );
}

/** The same for a stretch inside a larger text (the prefix around its trigger): marks only. */
export function TextMarks({ text }: { text: string }) {
  return <Parts parts={textParts(text)} />;
}
