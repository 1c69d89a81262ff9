import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { StudyDetail } from '../../../api/types';
import { manageKeys } from '../api/queryKeys';

/** The stored share (0..1) as a whole percentage for the box. */
export function ratePercent(rate: number): number {
  return Math.round(rate * 100);
}

/** A whole percentage from 0 to 100, or null when the box holds anything else. */
export function parsePercent(text: string): number | null {
  if (!/^\d{1,3}$/.test(text.trim())) return null;
  const percent = Number(text.trim());
  return percent <= 100 ? percent : null;
}

/** The share of the keys given to an annotator that each bring a check key (``check_rate``). */
export function CheckRateForm({ study }: { study: StudyDetail }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [value, setValue] = useState(String(ratePercent(study.check_rate)));
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Computed from the box as it is now, so it follows every keystroke.
  const percent = parsePercent(value);
  const problem = percent === null ? t('manage.checkRate.invalid') : null;

  const checkRate = useMutation({
    mutationFn: (rate: number) => api.admin.updateStudy(study.id, { check_rate: rate }),
    onSuccess: (updated) => {
      queryClient.setQueryData(manageKeys.study(study.id), updated);
      setValue(String(ratePercent(updated.check_rate)));
      setSaved(true);
    },
    onError: (failure) => setError(errorMessage(failure, t)),
  });
  const busy = checkRate.isPending;

  function save(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setSaved(false);
    if (percent === null) return;
    checkRate.mutate(percent / 100);
  }

  const current = Math.round(study.check_rate * 1000) / 10;
  return (
    <form
      className="card form-grid"
      noValidate
      onSubmit={save}
      aria-labelledby="check-rate-heading"
    >
      <h2 id="check-rate-heading">{t('manage.checkRate.heading')}</h2>
      <p className="muted">{t('manage.checkRate.hint')}</p>
      <p data-testid="check-keys-count">
        {study.check_keys === 0
          ? t('manage.checkRate.none')
          : t('manage.checkRate.count', { count: study.check_keys })}
      </p>
      <div className="inline-fields">
        <div className="field">
          <label htmlFor="check-rate">{t('manage.checkRate.label')}</label>
          <input
            id="check-rate"
            type="number"
            min={0}
            max={100}
            step={1}
            value={value}
            aria-invalid={problem !== null}
            aria-describedby={problem ? 'check-rate-problem' : undefined}
            onChange={(e) => {
              setValue(e.target.value);
              setSaved(false);
            }}
          />
        </div>
        <button type="submit" className="primary" disabled={busy}>
          {t('manage.checkRate.save')}
        </button>
      </div>
      <p className="muted" data-testid="check-rate-current">
        {current === 0
          ? t('manage.checkRate.off')
          : t('manage.checkRate.current', { percent: current })}
      </p>
      {problem && (
        <p id="check-rate-problem" role="alert" className="alert" data-testid="check-rate-problem">
          {problem}
        </p>
      )}
      {saved && (
        <p role="status" className="success" data-testid="check-rate-saved">
          {t('manage.checkRate.saved')}
        </p>
      )}
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
    </form>
  );
}
