// How the review grid writes a next token so that what cannot be seen can be read: a
// space as ␣, a line break as ⏎, a byte-fallback token ("<0xCE>") or another control
// character as ⟨0xCE⟩. The workspace's own token display is meant to write tokens the
// same way; this one function is the review screen's single place for it.
const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/;

function hex(char: string): string {
  return `⟨0x${char.codePointAt(0)!.toString(16).toUpperCase().padStart(2, '0')}⟩`;
}

export function visibleToken(token: string): string {
  const byte = BYTE_TOKEN.exec(token);
  if (byte) return `⟨0x${byte[1]!.toUpperCase()}⟩`;
  return token.replace(/\r\n|[\s\p{Cc}]/gu, (char) => {
    if (char === ' ') return '␣';
    if (char === '\n' || char === '\r\n' || char === '\r') return '⏎';
    return hex(char);
  });
}
