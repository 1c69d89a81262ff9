import { forwardRef, useId } from 'react';
import { useTranslation } from 'react-i18next';

import type { PatternKind } from '../../api/types';
import type { AddBlocker } from './composer';
import { KINDS, MIN_PREFIXES } from './labels';

interface PatternComposerProps {
  description: string;
  onDescription: (value: string) => void;
  kind: PatternKind | null;
  onKind: (kind: PatternKind) => void;
  selected: number;
  blockers: readonly AddBlocker[];
  editing: number | null;
  onAdd: () => void;
  onCancelEdit: () => void;
  onClearSelection: () => void;
}

export const PatternComposer = forwardRef<HTMLInputElement, PatternComposerProps>(
  function PatternComposer(props, descriptionRef) {
    const { t } = useTranslation();
    const id = useId();
    const { blockers, editing } = props;
    const reasons = blockers.map((blocker) =>
      t(`composer.blocked.${blocker}`, { min: MIN_PREFIXES, count: props.selected }),
    );
    return (
      <section className="composer card" aria-labelledby={`${id}-heading`}>
        <h2 id={`${id}-heading`}>
          {editing === null ? t('composer.heading') : t('composer.editing', { number: editing })}
        </h2>
        <p className="muted selected-count" data-testid="selected-count">
          {t('composer.selected', { count: props.selected })}
          {props.selected > 0 && (
            <button type="button" className="link-button" onClick={props.onClearSelection}>
              {t('composer.clear')}
            </button>
          )}
        </p>
        <div className="field">
          <label htmlFor={`${id}-description`}>{t('composer.description')}</label>
          <input
            ref={descriptionRef}
            id={`${id}-description`}
            value={props.description}
            maxLength={2000}
            autoComplete="off"
            onChange={(event) => props.onDescription(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && !event.ctrlKey && !event.metaKey) {
                event.preventDefault();
                props.onAdd();
              }
            }}
          />
        </div>
        <fieldset className="kinds">
          <legend>{t('composer.kind')}</legend>
          {KINDS.map((kind, index) => (
            <label key={kind} className="kind-option">
              <input
                type="radio"
                name={`${id}-kind`}
                value={kind}
                checked={props.kind === kind}
                onChange={() => props.onKind(kind)}
              />
              <kbd>{index + 1}</kbd> {t(`labels.${kind}`)}
            </label>
          ))}
        </fieldset>
        <div className="composer-actions">
          <button
            type="button"
            className="primary"
            disabled={blockers.length > 0}
            aria-describedby={blockers.length > 0 ? `${id}-why` : undefined}
            onClick={props.onAdd}
          >
            {editing === null ? t('composer.add') : t('composer.save')}
          </button>
          {editing !== null && (
            <button type="button" onClick={props.onCancelEdit}>
              {t('composer.cancel')}
            </button>
          )}
        </div>
        {blockers.length > 0 && (
          <ul id={`${id}-why`} className="blockers" data-testid="add-blockers">
            {reasons.map((reason) => (
              <li key={reason}>{reason}</li>
            ))}
          </ul>
        )}
      </section>
    );
  },
);
