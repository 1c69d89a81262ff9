import type { ReactNode } from 'react';

import type { NumberRule } from '../lib/parse';

/** A labelled box of a probe form; `invalid` marks the box the problem names. */
export function TextField({
  id,
  label,
  value,
  onChange,
  hint,
  invalid,
  placeholder,
  multiline = false,
  number,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: ReactNode;
  invalid?: boolean;
  placeholder?: string;
  multiline?: boolean;
  /** A number box with these bounds. */
  number?: NumberRule;
}) {
  const hintId = hint ? `${id}-hint` : undefined;
  const common = {
    id,
    value,
    placeholder,
    'aria-invalid': invalid || undefined,
    'aria-describedby': hintId,
  };
  return (
    <div className={number ? 'field number-field' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {multiline ? (
        <textarea {...common} rows={4} onChange={(event) => onChange(event.target.value)} />
      ) : number ? (
        <input
          {...common}
          type="number"
          inputMode="decimal"
          min={number.min}
          max={number.max}
          step={number.integer ? 1 : 'any'}
          onChange={(event) => onChange(event.target.value)}
        />
      ) : (
        <input
          {...common}
          type="text"
          spellCheck={false}
          autoComplete="off"
          onChange={(event) => onChange(event.target.value)}
        />
      )}
      {hint && (
        <p id={hintId} className="muted field-hint">
          {hint}
        </p>
      )}
    </div>
  );
}
