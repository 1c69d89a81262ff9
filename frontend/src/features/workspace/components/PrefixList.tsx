import type { Dispatch, Ref } from 'react';
import { useTranslation } from 'react-i18next';

import type { PrefixLabelValue, TriggerPrefix } from '../../../api/types';
import type { DisplayPattern } from '../../../components/patternEditor/labels';
import { PrefixGrid } from '../../../components/patternEditor/PrefixGrid';
import { markBidiControls, TokenText } from '../../../components/patternEditor/tokenDisplay';
import type { SelectionAction, SelectionState } from '../../../components/patternEditor/selection';
import type { Shading } from '../../../components/evidence/ExampleText';

interface PrefixListProps {
  prefixes: readonly TriggerPrefix[];
  isCausal: boolean;
  selection: SelectionState;
  dispatch: Dispatch<SelectionAction>;
  patterns: readonly DisplayPattern[];
  labels: ReadonlyMap<number, PrefixLabelValue>;
  readOnly: boolean;
  shading?: Shading;
  ref?: Ref<HTMLDivElement>;
}

/** The annotator's prefixes: each row ends with the chips of the patterns that cover it. */
export function PrefixList({ patterns, labels, ...grid }: PrefixListProps) {
  const { t } = useTranslation();
  return (
    <PrefixGrid
      {...grid}
      idPrefix="prefix"
      testId="prefix-list"
      rowTestId="prefix-row"
      nextToken={(prefix) => (
        <span className="next-token" title={t('workspace.nextToken')}>
          <span className="visually-hidden">{t('workspace.nextToken')}: </span>
          {'→'}
          {prefix.next_token === null ? (
            <span className="token unknown">{t('workspace.nextTokenUnknown')}</span>
          ) : (
            <TokenText token={prefix.next_token} bytes={prefix.next_token_bytes} />
          )}
        </span>
      )}
      labels={(prefix) => {
        const covering = patterns.filter((pattern) => pattern.prefix_ranks.includes(prefix.rank));
        const label = labels.get(prefix.rank) ?? 'not-covered';
        return (
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
        );
      }}
    />
  );
}
