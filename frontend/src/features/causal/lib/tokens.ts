import { tokenParts } from '../../../components/patternEditor/tokenDisplay';

/**
 * A token as a chart names it, in plain text (an SVG holds no marks' explanations): its
 * visible characters, a token of whitespace only as its mark (␣, ⏎), ∅ for an empty one.
 * A leading space is dropped: beside the slanted names of the others it shows as nothing.
 */
export function tokenLabel(token: string): string {
  const text = tokenParts(token)
    .map((part) => (part.type === 'text' ? part.text : part.glyph))
    .join('');
  return text.trim() || text;
}
