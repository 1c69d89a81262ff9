import { forwardRef, useEffect, useRef } from 'react';
import type { Dispatch } from 'react';
import { useTranslation } from 'react-i18next';

import type { PrefixLabelValue, TriggerPrefix } from '../api/types';
import type { DisplayPattern } from './labels';
import { Coefficient } from './Coefficient';
import { prefixListboxProps, prefixOptionProps } from './prefixListbox';
import { PrefixText } from './PrefixText';
import { markBidiControls, TokenText } from './tokenDisplay';
import type { SelectionAction, SelectionState } from './selection';

interface PrefixListProps {
  prefixes: readonly TriggerPrefix[];
  isCausal: boolean;
  selection: SelectionState;
  dispatch: Dispatch<SelectionAction>;
  patterns: readonly DisplayPattern[];
  labels: ReadonlyMap<number, PrefixLabelValue>;
  readOnly: boolean;
}

export function rowId(rank: number): string {
  return `prefix-${rank}`;
}

export const PrefixList = forwardRef<HTMLDivElement, PrefixListProps>(function PrefixList(
  { prefixes, isCausal, selection, dispatch, patterns, labels, readOnly },
  ref,
) {
  const { t } = useTranslation();
  const max = Math.max(0, ...prefixes.map((prefix) => prefix.coefficient));
  const cursorRank = prefixes[selection.cursor]?.rank;

  // The cursor's row is kept on screen as it moves; not when the list first shows, which
  // would scroll the page past the composer.
  const shownRank = useRef(cursorRank);
  useEffect(() => {
    if (cursorRank === undefined || cursorRank === shownRank.current) return;
    shownRank.current = cursorRank;
    const row = document.getElementById(rowId(cursorRank));
    if (row && typeof row.scrollIntoView === 'function') row.scrollIntoView({ block: 'nearest' });
  }, [cursorRank]);

  return (
    <div
      ref={ref}
      className="prefix-list"
      {...prefixListboxProps(
        t('workspace.prefixes'),
        cursorRank === undefined ? undefined : rowId(cursorRank),
        readOnly,
      )}
      data-testid="prefix-list"
    >
      {prefixes.map((prefix, index) => {
        const selected = selection.selected.has(prefix.rank);
        const covering = patterns.filter((pattern) => pattern.prefix_ranks.includes(prefix.rank));
        const label = labels.get(prefix.rank) ?? 'not-covered';
        return (
          <div
            key={prefix.rank}
            {...prefixOptionProps(rowId(prefix.rank), selected, index, dispatch)}
            data-testid="prefix-row"
            data-rank={prefix.rank}
            className={[
              'prefix-row',
              selected ? 'selected' : '',
              index === selection.cursor ? 'cursor' : '',
            ].join(' ')}
          >
            <span className="rank" aria-label={t('workspace.rank', { rank: prefix.rank })}>
              {prefix.rank}
            </span>
            <span className="prefix-body">
              <PrefixText prefix={prefix} isCausal={isCausal} />
              <span className="next-token" title={t('workspace.nextToken')}>
                <span className="visually-hidden">{t('workspace.nextToken')}: </span>
                {'→'}
                {prefix.next_token === null ? (
                  <span className="token unknown">{t('workspace.nextTokenUnknown')}</span>
                ) : (
                  <TokenText token={prefix.next_token} bytes={prefix.next_token_bytes} />
                )}
              </span>
            </span>
            <Coefficient coefficient={prefix.coefficient} max={max} />
            <span className="row-labels" data-testid="prefix-label" data-label={label}>
              {covering.length === 0 ? (
                <span className="not-covered">{t('labels.not-covered')}</span>
              ) : (
                <>
                  {covering.map((pattern) => (
                    <span
                      key={pattern.id}
                      className={`chip pc-${pattern.colour}${pattern.pending ? ' pending' : ''}`}
                      title={markBidiControls(pattern.description)}
                      data-testid="pattern-chip"
                    >
                      {t('workspace.patternNumber', { number: pattern.number })}
                    </span>
                  ))}
                  <span className="label-text">{t(`labels.${label}`)}</span>
                </>
              )}
            </span>
          </div>
        );
      })}
    </div>
  );
});
