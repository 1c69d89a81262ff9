import type { AdminAnnotator } from '../../../api/types';

export function AnnotatorChoices({
  annotators,
  chosen,
  setChosen,
  legend,
}: {
  annotators: AdminAnnotator[];
  chosen: number[];
  setChosen: (update: (current: number[]) => number[]) => void;
  legend: string;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {annotators.map((annotator) => (
        <label key={annotator.id} className="checkbox">
          <input
            type="checkbox"
            checked={chosen.includes(annotator.id)}
            onChange={(e) =>
              setChosen((current) =>
                e.target.checked
                  ? [...current, annotator.id]
                  : current.filter((each) => each !== annotator.id),
              )
            }
          />
          {annotator.username}
        </label>
      ))}
    </fieldset>
  );
}
