import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { Batch } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { useAnnotators } from '../hooks/useAnnotators';
import { OverlapField, overlapProblem, useOverlapText } from './OverlapField';
import { AnnotatorChoices } from './AnnotatorChoices';

export function AssignForm({
  batch,
  onAssigned,
}: {
  batch: Batch;
  onAssigned: (notice: string) => void;
}) {
  const { t } = useTranslation();
  const annotators = useAnnotators();
  const [chosen, setChosen] = useState<number[]>([]);
  const [overlap, setOverlap] = useState('1');
  const [tried, setTried] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const assigning = useMutation({
    mutationFn: (body: { annotators: number[]; overlap: number }) =>
      api.admin.assign(batch.id, body),
    onSuccess: () => {
      setChosen([]);
      setTried(false);
      onAssigned(t('assignForm.done'));
    },
    onError: (failure) => setError(errorMessage(failure, t)),
  });
  const busy = assigning.isPending;

  // Computed from the form as it is now, so they follow every tick and keystroke.
  const nobody = tried && chosen.length === 0 ? t('assignForm.pickSomeone') : null;
  const problem = overlapProblem(overlap, chosen.length, 1);
  const overlapText = useOverlapText(problem, 'assignForm.overlapTooHigh');

  function assign(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setTried(true);
    if (chosen.length === 0 || problem) return;
    assigning.mutate({ annotators: chosen, overlap: Number(overlap) });
  }

  return (
    <form className="card form-grid" noValidate onSubmit={assign} aria-labelledby="assign-heading">
      <h2 id="assign-heading">{t('assignForm.heading')}</h2>
      {annotators.isPending && <Loading />}
      {annotators.isError && (
        <p role="alert" className="alert">
          {errorMessage(annotators.error, t)}
        </p>
      )}
      {annotators.data !== undefined && (
        <AnnotatorChoices
          annotators={annotators.data.filter((annotator) => annotator.is_active)}
          chosen={chosen}
          setChosen={setChosen}
          legend={t('assignForm.annotators')}
        />
      )}
      {nobody && (
        <p role="alert" className="alert" data-testid="assign-problem">
          {nobody}
        </p>
      )}
      <OverlapField
        id="assign-overlap"
        value={overlap}
        onChange={setOverlap}
        problem={overlapText}
      />
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {t('assignForm.assign')}
        </button>
      </div>
    </form>
  );
}
