import { useTranslation } from 'react-i18next';

import type { PatternKind } from '../../../api/types';
import type { KeyGroupState, PrefixSetState } from '../lib/probes';
import { TextField } from './Fields';

const KINDS: readonly PatternKind[] = ['semantic', 'shallow', 'shallow+semantic'];

/**
 * Which keys a probe ablates: listed by hand ("1:12, 3:400"), or every key that carries a
 * pattern of some kinds in submitted annotations (everyone's or one annotator's) or in
 * submitted gold, optionally only in some layers. `id` prefixes the boxes' ids, as
 * lib/probes.ts names them in its problems.
 */
export function KeyGroupFields({
  id,
  legend,
  value,
  onChange,
  invalid,
  nLayers,
  dFf,
}: {
  id: string;
  legend: string;
  value: KeyGroupState;
  onChange: (value: KeyGroupState) => void;
  /** The id of the box with a problem, if it is one of these. */
  invalid: string | null;
  nLayers: number;
  dFf: number;
}) {
  const { t } = useTranslation();
  const set = (change: Partial<KeyGroupState>) => onChange({ ...value, ...change });
  return (
    <fieldset className="causal-group" data-testid={`${id}-fieldset`}>
      <legend>{legend}</legend>
      <fieldset className="view-switch">
        <legend>{t('causal.form.group.by')}</legend>
        {(['keys', 'label'] as const).map((by) => (
          <label key={by} className="radio">
            <input
              type="radio"
              name={`${id}-by`}
              value={by}
              checked={value.by === by}
              onChange={() => set({ by })}
            />
            {t(`causal.form.group.byOptions.${by}`)}
          </label>
        ))}
      </fieldset>
      {value.by === 'keys' ? (
        <TextField
          id={`${id}-keys`}
          label={t('causal.form.group.keys')}
          value={value.keys}
          onChange={(keys) => set({ keys })}
          placeholder="1:12, 3:400"
          hint={t('causal.form.group.keysHint', { layers: nLayers, last: dFf - 1 })}
          invalid={invalid === `${id}-keys`}
        />
      ) : (
        <>
          <fieldset
            className="view-switch"
            id={`${id}-kinds`}
            aria-invalid={invalid === `${id}-kinds` || undefined}
          >
            <legend>{t('causal.form.group.kinds')}</legend>
            {KINDS.map((kind) => (
              <label key={kind} className="checkbox">
                <input
                  type="checkbox"
                  checked={value.kinds.includes(kind)}
                  onChange={(event) =>
                    set({
                      kinds: event.target.checked
                        ? KINDS.filter((each) => each === kind || value.kinds.includes(each))
                        : value.kinds.filter((each) => each !== kind),
                    })
                  }
                />
                {t(`labels.${kind}`)}
              </label>
            ))}
          </fieldset>
          <div className="field">
            <label htmlFor={`${id}-source`}>{t('causal.form.group.source')}</label>
            <select
              id={`${id}-source`}
              value={value.source}
              onChange={(event) => set({ source: event.target.value as KeyGroupState['source'] })}
            >
              <option value="annotations">{t('causal.form.group.sources.annotations')}</option>
              <option value="gold">{t('causal.form.group.sources.gold')}</option>
            </select>
          </div>
          {value.source === 'annotations' && (
            <TextField
              id={`${id}-annotator`}
              label={t('causal.form.group.annotator')}
              value={value.annotator}
              onChange={(annotator) => set({ annotator })}
              hint={t('causal.form.group.annotatorHint')}
            />
          )}
          <TextField
            id={`${id}-layers`}
            label={t('causal.form.group.layers')}
            value={value.layers}
            onChange={(layers) => set({ layers })}
            placeholder="3, 5-7"
            hint={t('causal.form.layersHint', { layers: nLayers })}
            invalid={invalid === `${id}-layers`}
          />
        </>
      )}
    </fieldset>
  );
}

/** A prefix set of the dissociation: a group's own trigger prefixes, or sentences typed in. */
export function PrefixSetFields({
  id,
  legend,
  value,
  onChange,
  invalid,
}: {
  id: string;
  legend: string;
  value: PrefixSetState;
  onChange: (value: PrefixSetState) => void;
  invalid: string | null;
}) {
  const { t } = useTranslation();
  return (
    <fieldset className="causal-group" data-testid={`${id}-fieldset`}>
      <legend>{legend}</legend>
      {(['a', 'b', 'text'] as const).map((by) => (
        <label key={by} className="radio">
          <input
            type="radio"
            name={`${id}-by`}
            value={by}
            checked={value.by === by}
            onChange={() => onChange({ ...value, by })}
          />
          {t(`causal.form.set.options.${by}`)}
        </label>
      ))}
      {value.by === 'text' && (
        <TextField
          id={`${id}-text`}
          label={t('causal.form.set.text')}
          value={value.text}
          onChange={(text) => onChange({ ...value, text })}
          hint={t('causal.form.set.textHint')}
          invalid={invalid === `${id}-text`}
          multiline
        />
      )}
    </fieldset>
  );
}
