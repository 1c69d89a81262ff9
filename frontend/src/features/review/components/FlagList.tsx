import { useTranslation } from 'react-i18next';

import type { ReviewFlag } from '../../../api/review';

/** The annotators' flags on a key, a line each: "bob: unclear — the trigger is odd". */
export function FlagList({ flags, testId }: { flags: readonly ReviewFlag[]; testId?: string }) {
  const { t } = useTranslation();
  return (
    <ul className="flags" data-testid={testId}>
      {flags.map((flag, index) => (
        <li key={index}>
          {t('review.flagLine', {
            annotator: flag.annotator,
            reason: t(`review.reasons.${flag.reason}`),
          })}
          {flag.note && <> — {flag.note}</>}
        </li>
      ))}
    </ul>
  );
}
