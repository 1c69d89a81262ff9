import { useTranslation } from 'react-i18next';

import type { TriggerPrefix } from '../../api/types';
import { bytesTitle, REPLACEMENT, TextMarks, TokenText } from './tokenDisplay';

// Tokenizers mark word starts and pieces in their own ways (GPT-2 "Ġ", SentencePiece
// "▁", WordPiece "##"); the decoded prefix text has none of them.
function bareToken(token: string): string {
  return token.replace(/^(Ġ|▁|##)/, '').trimStart();
}

/**
 * Split the prefix text into what comes before the trigger token and the token itself,
 * by matching the decoded token at the end of the text (where no span was kept). The
 * token's leading whitespace (a word's space) stays with what comes before: only the
 * token's visible text is highlighted, unless it is whitespace alone.
 */
export function splitTrigger(text: string, trigger: string): [string, string] | null {
  for (const candidate of [trigger, bareToken(trigger)]) {
    if (candidate && text.endsWith(candidate)) {
      const visible = candidate.trimStart() || candidate;
      return [text.slice(0, text.length - visible.length), visible];
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

/** What PrefixText reads of an example (a trigger prefix, or a sample below the top-k). */
export type PrefixTextFields = Pick<
  TriggerPrefix,
  'text' | 'suffix' | 'trigger_token' | 'trigger_token_bytes' | 'trigger_start' | 'trigger_end'
>;

/** The trigger as highlighted in its text: whitespace alone shows as marks (␣, ⏎). */
function InPlace({ text, title }: { text: string; title: string | undefined }) {
  return (
    <mark className="trigger" title={title}>
      {/^\s+$/u.test(text) ? (
        <TokenText token={text} className="trigger-token" />
      ) : (
        <TextMarks text={text} />
      )}
    </mark>
  );
}

/**
 * A trigger example as text, never as HTML (corpus text may hold markup: docs/reliability.md, "What is guaranteed"):
 * the prefix as written with its last token, the trigger, highlighted in place; for an
 * encoder the rest of the sentence follows, greyed. So a lowercasing tokenizer's
 * "marriage" shows as the text's own "Marriage", once. Without a span, the decoded
 * token is matched against the end of the text, and shown after it where it does not
 * match (with its raw bytes where it is part of a character: tokenDisplay). The text
 * is isolated (its direction reorders nothing around it) and its bidirectional controls
 * are shown as marks.
 */
export function PrefixText({ prefix, isCausal }: { prefix: PrefixTextFields; isCausal: boolean }) {
  const { t } = useTranslation();
  const inPlace = splitAtSpan(prefix.text, prefix.trigger_start, prefix.trigger_end);
  const split = inPlace ? null : splitTrigger(prefix.text, prefix.trigger_token);
  const bytes = prefix.trigger_token_bytes ?? null;
  // Where the token alone is part of a character, the hover says so.
  const raw = prefix.trigger_token.includes(REPLACEMENT) ? bytesTitle(bytes) : null;
  const title = prefix.trigger_token.includes(REPLACEMENT)
    ? raw
      ? t('tokens.rawBytes', { bytes: raw })
      : t('tokens.unknownBytes')
    : undefined;
  return (
    <span className="prefix-text" data-testid="prefix-text">
      {inPlace ? (
        <>
          <TextMarks text={inPlace[0]} />
          <InPlace text={inPlace[1]} title={title} />
          <TextMarks text={inPlace[2]} />
        </>
      ) : split ? (
        <>
          <TextMarks text={split[0]} />
          <InPlace text={split[1]} title={title} />
        </>
      ) : (
        <>
          <TextMarks text={prefix.text} />
          <mark className="trigger detached">
            <TokenText token={prefix.trigger_token} bytes={bytes} className="trigger-token" />
          </mark>
        </>
      )}
      {!isCausal && prefix.suffix && (
        <span className="suffix">
          <TextMarks text={prefix.suffix} />
        </span>
      )}
    </span>
  );
}
