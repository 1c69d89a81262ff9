// The charts' ink, font and text measure, shared by every hand-drawn SVG chart (the
// report's, the Causal page's): inline, so that a downloaded file looks the same outside
// the page.
export const TEXT = '#1b1d21';
export const MUTED = '#5a606b';
export const GRID = '#d6d9de';
export const FONT =
  "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Noto Sans CJK SC', sans-serif";

/** A generous guess of a text's width: wide (CJK) characters count a full em. */
export function textWidth(text: string, fontSize: number): number {
  let ems = 0;
  for (const char of text) ems += (char.codePointAt(0) ?? 0) >= 0x2e80 ? 1 : 0.62;
  return ems * fontSize;
}

/**
 * A text in lines of at most `room` units at `fontSize`. Breaks between words, and
 * between any two wide (CJK) characters, which have no spaces between them.
 */
export function wrapText(text: string, room: number, fontSize: number): string[] {
  const pieces = text.trim().match(/[\u2e80-\u{10ffff}]|[^\s\u2e80-\u{10ffff}]+|\s+/gu) ?? [];
  const lines: string[] = [];
  let line = '';
  for (const piece of pieces) {
    const next = line + piece;
    if (line.trim() && textWidth(next.trimEnd(), fontSize) > room && piece.trim()) {
      lines.push(line.trimEnd());
      line = piece;
    } else {
      line = next;
    }
  }
  if (line.trim()) lines.push(line.trim());
  return lines.map((each) => each.trimStart());
}
