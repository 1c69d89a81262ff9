import { PrefixText } from '../patternEditor/PrefixText';
import type { PrefixTextFields } from '../patternEditor/PrefixText';
import { hasTokens } from './shading';
import type { TokenCoefficients } from './shading';
import { ShadedTokens } from './ShadedTokens';

/** How a screen shades its examples: off, or on the key's scale. */
export interface Shading {
  on: boolean;
  /** The key's largest per-sentence coefficient over the corpus. */
  max: number | null | undefined;
}

/**
 * An example's text: shaded token by token where shading is on and the example has its
 * tokens; as before (the text with its trigger marked) otherwise, as for older data.
 */
export function ExampleText({
  example,
  isCausal,
  shading,
}: {
  example: PrefixTextFields & TokenCoefficients;
  isCausal: boolean;
  shading?: Shading;
}) {
  if (shading?.on && hasTokens(example)) {
    return <ShadedTokens example={example} isCausal={isCausal} max={shading.max} />;
  }
  return <PrefixText prefix={example} isCausal={isCausal} />;
}
