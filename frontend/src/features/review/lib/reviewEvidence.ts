import type { ReviewKeyDetail } from '../../../api/review';

/** What the curator sees of a key beyond its top-k (docs/evidence.md, "In the API"). */
export interface ReviewEvidence {
  maxCoefficient: number;
  samples: ReviewKeyDetail['samples'];
  heldout: ReviewKeyDetail['heldout'];
  heldoutRandom: ReviewKeyDetail['heldout_random'];
}

/** The key's evidence; its best prefix's coefficient stands for a missing maximum (0). */
export function reviewEvidence(detail: ReviewKeyDetail): ReviewEvidence {
  const best = Math.max(0, ...detail.prefixes.map((prefix) => prefix.coefficient));
  return {
    maxCoefficient: detail.key.max_coefficient > 0 ? detail.key.max_coefficient : best,
    samples: detail.samples,
    heldout: detail.heldout,
    heldoutRandom: detail.heldout_random,
  };
}
