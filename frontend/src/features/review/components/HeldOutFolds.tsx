import { useTranslation } from 'react-i18next';

import { ExampleFold, SampleFolds } from '../../../components/evidence/ExampleFolds';
import type { Shading } from '../../../components/evidence/ExampleText';
import type { ReviewEvidence } from '../lib/reviewEvidence';

/**
 * Below the curator's prefix list: the samples the annotators saw, then the held-out
 * examples the scores are computed on (ranks 26–50 and the random negatives), which only
 * curators see.
 */
export function HeldOutFolds({
  evidence,
  isCausal,
  shading,
}: {
  evidence: ReviewEvidence;
  isCausal: boolean;
  shading: Shading;
}) {
  const { t } = useTranslation();
  const { heldout, heldoutRandom } = evidence;
  return (
    <>
      <SampleFolds samples={evidence.samples} isCausal={isCausal} shading={shading} />
      {(heldout.length > 0 || heldoutRandom.length > 0) && (
        <section className="example-folds" aria-labelledby="heldout-heading" data-testid="heldout">
          <h2 id="heldout-heading">{t('evidence.heldout')}</h2>
          <p className="muted">{t('evidence.heldoutHint')}</p>
          {heldout.length > 0 && (
            <ExampleFold
              fold={{ id: 'heldout', title: t('evidence.heldout'), examples: heldout }}
              isCausal={isCausal}
              shading={shading}
              testId="heldout-fold"
            />
          )}
          {heldoutRandom.length > 0 && (
            <ExampleFold
              fold={{
                id: 'heldout-random',
                title: t('evidence.heldoutRandom'),
                examples: heldoutRandom,
              }}
              isCausal={isCausal}
              shading={shading}
              testId="heldout-fold"
            />
          )}
        </section>
      )}
    </>
  );
}
