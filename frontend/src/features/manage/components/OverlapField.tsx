import { useTranslation } from 'react-i18next';

export type OverlapProblem =
  | { key: 'assignForm.overlapNotNumber'; values: Record<string, never> }
  | { key: 'extendForm.overlapTooLow'; values: { current: number } }
  | { key: 'assignForm.overlapTooHigh'; values: { overlap: number; count: number } };

/** The message for an overlap problem; `tooHigh` names the limit as the form has it. */
export function useOverlapText(
  problem: OverlapProblem | null,
  tooHigh: 'assignForm.overlapTooHigh' | 'extendForm.overlapTooHigh',
): string | null {
  const { t } = useTranslation();
  if (problem === null) return null;
  if (problem.key === 'assignForm.overlapTooHigh') return t(tooHigh, problem.values);
  if (problem.key === 'extendForm.overlapTooLow') return t(problem.key, problem.values);
  return t(problem.key);
}

/**
 * What is wrong with an overlap typed as `text`: not a whole number ≥ 1, below `min`
 * (the batch's current overlap), or above `max` annotators (0: none chosen yet, so no
 * limit to name).
 */
export function overlapProblem(text: string, max: number, min: number): OverlapProblem | null {
  const overlap = Number(text);
  if (text.trim() === '' || !Number.isInteger(overlap) || overlap < 1) {
    return { key: 'assignForm.overlapNotNumber', values: {} };
  }
  if (overlap < min) return { key: 'extendForm.overlapTooLow', values: { current: min } };
  if (max > 0 && overlap > max) {
    return { key: 'assignForm.overlapTooHigh', values: { overlap, count: max } };
  }
  return null;
}

export function OverlapField({
  id,
  value,
  onChange,
  problem,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  problem: string | null;
}) {
  const { t } = useTranslation();
  const problemId = `${id}-problem`;
  return (
    <div className="field narrow">
      <label htmlFor={id}>{t('assignForm.overlap')}</label>
      <input
        id={id}
        type="number"
        min={1}
        value={value}
        aria-invalid={problem !== null}
        aria-describedby={problem ? problemId : undefined}
        onChange={(e) => onChange(e.target.value)}
      />
      <span className="muted">{t('assignForm.overlapHint')}</span>
      {problem && (
        <p id={problemId} role="alert" className="alert" data-testid="overlap-problem">
          {problem}
        </p>
      )}
    </div>
  );
}
