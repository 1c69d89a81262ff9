import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';

import { api, isApiError } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { ImportErrors, StudyImported } from '../../../api/types';

/** The errors of a refused import (HTTP 400 `{detail, errors[]}`), or null. */
export function importErrorsOf(error: unknown): ImportErrors | null {
  if (!isApiError(error) || error.status !== 400) return null;
  const body = error.body as Partial<ImportErrors> | undefined;
  if (!body || !Array.isArray(body.errors)) return null;
  const errors = body.errors.filter((each): each is string => typeof each === 'string');
  const detail = typeof body.detail === 'string' ? body.detail : (errors[0] ?? '');
  return { detail, code: 'import_refused', errors };
}

/** Upload a JSONL export (ffkv.annotations/v1) into a new study. */
export function ImportForm() {
  const { t } = useTranslation();
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<StudyImported | null>(null);
  const [refused, setRefused] = useState<ImportErrors | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!file) return setError(t('report.import.pickFile'));
    setBusy(true);
    setError(null);
    setRefused(null);
    setResult(null);
    try {
      setResult(await api.admin.importStudy(file, name.trim() || undefined));
    } catch (failure) {
      const errors = importErrorsOf(failure);
      if (errors && errors.errors.length > 0) setRefused(errors);
      else setError(errorMessage(failure, t));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      className="card form-grid"
      onSubmit={(event) => void submit(event)}
      aria-labelledby="import-heading"
      data-testid="import-form"
    >
      <h3 id="import-heading">{t('report.import.heading')}</h3>
      <p className="muted">{t('report.import.hint')}</p>
      <div className="field">
        <label htmlFor="import-file">{t('report.import.file')}</label>
        <input
          id="import-file"
          type="file"
          accept=".jsonl,application/jsonl,application/x-ndjson"
          onChange={(event) => setFile(event.target.files?.[0] ?? null)}
        />
      </div>
      <div className="field">
        <label htmlFor="import-name">{t('report.import.name')}</label>
        <input id="import-name" value={name} onChange={(event) => setName(event.target.value)} />
      </div>
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t('report.import.uploading') : t('report.import.submit')}
        </button>
      </div>
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
      {refused && (
        <div role="alert" className="alert" data-testid="import-errors">
          <p>{t('report.import.refused', { count: refused.errors.length })}</p>
          <ol className="import-errors">
            {refused.errors.map((message, i) => (
              <li key={i}>{message}</li>
            ))}
          </ol>
        </div>
      )}
      {result && (
        <p role="status" className="success" data-testid="import-result">
          {t('report.import.done', {
            name: result.study_name,
            keys: result.keys,
            annotations: result.annotations,
            patterns: result.patterns,
          })}{' '}
          <Link to={`/manage/studies/${result.study_id}`}>{t('report.import.open')}</Link>
          {result.users_created.length > 0 && (
            <>
              {' '}
              {t('report.import.usersCreated', { users: result.users_created.join(', ') })}
            </>
          )}
        </p>
      )}
    </form>
  );
}
