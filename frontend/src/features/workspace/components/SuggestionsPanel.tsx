import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import type { Suggestion } from '../../../api/types';
import { SuggestionSummary } from '../../../components/evidence/SuggestionSummary';

/** A cluster has no description: the annotator writes one as they accept it. */
function DescribeAndAccept({
  number,
  busy,
  onAccept,
  onCancel,
}: {
  number: number;
  busy: boolean;
  onAccept: (description: string) => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const [text, setText] = useState('');
  const id = `suggestion-description-${number}`;
  return (
    <form
      className="composer-actions"
      onSubmit={(event) => {
        event.preventDefault();
        if (text.trim()) onAccept(text.trim());
      }}
    >
      <label htmlFor={id}>{t('evidence.describeCluster')}</label>
      <input
        id={id}
        value={text}
        onChange={(event) => setText(event.target.value)}
        // Opened by the user's own click on Accept: the field is where they type next.
        // eslint-disable-next-line jsx-a11y/no-autofocus
        autoFocus
        required
        data-testid="suggestion-description"
      />
      <button
        type="submit"
        disabled={busy || !text.trim()}
        data-testid="suggestion-accept-described"
      >
        {t('evidence.acceptDescribed')}
      </button>
      <button type="button" onClick={onCancel}>
        {t('evidence.cancel')}
      </button>
    </form>
  );
}

/**
 * The machine's suggestions for the key (docs/evidence.md, "Suggestions"): a rule's shows
 * its rule, a cluster's its prefixes (Select its prefixes marks them in the list); each
 * can be accepted (it becomes the annotator's pattern, marked "suggestion", to edit like
 * any other) or dismissed. All by Tab and Enter; the buttons name their suggestion.
 */
export function SuggestionsPanel({
  suggestions,
  readOnly,
  busy,
  failed = false,
  error = null,
  onAccept,
  onDismiss,
  onShow,
}: {
  suggestions: readonly Suggestion[];
  readOnly: boolean;
  busy: boolean;
  failed?: boolean;
  error?: string | null;
  onAccept: (suggestion: Suggestion, description?: string) => void;
  onDismiss: (suggestion: Suggestion) => void;
  onShow: (suggestion: Suggestion) => void;
}) {
  const { t } = useTranslation();
  const [describing, setDescribing] = useState<number | null>(null);
  const open = suggestions.filter((suggestion) => suggestion.decision !== 'dismissed');
  return (
    <section
      className="card suggestions"
      aria-labelledby="suggestions-heading"
      data-testid="suggestions"
    >
      <h2 id="suggestions-heading">{t('evidence.suggestions')}</h2>
      {error && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
      {failed ? (
        <p className="alert">{t('evidence.suggestionsFailed')}</p>
      ) : open.length === 0 ? (
        <p className="muted">{t('evidence.suggestionsEmpty')}</p>
      ) : (
        <>
          <p className="muted">{t('evidence.suggestionsHint')}</p>
          <ol className="suggestion-list">
            {open.map((suggestion, index) => {
              const number = index + 1;
              const accepted = suggestion.decision === 'accepted';
              return (
                <li
                  key={suggestion.id}
                  className={`suggestion${accepted ? ' decided' : ''}`}
                  data-testid="suggestion"
                  data-suggestion-id={suggestion.id}
                  data-method={suggestion.method}
                  data-decision={suggestion.decision ?? ''}
                >
                  <SuggestionSummary number={number} suggestion={suggestion} />
                  <div className="composer-actions">
                    <button type="button" onClick={() => onShow(suggestion)}>
                      {t('evidence.showPrefixes')}
                    </button>
                    {accepted ? (
                      <span className="muted" data-testid="suggestion-accepted">
                        {t('evidence.accepted')}
                      </span>
                    ) : (
                      <>
                        <button
                          type="button"
                          disabled={readOnly || busy}
                          onClick={() =>
                            suggestion.description
                              ? onAccept(suggestion)
                              : setDescribing(suggestion.id)
                          }
                          aria-label={t('evidence.acceptNamed', { number })}
                          data-testid="suggestion-accept"
                        >
                          {t('evidence.accept')}
                        </button>
                        <button
                          type="button"
                          disabled={readOnly || busy}
                          onClick={() => onDismiss(suggestion)}
                          aria-label={t('evidence.dismissNamed', { number })}
                          data-testid="suggestion-dismiss"
                        >
                          {t('evidence.dismiss')}
                        </button>
                      </>
                    )}
                  </div>
                  {describing === suggestion.id && !accepted && (
                    <DescribeAndAccept
                      number={number}
                      busy={busy}
                      onAccept={(description) => {
                        setDescribing(null);
                        onAccept(suggestion, description);
                      }}
                      onCancel={() => setDescribing(null)}
                    />
                  )}
                </li>
              );
            })}
          </ol>
        </>
      )}
    </section>
  );
}
