// Token shading (docs/evidence.md, "Token shading"): each token's coefficient on a signed
// scale, normalised to the key's largest per-sentence coefficient over the corpus (the
// same scale for every example of the key, not each example's own maximum). Positive
// coefficients shade blue, negative ones (SwiGLU) orange: a diverging pair that reads
// apart under the common colour-vision deficiencies (it varies in blue–yellow and in
// lightness, not in red–green). Both ends keep the text's contrast at 4.5:1 or more
// (WCAG AA) in the light and the dark scheme (shading.test.ts checks it).

export type Rgb = readonly [number, number, number];

/** One scheme's colours: the surface the scale starts from, its two ends, its ink. */
export interface ShadeScheme {
  base: Rgb;
  positive: Rgb;
  negative: Rgb;
  ink: Rgb;
}

export const SHADE_SCHEMES: { light: ShadeScheme; dark: ShadeScheme } = {
  // --surface and --text of styles.css.
  light: {
    base: [255, 255, 255],
    positive: [77, 157, 224],
    negative: [232, 135, 30],
    ink: [27, 29, 33],
  },
  dark: {
    base: [30, 33, 38],
    positive: [31, 95, 153],
    negative: [154, 74, 10],
    ink: [232, 234, 237],
  },
};

/** A coefficient as a share of the key's scale, in [-1, 1]; 0 where there is no scale. */
export function shadeShare(value: number, max: number | null | undefined): number {
  if (!max || !(max > 0) || !Number.isFinite(value)) return 0;
  return Math.max(-1, Math.min(1, value / max));
}

function mix(from: Rgb, to: Rgb, share: number): Rgb {
  return [0, 1, 2].map((i) => Math.round(from[i]! + (to[i]! - from[i]!) * share)) as unknown as Rgb;
}

/** The background of a token whose share of the scale is `share` (-1 … 1). */
export function shadeColour(share: number, scheme: ShadeScheme): Rgb {
  const end = share < 0 ? scheme.negative : scheme.positive;
  return mix(scheme.base, end, Math.min(1, Math.abs(share)));
}

export function cssRgb([r, g, b]: Rgb): string {
  return `rgb(${r}, ${g}, ${b})`;
}

function channel(value: number): number {
  const c = value / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** WCAG 2's relative luminance. */
export function luminance([r, g, b]: Rgb): number {
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

/** WCAG 2's contrast ratio of two colours (1 … 21). */
export function contrastRatio(a: Rgb, b: Rgb): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** What a shaded example needs: its tokens and the key's coefficient at each. */
export interface TokenCoefficients {
  tokens?: readonly string[] | null;
  token_coefficients?: readonly number[] | null;
  position?: number;
}

/** Whether the example can be shaded: tokens and coefficients, one each, of the same length. */
export function hasTokens(example: TokenCoefficients): boolean {
  const { tokens, token_coefficients: values } = example;
  return !!tokens && !!values && tokens.length > 0 && tokens.length === values.length;
}

/** Leading special tokens ([CLS], <s>) the tokens may leave out, most likely first. */
const LEADING_SPECIALS = [1, 0, 2];

function bare(token: string): string {
  return token
    .replace(/^(Ġ|▁|##)/, '')
    .trim()
    .toLowerCase();
}

/**
 * The index of the trigger among the example's tokens. A causal model's tokens end with
 * it. An encoder's cover the whole sentence without its special tokens, while the
 * example's `position` counts them (a BERT [CLS] is position 0): the trigger is the
 * token at `position` less the leading specials, found as the one that reads as
 * `trigger_token` (one leading special tried first, then none, then two); where none
 * does, the token at `position`, or the last.
 */
export function triggerIndex(
  example: TokenCoefficients & { trigger_token?: string },
  isCausal: boolean,
): number {
  const tokens = example.tokens ?? [];
  const count = tokens.length;
  if (isCausal || example.position === undefined) return count - 1;
  const position = example.position;
  if (example.trigger_token !== undefined) {
    const wanted = bare(example.trigger_token);
    for (const skipped of LEADING_SPECIALS) {
      const index = position - skipped;
      if (index >= 0 && index < count && bare(tokens[index]!) === wanted) return index;
    }
  }
  return position >= 0 && position < count ? position : count - 1;
}
