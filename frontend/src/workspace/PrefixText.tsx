import type { TriggerPrefix } from '../api/types';

// Tokenizers mark word starts and pieces in their own ways (GPT-2 "Ġ", SentencePiece
// "▁", WordPiece "##"); the decoded prefix text has none of them.
function bareToken(token: string): string {
  return token.replace(/^(Ġ|▁|##)/, '').trimStart();
}

/** Split the prefix text into what comes before the trigger token and the token itself. */
export function splitTrigger(text: string, trigger: string): [string, string] | null {
  for (const candidate of [trigger, bareToken(trigger)]) {
    if (candidate && text.endsWith(candidate)) {
      return [text.slice(0, text.length - candidate.length), candidate];
    }
  }
  return null;
}

/**
 * The text around and of the trigger, from its character span [start, end) as the miner
 * kept it (the tokenizer's offsets into the sentence as written): [before, trigger, after].
 * The server counts Unicode code points and JavaScript strings count UTF-16 units, so the
 * text is cut by code points. Null where there is no usable span (an import of a file
 * without one, a prefix mined before spans were kept): the caller falls back to
 * `splitTrigger`.
 */
export function splitAtSpan(
  text: string,
  start: number | null,
  end: number | null,
): [string, string, string] | null {
  if (start === null || end === null || !(start >= 0 && start < end)) return null;
  const chars = Array.from(text);
  if (end > chars.length) return null;
  return [
    chars.slice(0, start).join(''),
    chars.slice(start, end).join(''),
    chars.slice(end).join(''),
  ];
}

/**
 * A trigger example as text, never as HTML (corpus text may hold markup: DESIGN §9):
 * the prefix as written with its last token, the trigger, highlighted in place; for an
 * encoder the rest of the sentence follows, greyed. So a lowercasing tokenizer's
 * "marriage" shows as the text's own "Marriage", once. Without a span, the decoded
 * token is matched against the end of the text, and shown after it where it does not
 * match.
 */
export function PrefixText({ prefix, isCausal }: { prefix: TriggerPrefix; isCausal: boolean }) {
  const inPlace = splitAtSpan(prefix.text, prefix.trigger_start, prefix.trigger_end);
  const split = inPlace ? null : splitTrigger(prefix.text, prefix.trigger_token);
  return (
    <span className="prefix-text" data-testid="prefix-text">
      {inPlace ? (
        <>
          {inPlace[0]}
          <mark className="trigger">{inPlace[1]}</mark>
          {inPlace[2]}
        </>
      ) : split ? (
        <>
          {split[0]}
          <mark className="trigger">{split[1]}</mark>
        </>
      ) : (
        <>
          {prefix.text}
          <mark className="trigger detached">{prefix.trigger_token}</mark>
        </>
      )}
      {!isCausal && prefix.suffix && <span className="suffix">{prefix.suffix}</span>}
    </span>
  );
}
