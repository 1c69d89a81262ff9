import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router-dom';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { Batch, BatchCreateRequest, StudyDetail } from '../../../api/types';
import { manageKeys } from '../api/queryKeys';

export type Mode = BatchCreateRequest['mode'];

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

export function BatchForm({ study }: { study: StudyDetail }) {
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
