import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { Batch, BatchCreateRequest, StudyDetail } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { manageKeys } from '../api/queryKeys';
import { StudyGuidelines } from '../components/StudyGuidelines';

export function StudyPage() {
  const { studyId } = useParams();
  const id = Number(studyId);
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const study = useQuery({ queryKey: manageKeys.study(id), queryFn: () => api.admin.study(id) });
  const batches = useQuery({
    queryKey: manageKeys.batches(id),
    queryFn: () => api.admin.batches(id),
  });
  // The choice shows at once, and is put back if the server refuses it.
  const valueTokens = useMutation({
    mutationFn: (show: boolean) => api.admin.updateStudy(id, { show_value_tokens: show }),
    onMutate: async (show) => {
      const key = manageKeys.study(id);
      await queryClient.cancelQueries({ queryKey: key });
      const before = queryClient.getQueryData<StudyDetail>(key);
      if (before)
        queryClient.setQueryData<StudyDetail>(key, { ...before, show_value_tokens: show });
      return { before };
    },
    onSuccess: (updated) => queryClient.setQueryData(manageKeys.study(id), updated),
    onError: (_failure, _show, context) => {
      if (context?.before) queryClient.setQueryData(manageKeys.study(id), context.before);
    },
  });
  const saving = valueTokens.isPending;
  const error = valueTokens.isError ? errorMessage(valueTokens.error, t) : null;

  if (study.data === undefined) {
    return study.isError ? (
      <p role="alert" className="alert">
        {errorMessage(study.error, t)}
      </p>
    ) : (
      <Loading />
    );
  }
  const data = study.data;
  return (
    <section className="stack">
      <Link to="/manage" className="back-link">
        {t('manage.backToStudies')}
      </Link>
      <div className="section-head">
        <h1>{data.name}</h1>
        <Link to={`/manage/studies/${id}/report`} data-testid="report-link">
          {t('report.open')}
        </Link>
        <Link to={`/manage/studies/${id}/annotators`} data-testid="annotator-table-link">
          {t('report.annotatorTable')}
        </Link>
      </div>
      <div className="card">
        <dl className="facts">
          <dt>{t('manage.model')}</dt>
          <dd>{data.model_name}</dd>
          <dt>{t('manage.corpus')}</dt>
          <dd>{data.corpus}</dd>
          <dt>{t('manage.shape')}</dt>
          <dd>{t('manage.shapeValue', { layers: data.n_layers, dff: data.d_ff })}</dd>
          <dt>{t('manage.topK')}</dt>
          <dd>{data.top_k}</dd>
          <dt>{t('manage.keys')}</dt>
          <dd>{data.key_count}</dd>
        </dl>
        <label className="checkbox">
          <input
            type="checkbox"
            checked={data.show_value_tokens}
            disabled={saving}
            onChange={(event) => valueTokens.mutate(event.target.checked)}
          />
          {t('manage.showValueTokens')}
        </label>
        <p className="muted">{t('manage.showValueTokensHint')}</p>
        {error && (
          <p role="alert" className="alert">
            {error}
          </p>
        )}
      </div>

      <CheckRateForm study={data} />

      <StudyGuidelines studyId={id} />

      <h2>{t('manage.batches')}</h2>
      {batches.isPending && <Loading />}
      {batches.isError && (
        <p role="alert" className="alert">
          {errorMessage(batches.error, t)}
        </p>
      )}
      {batches.data !== undefined &&
        (batches.data.length === 0 ? (
          <p className="muted">{t('manage.noBatches')}</p>
        ) : (
          <table className="assignments" data-testid="batches">
            <thead>
              <tr>
                <th scope="col">{t('manage.batch')}</th>
                <th scope="col">{t('manage.keys')}</th>
                <th scope="col">{t('manage.assignedTo')}</th>
              </tr>
            </thead>
            <tbody>
              {batches.data.map((batch) => (
                <tr key={batch.id}>
                  <th scope="row">
                    <Link to={`/manage/studies/${id}/batches/${batch.id}`}>{batch.name}</Link>
                  </th>
                  <td>{batch.key_count}</td>
                  <td>{batch.annotators.map((a) => a.username).join(', ') || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {data.archived ? (
        <p className="card muted" data-testid="archived-notice">
          {t('manage.archivedNotice')}
        </p>
      ) : (
        <BatchForm study={data} />
      )}
    </section>
  );
}

/** The stored share (0..1) as a whole percentage for the box. */
function ratePercent(rate: number): number {
  return Math.round(rate * 100);
}

/** A whole percentage from 0 to 100, or null when the box holds anything else. */
export function parsePercent(text: string): number | null {
  if (!/^\d{1,3}$/.test(text.trim())) return null;
  const percent = Number(text.trim());
  return percent <= 100 ? percent : null;
}

/** The share of the keys given to an annotator that each bring a check key (``check_rate``). */
function CheckRateForm({ study }: { study: StudyDetail }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [value, setValue] = useState(String(ratePercent(study.check_rate)));
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Computed from the box as it is now, so it follows every keystroke.
  const percent = parsePercent(value);
  const problem = percent === null ? t('manage.checkRate.invalid') : null;

  const checkRate = useMutation({
    mutationFn: (rate: number) => api.admin.updateStudy(study.id, { check_rate: rate }),
    onSuccess: (updated) => {
      queryClient.setQueryData(manageKeys.study(study.id), updated);
      setValue(String(ratePercent(updated.check_rate)));
      setSaved(true);
    },
    onError: (failure) => setError(errorMessage(failure, t)),
  });
  const busy = checkRate.isPending;

  function save(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setSaved(false);
    if (percent === null) return;
    checkRate.mutate(percent / 100);
  }

  const current = Math.round(study.check_rate * 1000) / 10;
  return (
    <form
      className="card form-grid"
      noValidate
      onSubmit={save}
      aria-labelledby="check-rate-heading"
    >
      <h2 id="check-rate-heading">{t('manage.checkRate.heading')}</h2>
      <p className="muted">{t('manage.checkRate.hint')}</p>
      <p data-testid="check-keys-count">
        {study.check_keys === 0
          ? t('manage.checkRate.none')
          : t('manage.checkRate.count', { count: study.check_keys })}
      </p>
      <div className="inline-fields">
        <div className="field">
          <label htmlFor="check-rate">{t('manage.checkRate.label')}</label>
          <input
            id="check-rate"
            type="number"
            min={0}
            max={100}
            step={1}
            value={value}
            aria-invalid={problem !== null}
            aria-describedby={problem ? 'check-rate-problem' : undefined}
            onChange={(e) => {
              setValue(e.target.value);
              setSaved(false);
            }}
          />
        </div>
        <button type="submit" className="primary" disabled={busy}>
          {t('manage.checkRate.save')}
        </button>
      </div>
      <p className="muted" data-testid="check-rate-current">
        {current === 0
          ? t('manage.checkRate.off')
          : t('manage.checkRate.current', { percent: current })}
      </p>
      {problem && (
        <p id="check-rate-problem" role="alert" className="alert" data-testid="check-rate-problem">
          {problem}
        </p>
      )}
      {saved && (
        <p role="status" className="success" data-testid="check-rate-saved">
          {t('manage.checkRate.saved')}
        </p>
      )}
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
    </form>
  );
}

type Mode = BatchCreateRequest['mode'];

/** "3:17, 4:2" or one "layer:index" per line → key references. */
export function parseKeyList(text: string): { layer: number; index: number }[] | null {
  const parts = text.split(/[\s,;]+/).filter(Boolean);
  const keys = [];
  for (const part of parts) {
    const match = /^(\d+):(\d+)$/.exec(part);
    if (!match) return null;
    keys.push({ layer: Number(match[1]), index: Number(match[2]) });
  }
  return keys;
}

function BatchForm({ study }: { study: StudyDetail }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [mode, setMode] = useState<Mode>('layer');
  const [layers, setLayers] = useState<number[]>([]);
  const [n, setN] = useState('10');
  const [seed, setSeed] = useState('0');
  const [keyList, setKeyList] = useState('');
  const [error, setError] = useState<string | null>(null);

  function toggleLayer(layer: number, on: boolean) {
    setLayers((current) =>
      on ? [...current, layer].sort((a, b) => a - b) : current.filter((l) => l !== layer),
    );
  }

  const creating = useMutation({
    mutationFn: (body: BatchCreateRequest) => api.admin.createBatch(study.id, body),
    onSuccess: (batch) => {
      // The batch page finds the new batch in the study's list at once.
      queryClient.setQueryData<Batch[]>(manageKeys.batches(study.id), (list) =>
        list ? [...list.filter((each) => each.id !== batch.id), batch] : list,
      );
      void queryClient.invalidateQueries({ queryKey: manageKeys.batches(study.id) });
      navigate(`/manage/studies/${study.id}/batches/${batch.id}`);
    },
    onError: (failure) => setError(errorMessage(failure, t)),
  });
  // Still busy once made: the page is on its way to the new batch.
  const busy = creating.isPending || creating.isSuccess;

  function create(event: FormEvent) {
    event.preventDefault();
    setError(null);
    const body: BatchCreateRequest = { name: name.trim(), mode, seed: Number(seed) || 0 };
    if (mode === 'layer') {
      if (layers.length === 0) return setError(t('batchForm.pickLayer'));
      body.layers = layers;
    } else if (mode === 'random') {
      body.n = Number(n);
      if (layers.length > 0) body.layers = layers;
    } else {
      const keys = parseKeyList(keyList);
      if (!keys || keys.length === 0) return setError(t('batchForm.badList'));
      body.keys = keys;
    }
    creating.mutate(body);
  }

  return (
    <form className="card form-grid" onSubmit={create} aria-labelledby="batch-form-heading">
      <h2 id="batch-form-heading">{t('batchForm.heading')}</h2>
      <div className="field">
        <label htmlFor="batch-name">{t('batchForm.name')}</label>
        <input id="batch-name" required value={name} onChange={(e) => setName(e.target.value)} />
      </div>
      <fieldset>
        <legend>{t('batchForm.mode')}</legend>
        {(['layer', 'random', 'list'] as const).map((value) => (
          <label key={value} className="radio">
            <input
              type="radio"
              name="batch-mode"
              value={value}
              checked={mode === value}
              onChange={() => setMode(value)}
            />
            {t(`batchForm.modes.${value}`)}
          </label>
        ))}
      </fieldset>
      {mode !== 'list' && (
        <fieldset>
          <legend>
            {mode === 'layer' ? t('batchForm.layers') : t('batchForm.layersOptional')}
          </legend>
          <div className="layer-choices">
            {study.layers.map(({ layer, key_count }) => (
              <label key={layer} className="checkbox">
                <input
                  type="checkbox"
                  checked={layers.includes(layer)}
                  onChange={(e) => toggleLayer(layer, e.target.checked)}
                />
                {t('batchForm.layerOption', { layer, count: key_count })}
              </label>
            ))}
          </div>
        </fieldset>
      )}
      {mode === 'random' && (
        <div className="inline-fields">
          <div className="field">
            <label htmlFor="batch-n">{t('batchForm.n')}</label>
            <input
              id="batch-n"
              type="number"
              min={1}
              value={n}
              onChange={(e) => setN(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="batch-seed">{t('batchForm.seed')}</label>
            <input
              id="batch-seed"
              type="number"
              min={0}
              value={seed}
              onChange={(e) => setSeed(e.target.value)}
            />
          </div>
        </div>
      )}
      {mode === 'list' && (
        <div className="field">
          <label htmlFor="batch-keys">{t('batchForm.keys')}</label>
          <textarea
            id="batch-keys"
            rows={4}
            value={keyList}
            placeholder="1:17, 3:402"
            onChange={(e) => setKeyList(e.target.value)}
          />
          <span className="muted">{t('batchForm.keysHint')}</span>
        </div>
      )}
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {t('batchForm.create')}
        </button>
      </div>
    </form>
  );
}
