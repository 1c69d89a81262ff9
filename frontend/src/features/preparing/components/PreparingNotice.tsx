import { useTranslation } from 'react-i18next';

import type { PreparingStudy } from '../../../api/types';
import { ProgressBar } from '../../../components/ProgressBar';

/** "Your keys are being mined": each study being mined for the annotator, how far. */
export function PreparingNotice({ runs }: { runs: readonly PreparingStudy[] }) {
  const { t, i18n } = useTranslation();
  const numbers = new Intl.NumberFormat(i18n.language, { maximumFractionDigits: 0 });
  if (runs.length === 0) return null;
  return (
    <section className="card preparing" aria-labelledby="preparing-heading" data-testid="preparing">
      <h2 id="preparing-heading">{t('preparing.heading')}</h2>
      <p className="muted">{t('preparing.hint')}</p>
      <ul className="preparing-runs">
        {runs.map((run) => {
          const p = run.progress;
          const counted = p.sentences_total > 0;
          const done = numbers.format(p.sentences_done);
          const total = numbers.format(p.sentences_total);
          return (
            <li key={run.id} data-testid="preparing-run" data-status={run.status}>
              <div className="preparing-head">
                <strong>{run.study_name}</strong>
                <span className="muted">{t(`preparing.status.${run.status}`)}</span>
              </div>
              <div className="progress-cell">
                <ProgressBar
                  value={p.sentences_done}
                  max={p.sentences_total}
                  label={t('preparing.progressLabel', { name: run.study_name, done, total })}
                />
                {counted && (
                  <span className="progress-text" data-testid="preparing-counts">
                    {t('preparing.sentences', { done, total })}
                    {' · '}
                    {t('preparing.tokens', {
                      done: numbers.format(p.tokens_done),
                      total: numbers.format(p.tokens_total),
                    })}
                    {p.eta_seconds !== null && (
                      <>
                        {' · '}
                        {t('preparing.eta', { count: Math.max(1, Math.ceil(p.eta_seconds / 60)) })}
                      </>
                    )}
                  </span>
                )}
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
