import { useTranslation } from 'react-i18next';

import { isApiError } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import { Loading } from '../../../components/Loading';
import { Markdown } from '../../../components/Markdown';
import { Modal } from '../../../components/Modal';
import type { Guidelines } from '../hooks/useGuidelines';

/**
 * Shown instead of the key while the annotator has not acknowledged the study's
 * guidelines (`first`), or has not read their newest version (`changed`). The workspace
 * stays mounted behind it: nothing queued for the key is lost.
 */
export function GuidelinesGate({ guidelines }: { guidelines: Guidelines }) {
  const { t } = useTranslation();
  const { data, gate } = guidelines;
  const changedMeanwhile =
    isApiError(guidelines.acknowledgeError) &&
    guidelines.acknowledgeError.code === 'guidelines_changed';
  // Until they are read, whether they are new or changed is not known.
  if (!data && !guidelines.error) return <Loading />;
  return (
    <section className="card guidelines-gate" aria-labelledby="guidelines-gate-heading">
      <h1 id="guidelines-gate-heading">
        {gate === 'changed' ? t('guidelines.changed') : t('guidelines.title')}
      </h1>
      <p className="muted">
        {gate === 'changed'
          ? t('guidelines.changedHint', { version: data?.version ?? '' })
          : t('guidelines.firstHint')}
      </p>
      {guidelines.error ? (
        <p role="alert" className="alert">
          {t('guidelines.loadFailed')} {errorMessage(guidelines.error, t)}
        </p>
      ) : (
        data && (
          <>
            <p className="muted" data-testid="guidelines-version">
              {t('guidelines.version', { version: data.version })}
            </p>
            <Markdown text={data.text} className="guidelines-text" />
            {guidelines.acknowledgeError && (
              <p role="alert" className="alert">
                {changedMeanwhile
                  ? t('guidelines.changedMeanwhile')
                  : errorMessage(guidelines.acknowledgeError, t)}
              </p>
            )}
            <button
              type="button"
              className="primary"
              onClick={guidelines.acknowledge}
              disabled={guidelines.acknowledging}
            >
              {t('guidelines.acknowledge')}
            </button>
          </>
        )
      )}
    </section>
  );
}

/** The guidelines at any time from the workspace (its button, or `g`). */
export function GuidelinesDialog({ guidelines }: { guidelines: Guidelines }) {
  const { t } = useTranslation();
  const { data } = guidelines;
  return (
    <Modal
      labelledBy="guidelines-dialog-heading"
      onClose={guidelines.closeDialog}
      className="guidelines-dialog"
      testId="guidelines-dialog"
    >
      <h2 id="guidelines-dialog-heading">{t('guidelines.title')}</h2>
      {!guidelines.hasGuidelines ? (
        <p>{t('guidelines.none')}</p>
      ) : guidelines.error ? (
        <p role="alert" className="alert">
          {t('guidelines.loadFailed')} {errorMessage(guidelines.error, t)}
        </p>
      ) : !data ? (
        <Loading />
      ) : (
        <>
          <p className="muted">{t('guidelines.version', { version: data.version })}</p>
          <Markdown text={data.text} className="guidelines-text" />
        </>
      )}
      <button type="button" onClick={guidelines.closeDialog}>
        {t('help.close')}
      </button>
    </Modal>
  );
}
