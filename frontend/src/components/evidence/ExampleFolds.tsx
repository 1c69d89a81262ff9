import { useTranslation } from 'react-i18next';

import { Coefficient } from '../patternEditor/Coefficient';
import { formatCoefficient } from '../patternEditor/numbers';
import type { PrefixTextFields } from '../patternEditor/PrefixText';
import { ExampleText } from './ExampleText';
import type { Shading } from './ExampleText';
import type { TokenCoefficients } from './shading';

/** An example shown below the top-k: a sample, or (for curators) a held-out one. */
export type FoldExample = PrefixTextFields &
  TokenCoefficients & { coefficient: number; sentence_index: number; position: number };

/** A sample below the top-k (docs/evidence.md): a band's or a random one. */
export type SampleExample = FoldExample & {
  kind: string;
  band?: number | null;
  band_low?: number | null;
  band_high?: number | null;
};

export interface Fold<T extends FoldExample = FoldExample> {
  id: string;
  title: string;
  /** What the fold's summary adds, muted: a band's range. */
  detail?: string;
  examples: readonly T[];
}

/**
 * One fold of examples, closed until opened (a `<details>`: Enter or Space on its
 * summary). Its examples are read only: they are not in the prefix list, and no pattern
 * can select them (patterns cover the top-k only). Each row takes focus, so that its
 * tokens' values show by keyboard too.
 */
export function ExampleFold({
  fold,
  isCausal,
  shading,
  testId = 'example-fold',
}: {
  fold: Fold;
  isCausal: boolean;
  shading: Shading;
  testId?: string;
}) {
  const { t } = useTranslation();
  return (
    <details className="example-fold" data-testid={testId} data-fold={fold.id}>
      <summary>
        {fold.title}{' '}
        <span className="muted">
          {fold.detail ? `${fold.detail} · ` : ''}
          {t('evidence.count', { count: fold.examples.length })}
        </span>
      </summary>
      <ul className="example-list" aria-label={fold.title}>
        {fold.examples.map((example) => (
          <li
            key={`${example.sentence_index}-${example.position}`}
            className="example-row"
            // A row takes focus so that its tokens' values show without a mouse.
            // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex
            tabIndex={0}
            data-testid="example-row"
          >
            <span className="prefix-body">
              <ExampleText example={example} isCausal={isCausal} shading={shading} />
            </span>
            <Coefficient coefficient={example.coefficient} max={shading.max ?? 0} />
          </li>
        ))}
      </ul>
    </details>
  );
}

export const BAND_COUNT = 5;

/**
 * The samples' folds: the bands from the highest (5, just below the top-k) down to the
 * lowest (1), each titled with its range, then the random samples. A band without
 * samples is left out.
 */
export function sampleFolds<T extends SampleExample>(
  samples: readonly T[],
  language: string,
  words: {
    band: (band: number) => string;
    random: string;
    range: (low: string, high: string) => string;
  },
): Fold<T>[] {
  const folds: Fold<T>[] = [];
  for (let band = BAND_COUNT; band >= 1; band -= 1) {
    const examples = samples.filter((sample) => sample.kind === 'band' && sample.band === band);
    if (examples.length === 0) continue;
    const { band_low: low, band_high: high } = examples[0]!;
    folds.push({
      id: `band-${band}`,
      title: words.band(band),
      detail:
        low !== null && low !== undefined && high !== null && high !== undefined
          ? words.range(formatCoefficient(low, language), formatCoefficient(high, language))
          : undefined,
      examples,
    });
  }
  const random = samples.filter((sample) => sample.kind === 'random');
  if (random.length > 0) folds.push({ id: 'random', title: words.random, examples: random });
  return folds;
}

/** The samples below the top-k, folded by band, then the random ones. */
export function SampleFolds({
  samples,
  isCausal,
  shading,
}: {
  samples: readonly SampleExample[];
  isCausal: boolean;
  shading: Shading;
}) {
  const { t, i18n } = useTranslation();
  if (samples.length === 0) return null;
  const folds = sampleFolds(samples, i18n.language, {
    band: (band) => t('evidence.band', { band }),
    random: t('evidence.random'),
    range: (low, high) => t('evidence.range', { low, high }),
  });
  return (
    <section className="example-folds" aria-labelledby="samples-heading" data-testid="samples">
      <h2 id="samples-heading">{t('evidence.samples')}</h2>
      <p className="muted">{t('evidence.samplesHint')}</p>
      {folds.map((fold) => (
        <ExampleFold
          key={fold.id}
          fold={fold}
          isCausal={isCausal}
          shading={shading}
          testId="sample-fold"
        />
      ))}
    </section>
  );
}
