import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { MiningRun, MiningRunCreateRequest, MiningRunStatus } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { ProgressBar } from '../../../components/ProgressBar';
import { manageKeys } from '../api/queryKeys';

const FINISHED: ReadonlySet<MiningRunStatus> = new Set(['done', 'failed', 'cancelled']);
export const POLL_MS = 1_000;

export function isActive(run: MiningRun): boolean {
  return !FINISHED.has(run.status);
}

/** 3725 → "1:02:05", 65 → "1:05". */
export function formatDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const two = (value: number) => String(value).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

export function MiningPage() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  // Polled about once a second while a run is in progress (and after a failed poll).
  const query = useQuery({
    queryKey: manageKeys.miningRuns(),
    queryFn: () => api.admin.miningRuns(),
    refetchInterval: (q) =>
      q.state.status === 'error' || q.state.data?.some(isActive) ? POLL_MS : false,
  });
  const runs = query.data;
  const error = query.isError ? errorMessage(query.error, t) : null;

  function replace(run: MiningRun) {
    queryClient.setQueryData<MiningRun[]>(manageKeys.miningRuns(), (current) => {
      const others = (current ?? []).filter((each) => each.id !== run.id);
      return [run, ...others].sort((a, b) => b.id - a.id);
    });
    // The server's list is the truth: a poll under way may have missed this change.
    void queryClient.invalidateQueries({ queryKey: manageKeys.miningRuns() });
  }

  return (
    <section className="stack">
      <h1>{t('mining.heading')}</h1>
      <MiningForm onCreated={replace} />
      <h2>{t('mining.runs')}</h2>
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
      {query.isPending && <Loading />}
      {runs?.length === 0 && <p className="muted">{t('mining.noRuns')}</p>}
      {runs && runs.length > 0 && (
        <ul className="runs" data-testid="mining-runs">
          {runs.map((run) => (
            <MiningRunCard key={run.id} run={run} onChanged={replace} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function MiningRunCard({
  run,
  onChanged,
}: {
  run: MiningRun;
  onChanged: (run: MiningRun) => void;
}) {
  const { t, i18n } = useTranslation();
  const cancelling = useMutation({
    mutationFn: () => api.admin.cancelMiningRun(run.id),
    onSuccess: onChanged,
  });
  const busy = cancelling.isPending;
  const error = cancelling.isError ? errorMessage(cancelling.error, t) : null;
  const numbers = new Intl.NumberFormat(i18n.language, { maximumFractionDigits: 0 });
  const p = run.progress;
  const active = isActive(run);

  return (
    <li className="card run" data-testid="mining-run" data-status={run.status}>
      <div className="run-head">
        <strong>{run.study_name}</strong>
        <span className={`status-badge run-${run.status}`} data-testid="run-status">
          {t(`mining.status.${run.status}`)}
          {run.cancel_requested && active && ` · ${t('mining.cancelling')}`}
        </span>
        {run.study_id !== null && run.status === 'done' && (
          <Link to={`/manage/studies/${run.study_id}`}>{t('mining.openStudy')}</Link>
        )}
      </div>
      <p className="muted">
        {run.model} · {run.corpus}
      </p>
      <div className="progress-cell">
        <ProgressBar
          value={p.sentences_done}
          max={p.sentences_total}
          label={t('mining.progressLabel', { name: run.study_name })}
        />
        <span className="progress-text" data-testid="run-sentences">
          {t('mining.sentences', {
            done: numbers.format(p.sentences_done),
            total: numbers.format(p.sentences_total),
          })}
        </span>
      </div>
      <p className="run-stats muted">
        {active ? (
          <>
            <span data-testid="run-speed">
              {t('mining.speed', { rate: numbers.format(p.tokens_per_second) })}
            </span>
            {' · '}
            <span data-testid="run-eta">
              {p.eta_seconds === null
                ? t('mining.etaUnknown')
                : t('mining.eta', { time: formatDuration(p.eta_seconds) })}
            </span>
            {run.duration_seconds !== null && (
              <>
                {' · '}
                <span data-testid="run-duration">
                  {t('mining.elapsed', { time: formatDuration(run.duration_seconds) })}
                </span>
              </>
            )}
          </>
        ) : (
          <>
            {run.duration_seconds !== null && (
              <span data-testid="run-duration">
                {t('mining.duration', { time: formatDuration(run.duration_seconds) })}
              </span>
            )}
            {run.final_tokens_per_second !== null && (
              <>
                {run.duration_seconds !== null && ' · '}
                <span data-testid="run-final-speed">
                  {t('mining.finalSpeed', { rate: numbers.format(run.final_tokens_per_second) })}
                </span>
              </>
            )}
          </>
        )}
        {' · '}
        {t('mining.shards', { done: p.shards_done, total: p.shards_total })}
      </p>
      {run.error && (
        <p className={run.status === 'failed' ? 'alert' : 'muted'} data-testid="run-error">
          {run.error}
        </p>
      )}
      {active && !run.cancel_requested && (
        <button
          type="button"
          onClick={() => cancelling.mutate()}
          disabled={busy}
          aria-label={t('mining.cancelNamed', { name: run.study_name })}
        >
          {t('mining.cancel')}
        </button>
      )}
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
    </li>
  );
}

type FormValues = {
  study_name: string;
  model: string;
  corpus: string;
  sentences: 'split' | 'lines';
  keys_per_layer: string;
  all_keys: boolean;
  perturb: boolean;
  top_k: string;
  seed: string;
  device: string;
  dtype: 'float32' | 'bfloat16';
  max_sentences: string;
  max_tokens: string;
  shards: string;
};

const DEFAULTS: FormValues = {
  study_name: '',
  model: 'builtin:minilm',
  corpus: 'builtin:wiki-vital',
  sentences: 'split',
  keys_per_layer: '10',
  all_keys: false,
  perturb: false,
  top_k: '25',
  seed: '0',
  device: 'cpu',
  dtype: 'float32',
  max_sentences: '',
  max_tokens: '128',
  shards: '1',
};

function MiningForm({ onCreated }: { onCreated: (run: MiningRun) => void }) {
  const { t } = useTranslation();
  const [values, setValues] = useState<FormValues>(DEFAULTS);
  const creating = useMutation({
    mutationFn: (body: MiningRunCreateRequest) => api.admin.createMiningRun(body),
    onSuccess: (run) => {
      onCreated(run);
      setValues((current) => ({ ...current, study_name: '' }));
    },
  });
  const busy = creating.isPending;
  const error = creating.isError ? errorMessage(creating.error, t) : null;

  function set<K extends keyof FormValues>(key: K, value: FormValues[K]) {
    setValues((current) => ({ ...current, [key]: value }));
  }

  function start(event: FormEvent) {
    event.preventDefault();
    const body: MiningRunCreateRequest = {
      study_name: values.study_name.trim(),
      model: values.model.trim(),
      corpus: values.corpus.trim(),
      sentences: values.sentences,
      keys_per_layer: Number(values.keys_per_layer),
      all_keys: values.all_keys,
      perturb: values.perturb,
      top_k: Number(values.top_k),
      seed: Number(values.seed),
      device: values.device.trim(),
      dtype: values.dtype,
      max_sentences: values.max_sentences ? Number(values.max_sentences) : null,
      max_tokens: Number(values.max_tokens),
      shards: Number(values.shards),
    };
    creating.mutate(body);
  }

  const text = (key: keyof FormValues, type = 'text', extra: Record<string, unknown> = {}) => (
    <div className="field">
      <label htmlFor={`mine-${key}`}>{t(`mining.fields.${key}`)}</label>
      <input
        id={`mine-${key}`}
        type={type}
        value={values[key] as string}
        onChange={(e) => set(key, e.target.value as never)}
        {...extra}
      />
    </div>
  );

  return (
    <form className="card form-grid" onSubmit={start} aria-labelledby="mine-heading">
      <h2 id="mine-heading">{t('mining.formHeading')}</h2>
      <div className="inline-fields">
        {text('study_name', 'text', { required: true, maxLength: 200 })}
        {text('model', 'text', { required: true })}
        {text('corpus', 'text', { required: true })}
      </div>
      <div className="inline-fields">
        <div className="field">
          <label htmlFor="mine-sentences">{t('mining.fields.sentences')}</label>
          <select
            id="mine-sentences"
            value={values.sentences}
            onChange={(e) => set('sentences', e.target.value as FormValues['sentences'])}
          >
            <option value="split">{t('mining.sentencesSplit')}</option>
            <option value="lines">{t('mining.sentencesLines')}</option>
          </select>
        </div>
        {text('keys_per_layer', 'number', { min: 1, disabled: values.all_keys })}
        <label className="checkbox">
          <input
            type="checkbox"
            checked={values.all_keys}
            onChange={(e) => set('all_keys', e.target.checked)}
          />
          {t('mining.fields.all_keys')}
        </label>
        {text('top_k', 'number', { min: 1, max: 28 })}
        {text('seed', 'number', { min: 0 })}
        <label className="checkbox">
          <input
            type="checkbox"
            checked={values.perturb}
            onChange={(e) => set('perturb', e.target.checked)}
          />
          {t('mining.fields.perturb')}
        </label>
      </div>
      <div className="inline-fields">
        {text('device')}
        <div className="field">
          <label htmlFor="mine-dtype">{t('mining.fields.dtype')}</label>
          <select
            id="mine-dtype"
            value={values.dtype}
            onChange={(e) => set('dtype', e.target.value as FormValues['dtype'])}
          >
            <option value="float32">float32</option>
            <option value="bfloat16">bfloat16</option>
          </select>
        </div>
        {text('max_sentences', 'number', { min: 1 })}
        {text('max_tokens', 'number', { min: 2, max: 4096 })}
        {text('shards', 'number', { min: 1, max: 1024 })}
      </div>
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {t('mining.start')}
        </button>
      </div>
    </form>
  );
}
