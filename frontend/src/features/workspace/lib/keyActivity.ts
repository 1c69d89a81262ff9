import type { TriggerPrefix } from '../../../api/types';
import { MIN_PREFIXES } from '../../../components/patternEditor/labels';

/**
 * A key is "almost never active in this corpus" when fewer than MIN_PREFIXES (3) of its
 * top prefixes have a positive memory coefficient, and some shown prefix has none.
 *
 * Why this rule: active means m_i > 0, as in the key's density (docs/science.md, "Keys, values and the memory coefficient"). The top-k
 * are the corpus's sentences with the highest maximum coefficient, so every sentence
 * that is not shown has a maximum no higher than the last shown one: when a shown
 * prefix sits at 0 or below, the positive ones are all the sentences of the corpus that
 * activate the key. Fewer than 3 of them cannot carry a pattern (the 3-prefix rule);
 * what the other prefixes share is what a key that does not fire happens to rank first.
 * (A key with fewer than 3 prefixes in all, every one positive, is not flagged: its
 * corpus was small, not the key quiet.)
 */
export function activeCount(prefixes: readonly TriggerPrefix[]): number {
  return prefixes.filter((prefix) => prefix.coefficient > 0).length;
}

export function isAlmostNeverActive(prefixes: readonly TriggerPrefix[]): boolean {
  const active = activeCount(prefixes);
  return prefixes.length > 0 && active < MIN_PREFIXES && active < prefixes.length;
}
