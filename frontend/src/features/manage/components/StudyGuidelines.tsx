import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import { Loading } from '../../../components/Loading';
import { Markdown } from '../../../components/Markdown';
import { manageKeys } from '../api/queryKeys';

/** The server's limit on a version's text (annotate.models.GUIDELINE_MAX_LENGTH). */
export const GUIDELINES_MAX_LENGTH = 100_000;

/**
 * The study page's guidelines: the current version as annotators see it, an editor with
 * a preview that publishes the next version, and every version with how many
 * acknowledged it.
 */
export function StudyGuidelines({ studyId }: { studyId: number }) {
  const { t, i18n } = useTranslation();
  const queryClient = useQueryClient();
  const versions = useQuery({
    queryKey: manageKeys.guidelines(studyId),
    queryFn: () => api.admin.guidelines(studyId),
  });
  const [text, setText] = useState<string | null>(null);
  const [published, setPublished] = useState<number | null>(null);
  const publish = useMutation({
    mutationFn: (body: string) => api.admin.publishGuidelines(studyId, body),
    onSuccess: (version) => {
      setPublished(version.version);
      setText(null);
      void queryClient.invalidateQueries({ queryKey: manageKeys.guidelines(studyId) });
    },
  });

  if (versions.data === undefined) {
    return (
      <section aria-labelledby="guidelines-heading">
        <h2 id="guidelines-heading">{t('guidelines.section')}</h2>
        {versions.isError ? (
          <p role="alert" className="alert">
            {errorMessage(versions.error, t)}
          </p>
        ) : (
          <Loading />
        )}
      </section>
    );
  }
  const current = versions.data[0];
  // The editor starts from the current text: a new version is most often an edit.
  const draft = text ?? current?.text ?? '';
  const next = (current?.version ?? 0) + 1;
  const tooLong = draft.length > GUIDELINES_MAX_LENGTH;
  const date = (at: string) =>
    new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }).format(
      new Date(at),
    );

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (!draft.trim() || tooLong) return;
    setPublished(null);
    publish.mutate(draft);
  }

  return (
    <section aria-labelledby="guidelines-heading" className="stack" data-testid="study-guidelines">
      <h2 id="guidelines-heading">{t('guidelines.section')}</h2>
      <div className="card" data-testid="guidelines-current">
        <h3>{t('guidelines.current')}</h3>
        {current ? (
          <>
            <p className="muted">{t('guidelines.version', { version: current.version })}</p>
            <Markdown text={current.text} className="guidelines-text" />
          </>
        ) : (
          <p className="muted">{t('guidelines.noneYet')}</p>
        )}
      </div>
      <form className="card" onSubmit={onSubmit}>
        <label htmlFor="guidelines-editor">{t('guidelines.editor')}</label>
        <textarea
          id="guidelines-editor"
          rows={10}
          value={draft}
          onChange={(event) => {
            setText(event.target.value);
            setPublished(null);
          }}
          aria-describedby={tooLong ? 'guidelines-too-long' : undefined}
        />
        {tooLong && (
          <p id="guidelines-too-long" className="alert">
            {t('guidelines.tooLong', { max: GUIDELINES_MAX_LENGTH, count: draft.length })}
          </p>
        )}
        <h3>{t('guidelines.preview')}</h3>
        <div className="guidelines-preview" data-testid="guidelines-preview">
          {draft.trim() ? (
            <Markdown text={draft} className="guidelines-text" />
          ) : (
            <p className="muted">{t('guidelines.emptyPreview')}</p>
          )}
        </div>
        {publish.isError && (
          <p role="alert" className="alert">
            {errorMessage(publish.error, t)}
          </p>
        )}
        {published !== null && (
          <p role="status" className="muted">
            {t('guidelines.published', { version: published })}
          </p>
        )}
        <button
          type="submit"
          className="primary"
          disabled={publish.isPending || !draft.trim() || tooLong || draft === current?.text}
        >
          {t('guidelines.publish', { version: next })}
        </button>
      </form>
      {versions.data.length > 0 && (
        <div className="card">
          <h3>{t('guidelines.versions')}</h3>
          <ul data-testid="guideline-versions">
            {versions.data.map((version) => (
              <li key={version.version}>
                {t('guidelines.versionBy', {
                  version: version.version,
                  author: version.created_by ?? t('guidelines.someone'),
                  date: date(version.created_at),
                })}{' '}
                · {t('guidelines.acknowledgedBy', { count: version.acknowledged_by })}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
