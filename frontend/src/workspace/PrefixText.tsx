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
 * A trigger example as text, never as HTML (corpus text may hold markup: DESIGN §9):
 * the prefix with its last token, the trigger, highlighted; for an encoder the rest of
 * the sentence follows, greyed.
 */
export function PrefixText({ prefix, isCausal }: { prefix: TriggerPrefix; isCausal: boolean }) {
  const split = splitTrigger(prefix.text, prefix.trigger_token);
  return (
    <span className="prefix-text" data-testid="prefix-text">
      {split ? (
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
