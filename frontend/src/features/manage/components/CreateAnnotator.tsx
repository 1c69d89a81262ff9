import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import { useTranslation } from 'react-i18next';

import { api } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AnnotatorWithLink } from '../../../api/types';

export function CreateAnnotator({ onCreated }: { onCreated: (link: AnnotatorWithLink) => void }) {
  const { t } = useTranslation();
  const inputId = useId();
  const [username, setUsername] = useState('');
  const creating = useMutation({
    mutationFn: (name: string) => api.admin.createAnnotator(name),
    onSuccess: (made) => {
      onCreated(made);
      setUsername('');
    },
  });
  const busy = creating.isPending;
  const error = creating.isError ? errorMessage(creating.error, t) : null;

  function create(event: FormEvent) {
    event.preventDefault();
    creating.mutate(username.trim());
  }

  return (
    <form className="card form-grid" onSubmit={create} aria-labelledby={`${inputId}-heading`}>
      <h2 id={`${inputId}-heading`}>{t('annotators.createHeading')}</h2>
      <div className="field">
        <label htmlFor={inputId}>{t('annotators.newUsername')}</label>
        <input
          id={inputId}
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          required
          maxLength={150}
          value={username}
          onChange={(e) => setUsername(e.target.value)}
        />
      </div>
      {error && (
        <p role="alert" className="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" className="primary" disabled={busy || username.trim() === ''}>
          {t('annotators.create')}
        </button>
      </div>
    </form>
  );
}
