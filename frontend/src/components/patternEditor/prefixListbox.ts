// The prefix list as a listbox, the same in the workspace and on the review screen: the
// list holds focus and moves the cursor with aria-activedescendant (the keys are the
// list's, see prefixListKeys.ts and selection.ts); a row is an option that takes clicks,
// not focus.
import type { Dispatch, MouseEvent } from 'react';

import type { SelectionAction } from './selection';

/** The list's attributes; `activeId` is the id of the cursor's row. */
export function prefixListboxProps(label: string, activeId: string | undefined, readOnly: boolean) {
  return {
    role: 'listbox',
    'aria-multiselectable': 'true',
    'aria-label': label,
    'aria-activedescendant': activeId,
    'aria-readonly': readOnly,
    tabIndex: 0,
  } as const;
}

/** A row's attributes: click (or shift-click) selects the `index`-th prefix. */
export function prefixOptionProps(
  id: string,
  selected: boolean,
  index: number,
  dispatch: Dispatch<SelectionAction>,
) {
  return {
    id,
    role: 'option',
    'aria-selected': selected,
    // Keep a shift-click from selecting the page's text.
    onMouseDown: (event: MouseEvent) => event.shiftKey && event.preventDefault(),
    onClick: (event: MouseEvent) => dispatch({ type: 'click', index, shift: event.shiftKey }),
  } as const;
}
