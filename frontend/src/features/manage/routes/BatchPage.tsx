import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type {
  AdminAnnotator,
  Batch,
  BatchKeyStatus,
  BatchProgress,
  ProgressCounts,
} from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { ProgressBar } from '../../../components/ProgressBar';
import { manageKeys } from '../api/queryKeys';

/** Every annotator, for the assign and extend forms (one cache entry for both). */
function useAnnotators() {
  return useQuery({ queryKey: manageKeys.annotators(), queryFn: () => api.admin.annotators() });
}

export function BatchPage() {
  const { studyId, batchId } = useParams();
  const study = Number(studyId);
  const id = Number(batchId);
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const batches = useQuery({
    queryKey: manageKeys.batches(study),
    queryFn: () => api.admin.batches(study),
  });
  const progress = useQuery({
    queryKey: manageKeys.batchProgress(id),
    queryFn: () => api.admin.batchProgress(id),
  });
  // Kept here, not in the forms: the form that sent the request is replaced once the
  // batch reloads (assigned → the extension form; more annotators → a fresh one).
  const [notice, setNotice] = useState<string | null>(null);
  function done(text: string) {
    setNotice(text);
    for (const queryKey of [
      manageKeys.batches(study),
      manageKeys.batchProgress(id),
      manageKeys.batchKeys(id),
      manageKeys.annotators(),
    ]) {
      void queryClient.invalidateQueries({ queryKey });
    }
  }

  const batch = batches.data?.find((each) => each.id === id);
  // A list from before the batch was made: wait for the fresh one before saying "no such batch".
  if (batches.isPending || (!batch && batches.isFetching)) return <Loading />;
  if (batches.data === undefined) {
    return (
      <p role="alert" className="alert">
        {errorMessage(batches.error, t)}
      </p>
    );
  }
  if (!batch) {
    return (
      <p role="alert" className="alert">
        {t('manage.batchNotFound')}
      </p>
    );
  }
  return (
    <section className="stack">
      <Link to={`/manage/studies/${study}`} className="back-link">
        {t('manage.backToStudy')}
      </Link>
      <h1>{t('manage.batchHeading', { name: batch.name })}</h1>
      <p className="muted">{t('manage.batchKeys', { count: batch.key_count })}</p>
      <div className="card">
        <h2>{t('manage.assignedTo')}</h2>
        {batch.annotators.length === 0 ? (
          <p className="muted">{t('manage.nobodyYet')}</p>
        ) : (
          <ul data-testid="batch-annotators">
            {batch.annotators.map((annotator) => (
              <li key={annotator.id}>{annotator.username}</li>
            ))}
          </ul>
        )}
      </div>
      {batch.annotators.length === 0 ? (
        <AssignForm batch={batch} onAssigned={done} />
      ) : progress.data !== undefined ? (
        <ExtendForm
          key={`${batch.annotators.length}-${progress.data.annotators_per_key_min}`}
          batch={batch}
          currentOverlap={progress.data.annotators_per_key_min}
          onExtended={done}
        />
      ) : null}
      {notice && (
        <p role="status" className="success" data-testid="assign-done">
          {notice}
        </p>
      )}
      <div className="section-head">
        <h2>{t('progress.heading')}</h2>
        <button type="button" onClick={() => void progress.refetch()}>
          {t('progress.refresh')}
        </button>
      </div>
      {progress.isPending && <Loading />}
      {/* A failed refresh says so above the figures it could not bring up to date. */}
      {progress.isError && (
        <p role="alert" className="alert">
          {errorMessage(progress.error, t)}
        </p>
      )}
      {progress.data !== undefined && <ProgressDashboard progress={progress.data} />}
      <BatchKeys batch={batch} />
    </section>
  );
}

type OverlapProblem =
  | { key: 'assignForm.overlapNotNumber'; values: Record<string, never> }
  | { key: 'extendForm.overlapTooLow'; values: { current: number } }
  | { key: 'assignForm.overlapTooHigh'; values: { overlap: number; count: number } };

/** The message for an overlap problem; `tooHigh` names the limit as the form has it. */
function useOverlapText(
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

function AnnotatorChoices({
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

function OverlapField({
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

function AssignForm({ batch, onAssigned }: { batch: Batch; onAssigned: (notice: string) => void }) {
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

/** Add annotators to an assigned batch and/or raise its overlap. */
function ExtendForm({
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

export const BATCH_KEYS_PAGE = 50;

const STATUS_LABEL = {
  new: 'progress.new',
  draft: 'progress.draft',
  submitted: 'progress.submitted',
} as const satisfies Record<BatchKeyStatus, string>;

/** The batch's keys a page at a time, a column per annotator of the batch. */
export function BatchKeys({ batch }: { batch: Batch }) {
  const { t } = useTranslation();
  const [offset, setOffset] = useState(0);
  // The page on screen stays there while the next one loads.
  const query = useQuery({
    queryKey: manageKeys.batchKeysPage(batch.id, offset),
    queryFn: () => api.admin.batchKeys(batch.id, offset, BATCH_KEYS_PAGE),
    placeholderData: keepPreviousData,
  });
  const page = query.data;
  const people = batch.annotators;
  return (
    <div className="stack">
      <h2 id="batch-keys-heading">{t('batchKeys.heading')}</h2>
      {query.isPending && <Loading />}
      {query.isError && (
        <p role="alert" className="alert">
          {errorMessage(query.error, t)}
        </p>
      )}
      {page !== undefined && (
        <>
          <table
            className="assignments"
            data-testid="batch-keys"
            aria-labelledby="batch-keys-heading"
          >
            <thead>
              <tr>
                <th scope="col">{t('batchKeys.key')}</th>
                {people.map((person) => (
                  <th scope="col" key={person.id}>
                    {person.username}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {page.results.map((key) => {
                const status = new Map(key.annotators.map((a) => [a.annotator_id, a.status]));
                return (
                  <tr key={key.key_id} data-testid="batch-key">
                    <th scope="row">
                      {t('batchKeys.keyName', { layer: key.layer, index: key.index })}
                    </th>
                    {people.map((person) => {
                      const s = status.get(person.id);
                      return (
                        <td key={person.id} data-status={s ?? 'none'}>
                          {s ? (
                            t(STATUS_LABEL[s])
                          ) : (
                            <span className="muted">{t('batchKeys.notAssigned')}</span>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                );
              })}
            </tbody>
          </table>
          <div className="inline-fields">
            <button
              type="button"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - BATCH_KEYS_PAGE))}
            >
              {t('batchKeys.previous')}
            </button>
            <span data-testid="batch-keys-range">
              {t('batchKeys.range', {
                from: page.count === 0 ? 0 : page.offset + 1,
                to: page.offset + page.results.length,
                count: page.count,
              })}
            </span>
            <button
              type="button"
              disabled={offset + BATCH_KEYS_PAGE >= page.count}
              onClick={() => setOffset(offset + BATCH_KEYS_PAGE)}
            >
              {t('batchKeys.next')}
            </button>
          </div>
        </>
      )}
    </div>
  );
}

function CountsCells({ counts, label }: { counts: ProgressCounts; label: string }) {
  const { t } = useTranslation();
  return (
    <>
      <td>
        <div className="progress-cell">
          <ProgressBar value={counts.submitted} max={counts.keys_assigned} label={label} />
          <span className="progress-text">
            {t('progress.submittedOf', {
              submitted: counts.submitted,
              total: counts.keys_assigned,
            })}
          </span>
        </div>
      </td>
      <td>{counts.draft}</td>
      <td>{counts.new}</td>
    </>
  );
}

export function ProgressDashboard({ progress }: { progress: BatchProgress }) {
  const { t } = useTranslation();
  const head = (first: string) => (
    <thead>
      <tr>
        <th scope="col">{first}</th>
        <th scope="col">{t('progress.submitted')}</th>
        <th scope="col">{t('progress.draft')}</th>
        <th scope="col">{t('progress.new')}</th>
      </tr>
    </thead>
  );
  return (
    <div className="stack" data-testid="batch-progress">
      <p>
        {t('progress.overlap', {
          min: progress.annotators_per_key_min,
          max: progress.annotators_per_key_max,
          keys: progress.keys_total,
        })}
      </p>
      <table className="assignments">
        <caption>{t('progress.perAnnotator')}</caption>
        {head(t('progress.annotator'))}
        <tbody>
          <tr>
            <th scope="row">{t('progress.total')}</th>
            <CountsCells counts={progress.total} label={t('progress.total')} />
          </tr>
          {progress.per_annotator.map((row) => (
            <tr key={row.annotator_id} data-testid="progress-annotator">
              <th scope="row">
                {row.username}
                {!row.is_active && <span className="muted"> ({t('progress.inactive')})</span>}
              </th>
              <CountsCells counts={row} label={row.username} />
            </tr>
          ))}
        </tbody>
      </table>
      <table className="assignments">
        <caption>{t('progress.perLayer')}</caption>
        {head(t('progress.layer'))}
        <tbody>
          {progress.per_layer.map((row) => (
            <tr key={row.layer} data-testid="progress-layer">
              <th scope="row">{t('progress.layerN', { layer: row.layer })}</th>
              <CountsCells counts={row} label={t('progress.layerN', { layer: row.layer })} />
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
