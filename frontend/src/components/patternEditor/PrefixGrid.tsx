import { useEffect, useRef } from 'react';
import type { Dispatch, ReactNode, Ref } from 'react';
import { useTranslation } from 'react-i18next';

import type { TriggerPrefix } from '../../api/types';
import { Coefficient } from './Coefficient';
import { prefixListboxProps, prefixOptionProps } from './prefixListbox';
import { ExampleText } from '../evidence/ExampleText';
import type { Shading } from '../evidence/ExampleText';
import type { SelectionAction, SelectionState } from './selection';

/** What a screen adds to one row: its classes and data attributes. */
export interface RowExtras {
  className?: string;
  data?: Record<`data-${string}`, string | number | boolean>;
}

export interface PrefixGridProps<T extends TriggerPrefix> {
  prefixes: readonly T[];
  isCausal: boolean;
  selection: SelectionState;
  dispatch: Dispatch<SelectionAction>;
  readOnly: boolean;
  /** A row's element id is `${idPrefix}-${rank}` (aria-activedescendant points at it). */
  idPrefix: string;
  testId: string;
  rowTestId: string;
  className?: string;
  /** The token after the prefix, as the screen writes it. */
  nextToken: (prefix: T) => ReactNode;
  /** The row's last cell: its labels. */
  labels: (prefix: T, index: number) => ReactNode;
  rowExtras?: (prefix: T, index: number) => RowExtras;
  /** Token shading (components/evidence): off where absent. */
  shading?: Shading;
  ref?: Ref<HTMLDivElement>;
}

/**
 * A key's trigger prefixes as a listbox, on the workspace and on the review screen: the
 * rank, the prefix with its trigger, the next token, the coefficient's bar, then what the
 * screen puts in the row's last cell. Click and shift-click select (prefixListbox.ts); the
 * keys are the list's (prefixListKeys.ts).
 */
export function PrefixGrid<T extends TriggerPrefix>({
  prefixes,
  isCausal,
  selection,
  dispatch,
  readOnly,
  idPrefix,
  testId,
  rowTestId,
  className,
  nextToken,
  labels,
  rowExtras,
  shading,
  ref,
}: PrefixGridProps<T>) {
  const { t } = useTranslation();
  const max = Math.max(0, ...prefixes.map((prefix) => prefix.coefficient));
  const cursorRank = prefixes[selection.cursor]?.rank;
  const rowId = (rank: number) => `${idPrefix}-${rank}`;

  // The cursor's row is kept on screen as it moves; not when the list first shows, which
  // would scroll the page past the composer.
  const shownRank = useRef(cursorRank);
  useEffect(() => {
    if (cursorRank === undefined || cursorRank === shownRank.current) return;
    shownRank.current = cursorRank;
    const row = document.getElementById(`${idPrefix}-${cursorRank}`);
    if (row && typeof row.scrollIntoView === 'function') row.scrollIntoView({ block: 'nearest' });
  }, [cursorRank, idPrefix]);

  return (
    <div
      ref={ref}
      className={['prefix-list', className ?? ''].join(' ').trim()}
      {...prefixListboxProps(
        t('workspace.prefixes'),
        cursorRank === undefined ? undefined : rowId(cursorRank),
        readOnly,
      )}
      data-testid={testId}
    >
      {prefixes.map((prefix, index) => {
        const selected = selection.selected.has(prefix.rank);
        const extras = rowExtras?.(prefix, index) ?? {};
        return (
          <div
            key={prefix.rank}
            {...prefixOptionProps(rowId(prefix.rank), selected, index, dispatch)}
            data-testid={rowTestId}
            data-rank={prefix.rank}
            {...extras.data}
            className={[
              'prefix-row',
              extras.className ?? '',
              selected ? 'selected' : '',
              index === selection.cursor ? 'cursor' : '',
            ]
              .filter(Boolean)
              .join(' ')}
          >
            <span className="rank" aria-label={t('workspace.rank', { rank: prefix.rank })}>
              {prefix.rank}
            </span>
            <span className="prefix-body">
              <ExampleText example={prefix} isCausal={isCausal} shading={shading} />
              {nextToken(prefix)}
            </span>
            <Coefficient coefficient={prefix.coefficient} max={max} />
            {labels(prefix, index)}
          </div>
        );
      })}
    </div>
  );
}
