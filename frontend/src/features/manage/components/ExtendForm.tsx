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

/** Add annotators to an assigned batch and/or raise its overlap. */
export function ExtendForm({
  batch,
  currentOverlap,
  onExtended,
}: {
  batch: Batch;
  currentOverlap: number;
  onExtended: (notice: string) => void;
}) {
  const { t } = useTranslation();
  const annotators = useAnnotators();
  const [chosen, setChosen] = useState<number[]>([]);
  const [overlap, setOverlap] = useState(String(currentOverlap));
  const [tried, setTried] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const extending = useMutation({
    mutationFn: (body: { annotators: number[]; overlap: number }) =>
      api.admin.extendAssignment(batch.id, body),
    onSuccess: (result) => {
      const parts = [t('extendForm.done', { count: result.keys_added })];
      if (result.keys_short > 0) parts.push(t('extendForm.short', { count: result.keys_short }));
      setChosen([]);
      setTried(false);
      onExtended(parts.join(' '));
    },
    onError: (failure) => setError(errorMessage(failure, t)),
  });
  const busy = extending.isPending;
  const onBatch = new Set(batch.annotators.map((annotator) => annotator.id));
  const loaded = annotators.data ?? [];
  const activeOnBatch = loaded.filter((a) => a.is_active && onBatch.has(a.id)).length;
  const addable = loaded.filter((a) => a.is_active && !onBatch.has(a.id));
  const problem = overlapProblem(overlap, activeOnBatch + chosen.length, currentOverlap);
  const overlapText = useOverlapText(problem, 'extendForm.overlapTooHigh');

  if (annotators.data === undefined) {
    return annotators.isError ? (
      <p role="alert" className="alert">
        {errorMessage(annotators.error, t)}
      </p>
    ) : (
      <Loading />
    );
  }
  const idle = chosen.length === 0 && Number(overlap) === currentOverlap;
  const nothing = tried && idle ? t('extendForm.nothingToDo') : null;

  function extend(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setTried(true);
    if (idle || problem) return;
    extending.mutate({ annotators: chosen, overlap: Number(overlap) });
  }

  return (
    <form className="card form-grid" noValidate onSubmit={extend} aria-labelledby="extend-heading">
      <h2 id="extend-heading">{t('extendForm.heading')}</h2>
      <p className="muted">{t('extendForm.intro')}</p>
      {addable.length === 0 ? (
        <p className="muted">{t('extendForm.noOneToAdd')}</p>
      ) : (
        <AnnotatorChoices
          annotators={addable}
          chosen={chosen}
          setChosen={setChosen}
          legend={t('extendForm.add')}
        />
      )}
      <OverlapField
        id="extend-overlap"
        value={overlap}
        onChange={setOverlap}
        problem={overlapText}
      />
      {nothing && (
        <p role="alert" className="alert" data-testid="extend-problem">
          {nothing}
        </p>
      )}
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {t('extendForm.submit')}
        </button>
      </div>
    </form>
  );
}
