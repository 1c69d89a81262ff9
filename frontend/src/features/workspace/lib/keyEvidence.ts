import type { KeyDetail, KeyHistogram, KeySample } from '../../../api/types';

/** What the workspace shows of a key beyond its top-k (docs/evidence.md). */
export interface KeyEvidence {
  /** The shading's scale: the key's largest per-sentence coefficient over the corpus. */
  maxCoefficient: number;
  samples: readonly KeySample[];
  histogram: KeyHistogram | null;
  density: number | null;
}

/**
 * The key's evidence fields. Where the key has no maximum (older data: 0), its best
 * prefix's coefficient stands for it: the top-1 prefix is the key's largest per-sentence one.
 */
export function keyEvidence(detail: KeyDetail): KeyEvidence {
  const best = Math.max(0, ...detail.prefixes.map((prefix) => prefix.coefficient));
  return {
    maxCoefficient: detail.max_coefficient > 0 ? detail.max_coefficient : best,
    samples: detail.samples,
    histogram: detail.histogram,
    density: detail.density,
  };
}
