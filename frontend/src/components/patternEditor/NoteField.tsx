import type { Ref } from 'react';

import { SaveState } from '../../lib/writeQueue/SaveState';
import type { SaveStatus } from '../../lib/writeQueue/writeQueue';

/** A key's note (the annotation's or the gold's), saved as it is typed, with its save state. */
export function NoteField({
  id,
  label,
  draft,
  status,
  message,
  readOnly,
  onChange,
  onFlush,
  ref,
}: {
  id: string;
  label: string;
  draft: string | null;
  status: SaveStatus;
  message: string;
  readOnly: boolean;
  onChange: (value: string) => void;
  onFlush: () => void;
  ref?: Ref<HTMLTextAreaElement>;
}) {
  return (
    <>
      <div className="note-heading">
        <label htmlFor={id} className="note-label">
          {label}
        </label>
        <SaveState
          status={status}
          message={message}
          live={false}
          id={`${id}-state`}
          testId="note-save-state"
        />
      </div>
      <textarea
        id={id}
        aria-describedby={`${id}-state`}
        ref={ref}
        value={draft ?? ''}
        readOnly={readOnly}
        maxLength={20000}
        rows={3}
        onChange={(event) => onChange(event.target.value)}
        onBlur={onFlush}
      />
    </>
  );
}
