import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import type { ReportQuery } from '../../../api/client';
import type { StudyDetail } from '../../../api/types';

export function ReportFilters({
  study,
  annotators,
  value,
  busy,
  onApply,
}: {
  study: StudyDetail;
  annotators: readonly string[];
  value: ReportQuery;
  busy: boolean;
  onApply: (query: ReportQuery) => void;
}) {
  const { t } = useTranslation();
  const [chosenAnnotators, setChosenAnnotators] = useState<string[]>([...(value.annotators ?? [])]);
  const [chosenLayers, setChosenLayers] = useState<number[]>([...(value.layers ?? [])]);
  const [submittedOnly, setSubmittedOnly] = useState(value.submittedOnly);
  const [goldAsCoder, setGoldAsCoder] = useState(value.goldAsCoder ?? false);

  function toggle<T>(list: T[], item: T, on: boolean): T[] {
    return on
      ? [...list.filter((each) => each !== item), item]
      : list.filter((each) => each !== item);
  }

  function apply(event: FormEvent) {
    event.preventDefault();
    onApply({
      annotators: chosenAnnotators.length > 0 ? [...chosenAnnotators].sort() : null,
      layers: chosenLayers.length > 0 ? [...chosenLayers].sort((a, b) => a - b) : null,
      submittedOnly,
      goldAsCoder,
    });
  }

  return (
    <form
      className="card form-grid"
      onSubmit={apply}
      aria-labelledby="filters-heading"
      data-testid="report-filters"
    >
      <h2 id="filters-heading">{t('report.filters.heading')}</h2>
      <fieldset>
        <legend>{t('report.filters.annotators')}</legend>
        {annotators.length === 0 && (
          <span className="muted">{t('report.filters.noAnnotators')}</span>
        )}
        {annotators.map((name) => (
          <label key={name} className="checkbox">
            <input
              type="checkbox"
              checked={chosenAnnotators.includes(name)}
              onChange={(event) =>
                setChosenAnnotators((list) => toggle(list, name, event.target.checked))
              }
            />
            {name}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>{t('report.filters.layers')}</legend>
        {study.layers.map(({ layer }) => (
          <label key={layer} className="checkbox">
            <input
              type="checkbox"
              checked={chosenLayers.includes(layer)}
              onChange={(event) =>
                setChosenLayers((list) => toggle(list, layer, event.target.checked))
              }
            />
            {t('report.layer', { layer })}
          </label>
        ))}
      </fieldset>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={submittedOnly}
          onChange={(event) => setSubmittedOnly(event.target.checked)}
        />
        {t('report.filters.submittedOnly')}
      </label>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={goldAsCoder}
          onChange={(event) => setGoldAsCoder(event.target.checked)}
          data-testid="gold-as-coder"
        />
        {t('report.filters.goldAsCoder')}
      </label>
      <p className="muted">{t('report.filters.hint')}</p>
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {t('report.filters.apply')}
        </button>
      </div>
    </form>
  );
}
