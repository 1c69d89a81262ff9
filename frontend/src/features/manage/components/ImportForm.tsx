import { useMutation } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';

import { api, isApiError } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { ImportErrors, StudyImported } from '../../../api/types';

/** The errors of a refused import (HTTP 400 `{detail, code, errors[]}`), or null. */
export function importErrorsOf(error: unknown): ImportErrors | null {
  if (!isApiError(error) || error.status !== 400) return null;
  const body = error.body as Partial<ImportErrors> | undefined;
  if (!body || !Array.isArray(body.errors)) return null;
  const errors = body.errors.filter((each): each is string => typeof each === 'string');
  const code = typeof body.code === 'string' ? body.code : null;
  return {
    detail: typeof body.detail === 'string' ? body.detail : (errors[0] ?? ''),
    code: code as ImportErrors['code'],
    errors,
  };
}

/**
 * Upload a JSONL export (ffkv.annotations/v1) into a new study: archived (read-only,
 * unseen by annotators) unless the admin makes it live, and assigned only on request.
 * A taken name and a file that is no JSONL export are said in the form's own words.
 */
export function ImportForm({ onImported }: { onImported?: (result: StudyImported) => void }) {
  const { t } = useTranslation();
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState('');
  const [live, setLive] = useState(false);
  const [assign, setAssign] = useState(false);
  const [result, setResult] = useState<StudyImported | null>(null);
  const [refused, setRefused] = useState<ImportErrors | null>(null);
  const [takenName, setTakenName] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const nameInput = useRef<HTMLInputElement>(null);

  const upload = useMutation({
    mutationFn: ({ file, studyName }: { file: File; studyName: string | undefined }) =>
      api.admin.importStudy(file, studyName, { live, assign }),
    onSuccess: (imported) => {
      setResult(imported);
      onImported?.(imported);
    },
    onError: (failure, { studyName }) => {
      const errors = importErrorsOf(failure);
      if (errors?.code === 'study_name_taken') {
        setTakenName(studyName ?? '');
        nameInput.current?.focus();
      } else if (errors?.code === 'not_jsonl') {
        setError(t('report.import.notJsonl'));
      } else if (errors && errors.errors.length > 0) {
        setRefused(errors);
      } else {
        setError(errorMessage(failure, t));
      }
    },
  });
  const busy = upload.isPending;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!file) return setError(t('report.import.pickFile'));
    setError(null);
    setRefused(null);
    setTakenName(null);
    setResult(null);
    upload.mutate({ file, studyName: name.trim() || undefined });
  }

  return (
    <form
      className="card form-grid"
      onSubmit={submit}
      aria-labelledby="import-heading"
      data-testid="import-form"
    >
      <h2 id="import-heading">{t('report.import.heading')}</h2>
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
        <input
          id="import-name"
          ref={nameInput}
          value={name}
          aria-invalid={takenName !== null}
          aria-describedby={takenName !== null ? 'import-name-taken' : undefined}
          onChange={(event) => {
            setName(event.target.value);
            setTakenName(null);
          }}
        />
        {takenName !== null && (
          <p id="import-name-taken" role="alert" className="alert">
            {takenName
              ? t('report.import.nameTaken', { name: takenName })
              : t('report.import.fileNameTaken')}
          </p>
        )}
      </div>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={live}
          onChange={(event) => {
            setLive(event.target.checked);
            if (!event.target.checked) setAssign(false);
          }}
        />
        {t('report.import.live')}
      </label>
      <p className="muted">{t('report.import.liveHint')}</p>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={assign}
          disabled={!live}
          onChange={(event) => setAssign(event.target.checked)}
        />
        {t('report.import.assign')}
      </label>
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
          {result.archived
            ? t('report.import.isArchived')
            : t('report.import.isLive', { count: result.assignments })}{' '}
          <Link to={`/manage/studies/${result.study_id}`}>{t('report.import.open')}</Link>
          {result.users_created.length > 0 && (
            <> {t('report.import.usersCreated', { users: result.users_created.join(', ') })}</>
          )}
        </p>
      )}
    </form>
  );
}
