import type { CSSProperties, Dispatch, ReactNode, Ref } from 'react';
import { useTranslation } from 'react-i18next';

import type { ReviewAnnotation } from '../../../api/review';
import type { PrefixLabelValue, TriggerPrefix } from '../../../api/types';
import palette from '../../report/lib/figure2Palette.json';
import { PrefixGrid } from '../../../components/patternEditor/PrefixGrid';
import type { SelectionAction, SelectionState } from '../../../components/patternEditor/selection';
import { visibleToken } from '../lib/visibleToken';
import type { Shading } from '../../../components/evidence/ExampleText';

const COLOURS = palette as Record<PrefixLabelValue, string>;
/** Dark text where the palette's colour is light, white where it is dark. */
const INK: Record<PrefixLabelValue, string> = {
  shallow: '#ffffff',
  semantic: '#1b1b1b',
  'shallow+semantic': '#ffffff',
  'not-covered': '#1b1b1b',
};

/** An annotator column's letter: A … Z, then AA, AB … (the legend gives each its name). */
export function columnLetter(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return letters;
}

/** The token after the prefix, as the workspace shows it, in its visible form. */
function NextToken({ token }: { token: string | null }) {
  const { t } = useTranslation();
  return (
    <span className="next-token" title={t('workspace.nextToken')} data-testid="next-token">
      <span className="visually-hidden">{t('workspace.nextToken')}: </span>
      {'→'}
      {token === null ? (
        <span className="token unknown">{t('workspace.nextTokenUnknown')}</span>
      ) : (
        <span className="token">{visibleToken(token)}</span>
      )}
    </span>
  );
}

function LabelCell({ label, who }: { label: PrefixLabelValue; who: string }) {
  const { t } = useTranslation();
  return (
    <span
      className="label-cell"
      data-testid="label-cell"
      data-who={who}
      data-label={label}
      title={`${who}: ${t(`labels.${label}`)}`}
      style={{ background: COLOURS[label], color: INK[label] }}
    >
      <span aria-hidden="true">{t(`review.short.${label}`)}</span>
      <span className="visually-hidden">
        {who}: {t(`labels.${label}`)}
      </span>
    </span>
  );
}

interface ReviewGridProps {
  prefixes: readonly TriggerPrefix[];
  isCausal: boolean;
  annotations: readonly ReviewAnnotation[];
  goldLabels: ReadonlyMap<number, PrefixLabelValue>;
  selection: SelectionState;
  dispatch: Dispatch<SelectionAction>;
  readOnly: boolean;
  shading?: Shading;
  /** What follows the grid in its column (the samples and held-out examples). */
  after?: ReactNode;
  ref?: Ref<HTMLDivElement>;
}

/**
 * The curator's prefixes: a column of labels per annotator (lettered, the legend names
 * them) and one for the gold, a row marked where the annotators disagree.
 */
export function ReviewGrid({ annotations, goldLabels, after, ...grid }: ReviewGridProps) {
  const { t } = useTranslation();
  // One label column per annotator and one for the gold, the same in the head and the rows
  // (styles.css sizes them from this count).
  const columns = { '--label-columns': annotations.length + 1 } as CSSProperties;
  const letters = annotations.map((_, column) => columnLetter(column));
  const labelsAt = (index: number) =>
    annotations.map(
      (annotation) => annotation.labels[index] ?? ('not-covered' as PrefixLabelValue),
    );
  const disagrees = (index: number) => new Set(labelsAt(index)).size > 1;

  return (
    <div className="review-main review-grid-wrap" style={columns}>
      <ul className="column-legend" aria-label={t('review.columns')} data-testid="annotator-legend">
        {annotations.map((annotation, column) => (
          <li key={annotation.id}>
            <span className="column-letter">{letters[column]}</span>{' '}
            {annotation.status === 'submitted'
              ? annotation.annotator
              : t('review.nameDraft', { name: annotation.annotator })}
          </li>
        ))}
        <li>{t('review.gold')}</li>
      </ul>
      <div className="review-grid-head" aria-hidden="true">
        <span className="rank">#</span>
        <span className="prefix-body">{t('workspace.prefixes')}</span>
        <span className="coefficient-head">{t('workspace.coefficient')}</span>
        <span className="review-labels">
          {annotations.map((annotation, column) => (
            <span
              key={annotation.id}
              className="label-head"
              data-testid="label-head"
              title={t('review.columnName', {
                letter: letters[column],
                name: annotation.annotator,
              })}
            >
              <span className="column-letter">{letters[column]}</span>
              <span className="column-name">{annotation.annotator}</span>
            </span>
          ))}
          <span className="label-head" data-testid="label-head" title={t('review.gold')}>
            {t('review.gold')}
          </span>
          <span className="disagree-slot" />
        </span>
      </div>
      <PrefixGrid
        {...grid}
        idPrefix="review-prefix"
        testId="review-grid"
        rowTestId="review-row"
        className="review-grid"
        nextToken={(prefix) => <NextToken token={prefix.next_token} />}
        rowExtras={(_, index) => {
          const disagree = disagrees(index);
          return {
            className: ['review-row', disagree ? 'disagree' : ''].join(' '),
            data: { 'data-disagree': disagree },
          };
        }}
        labels={(prefix, index) => {
          const labels = labelsAt(index);
          return (
            <span className="review-labels">
              {annotations.map((annotation, column) => (
                <LabelCell key={annotation.id} label={labels[column]!} who={annotation.annotator} />
              ))}
              <LabelCell
                label={goldLabels.get(prefix.rank) ?? 'not-covered'}
                who={t('review.gold')}
              />
              {disagrees(index) ? (
                <span
                  className="disagree-slot disagree-mark"
                  data-testid="disagree-mark"
                  title={t('review.disagree')}
                >
                  ≠<span className="visually-hidden">{t('review.disagree')}</span>
                </span>
              ) : (
                <span className="disagree-slot" />
              )}
            </span>
          );
        }}
      />
      {after}
    </div>
  );
}
