import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { KeyboardEvent as ReactKeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { api, isApiError } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { ReviewAnnotation, ReviewPattern } from '../../../api/review';
import type { AnnotationState } from '../../../api/types';
import { Loading } from '../../../components/Loading';
import { KeyboardHelp } from '../../../components/patternEditor/KeyboardHelp';
import type { KeyAction } from '../../../components/patternEditor/keymap';
import { applyPending, deriveLabels } from '../../../components/patternEditor/labels';
import { PatternComposer } from '../../../components/patternEditor/PatternComposer';
import { handlePrefixListKey } from '../../../components/patternEditor/prefixListKeys';
import { useQueueSnapshot } from '../../../lib/writeQueue/QueueContext';
import { SaveState } from '../../../lib/writeQueue/SaveState';
import { useCharacterKeys } from '../../../components/patternEditor/useCharacterKeys';
import { usePatternEditor } from '../../../components/patternEditor/usePatternEditor';
import { ValueTokens } from '../../../components/patternEditor/ValueTokens';
import { useNoteAutosave } from '../../../lib/writeQueue/useNoteAutosave';
import { useQueueNotices } from '../../../lib/writeQueue/useQueueNotices';
import { WorkspaceNotice } from '../../../lib/writeQueue/WorkspaceNotice';
import { newId } from '../../../lib/writeQueue/writeQueue';
import type { SaveStatus, WriteQueue } from '../../../lib/writeQueue/writeQueue';
import { FlagList } from '../components/FlagList';
import { REVIEW_KEYMAP, type ReviewAction } from '../lib/reviewKeymap';
import { goldState, useReviewQueue, withPendingSources } from '../hooks/reviewQueue';
import type { GoldDisplayPattern, GoldState } from '../hooks/reviewQueue';
import { columnLetter, ReviewGrid } from '../components/ReviewGrid';
import { reviewKeys } from '../api/queryKeys';

export function AdjudicationPage() {
  const { t } = useTranslation();
  const id = Number(useParams().keyId);
  const queue = useReviewQueue();
  if (!Number.isInteger(id) || id <= 0) return <p className="alert">{t('workspace.notFound')}</p>;
  if (!queue) return <Loading />;
  return <Adjudication key={id} keyId={id} queue={queue} />;
}

function Adjudication({ keyId, queue }: { keyId: number; queue: WriteQueue }) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const query = useQuery({
    queryKey: reviewKeys.key(keyId),
    queryFn: () => api.review.key(keyId),
    retry: (failures, error) =>
      failures < 5 && isApiError(error) && (error.status === 0 || error.status >= 500),
    gcTime: 0,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const detail = query.data;
  const [server, setServer] = useState<GoldState | null>(null);

  useEffect(() => {
    if (!detail) return;
    queue.observe(goldState(keyId, detail.gold));
    setServer((queue.stateOf(keyId) as GoldState | undefined) ?? goldState(keyId, detail.gold));
  }, [detail, queue, keyId]);

  const ready = detail !== undefined && server !== null;
  const snapshot = useQueueSnapshot(queue);
  const note = useNoteAutosave(queue, keyId, ready);
  const [helpOpen, setHelpOpen] = useState(false);
  const [characterKeys, setCharacterKeys] = useCharacterKeys();
  const noteRef = useRef<HTMLTextAreaElement>(null);

  const prefixes = useMemo(() => detail?.prefixes ?? [], [detail]);
  const ranks = useMemo(() => prefixes.map((prefix) => prefix.rank), [prefixes]);

  const pending = useMemo(
    () => snapshot.writes.filter((write) => write.keyId === keyId),
    [snapshot.writes, keyId],
  );
  const display = useMemo(() => (server ? applyPending(server, pending) : null), [server, pending]);
  const goldPatterns: GoldDisplayPattern[] = useMemo(
    () => withPendingSources(display?.patterns ?? [], pending, detail?.annotations ?? []),
    [display, pending, detail],
  );
  const goldLabels = useMemo(() => deriveLabels(ranks, goldPatterns), [ranks, goldPatterns]);
  // The annotator patterns in the gold (pending adoptions too): not adopted twice.
  const adoptedIds = useMemo(
    () => new Set(goldPatterns.map((pattern) => pattern.source_pattern_id)),
    [goldPatterns],
  );
  const submitted = display?.status === 'submitted';
  // Save gold never drops the pattern still in the composer: it asks first, as the
  // workspace's Submit does; the composer is empty after.
  const editor = usePatternEditor<GoldDisplayPattern>({
    keyId,
    queue,
    ranks,
    submitted,
    action: 'saveGold',
  });
  const { selection, dispatch, listRef, descriptionRef } = editor;
  const goldStatus =
    display?.status === 'submitted' || display?.status === 'draft' ? display.status : 'none';
  const lastCheck = [...pending].reverse().find((write) => write.op.type === 'check');
  const isCheck =
    lastCheck && lastCheck.op.type === 'check' ? lastCheck.op.isCheck : !!server?.is_check;
  const noteSaving = pending.some((write) => write.op.type === 'note');
  const noteStatus: SaveStatus = !noteSaving
    ? 'saved'
    : snapshot.status === 'saved'
      ? 'saving'
      : snapshot.status;

  // -- the queue's news about this key ---------------------------------------------

  const adopt = useCallback((state: AnnotationState) => {
    setServer((known) => (known && known.version > state.version ? known : (state as GoldState)));
  }, []);
  const replace = useCallback((state: AnnotationState) => setServer(state as GoldState), []);
  const { notice, setNotice } = useQueueNotices(queue, keyId, {
    adopt,
    replace,
    restore: editor.restoreRefused,
    serverNote: note.adoptServerNote,
  });

  // -- gold patterns ---------------------------------------------------------------

  /** Copy an annotator's pattern into the gold as it is (it can be edited after). */
  function adoptPattern(pattern: ReviewPattern) {
    if (submitted) {
      setNotice({
        kind: 'rejected',
        text: t('composer.blocked.submitted'),
        changes: [],
        place: 'patterns',
      });
      return;
    }
    queue.enqueue(keyId, {
      type: 'create',
      clientId: newId(),
      description: pattern.description,
      kind: pattern.kind,
      prefixRanks: [...pattern.prefix_ranks],
      sourcePatternId: pattern.id,
    });
  }

  /** Put an annotator's pattern in the composer, to be edited before it is adopted. */
  function editThenAdopt(annotation: ReviewAnnotation, pattern: ReviewPattern) {
    editor.load(
      {
        description: pattern.description,
        kind: pattern.kind,
        editing: null,
        source: { id: pattern.id, annotator: annotation.annotator },
      },
      pattern.prefix_ranks,
    );
  }

  function deleteGold(pattern: GoldDisplayPattern) {
    queue.enqueue(keyId, { type: 'delete', ref: { id: pattern.id, clientId: pattern.client_id } });
    editor.forget(pattern);
  }

  function saveGold() {
    if (submitted) return;
    queue.release(keyId);
    queue.enqueue(keyId, { type: 'submit' });
  }

  const requestSaveGold = () =>
    editor.guard.request(() => {
      editor.cancelEdit();
      saveGold();
    });

  function reopen() {
    queue.enqueue(keyId, { type: 'reopen' });
  }

  function setCheck(value: boolean) {
    queue.enqueue(keyId, { type: 'check', isCheck: value });
  }

  // -- the keyboard ----------------------------------------------------------------

  function focusedPattern(target: HTMLElement): ReviewPattern | null {
    const card = target.closest<HTMLElement>('[data-adopt-id]');
    if (!card || !detail) return null;
    const id = Number(card.dataset.adoptId);
    for (const annotation of detail.annotations) {
      const found = annotation.patterns.find((pattern) => pattern.id === id);
      if (found) return found;
    }
    return null;
  }

  function onKeyDown(event: ReactKeyboardEvent<HTMLElement>) {
    handlePrefixListKey(event, REVIEW_KEYMAP, characterKeys, {
      submit: requestSaveGold,
      leaveField: (field) => {
        if (field === noteRef.current) note.flush();
        listRef.current?.focus();
      },
      dispatch,
      lastIndex: ranks.length - 1,
      readOnly: submitted,
      setKind: editor.setKind,
      focusDescription: () => descriptionRef.current?.focus(),
      focusNote: () => noteRef.current?.focus(),
      other: (action, target) => {
        switch (action) {
          case 'adopt': {
            const pattern = focusedPattern(target);
            if (pattern && adoptedIds.has(pattern.id))
              setNotice({
                kind: 'rejected',
                text: t('review.alreadyAdopted'),
                changes: [],
                place: 'top',
              });
            else if (pattern) adoptPattern(pattern);
            else
              setNotice({
                kind: 'rejected',
                text: t('review.adoptWhich'),
                changes: [],
                place: 'top',
              });
            break;
          }
          case 'add':
            editor.add();
            break;
          case 'clear':
            editor.escape();
            break;
          case 'help':
            setHelpOpen(true);
            break;
        }
      },
    });
  }

  useLayoutEffect(() => {
    if (ready && (!document.activeElement || document.activeElement === document.body)) {
      listRef.current?.focus({ preventScroll: true });
    }
  }, [ready, listRef]);

  // -- render ----------------------------------------------------------------------

  const failure = query.error ?? query.failureReason;
  if (!ready) {
    if (!failure) return <Loading />;
    return (
      <section className="card">
        <p role="alert" className="alert">
          {t('workspace.loadFailed')} {errorMessage(failure, t)}
        </p>
        <div className="composer-actions">
          <button
            type="button"
            onClick={() => void client.resetQueries({ queryKey: reviewKeys.key(keyId) })}
          >
            {t('home.retry')}
          </button>
          <Link to="/manage/review">{t('review.backToStudies')}</Link>
        </div>
      </section>
    );
  }

  const { key, annotations, flags, neighbours } = detail;
  // KeyboardHelp lists REVIEW_KEYMAP's entries only, so every action it asks about is one.
  const describeAction = (action: KeyAction) => t(`review.help.${action as ReviewAction}`);
  const letters = annotations.map((_, column) => columnLetter(column));
  const statusOf = new Map(annotations.map((annotation) => [annotation.annotator, annotation]));
  const awaiting = detail.awaiting.map((name) =>
    statusOf.has(name) ? t('review.nameDraft', { name }) : t('review.nameNotStarted', { name }),
  );

  return (
    // eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions
    <section
      className="workspace adjudication"
      aria-labelledby="adjudication-heading"
      tabIndex={-1}
      onKeyDown={onKeyDown}
    >
      <div className="workspace-header">
        <div>
          <Link to={`/manage/studies/${key.study.id}/review`} className="back-link">
            {t('review.backToQueue')}
          </Link>
          <h1 id="adjudication-heading">
            {t('review.keyHeading', { layer: key.layer, index: key.index })}
          </h1>
          <p className="muted">
            {key.study.name} ·{' '}
            <span className={`status-badge status-${display?.status}`} data-testid="gold-status">
              {t(`review.goldStatus.${goldStatus}`)}
            </span>
          </p>
          <nav aria-label={t('review.neighbours')} className="neighbours">
            {neighbours.previous_key_id !== null && (
              <Link to={`/manage/review/keys/${neighbours.previous_key_id}`}>
                {t('review.previousKey')}
              </Link>
            )}{' '}
            {neighbours.next_key_id !== null && (
              <Link to={`/manage/review/keys/${neighbours.next_key_id}`}>
                {t('review.nextKey')}
              </Link>
            )}
          </nav>
        </div>
        <div className="workspace-tools">
          <SaveState status={snapshot.status} message={snapshot.message} onRetry={queue.retryNow} />
          <label className="character-keys">
            <input
              type="checkbox"
              checked={characterKeys}
              onChange={(event) => setCharacterKeys(event.target.checked)}
            />{' '}
            {t('help.characterKeys')}
          </label>
          <button
            type="button"
            onClick={() => setHelpOpen(true)}
            aria-keyshortcuts={characterKeys ? '?' : undefined}
          >
            {t('help.open')}
          </button>
        </div>
      </div>

      <WorkspaceNotice notice={notice} at="top" onDismiss={() => setNotice(null)} />

      {awaiting.length > 0 && (
        <p className="notice" data-testid="awaiting">
          {t('review.awaiting', { names: awaiting.join(t('review.listSeparator')) })}
        </p>
      )}

      <div className="review-context">
        {flags.length > 0 && (
          <section className="card" data-testid="key-flags">
            <h2>{t('review.flags')}</h2>
            <FlagList flags={flags} />
          </section>
        )}
        {key.value_top_tokens && key.value_top_tokens.length > 0 && (
          <ValueTokens tokens={key.value_top_tokens} />
        )}
      </div>

      <div className="review-layout">
        <ReviewGrid
          ref={listRef}
          prefixes={prefixes}
          isCausal={key.study.is_causal}
          annotations={annotations}
          goldLabels={goldLabels}
          selection={selection}
          dispatch={dispatch}
          readOnly={submitted}
        />

        <section className="card gold-column review-side" data-testid="gold-column">
          <h2>{t('review.gold')}</h2>
          {server?.curator && (
            <p className="muted">{t('review.curator', { name: server.curator })}</p>
          )}
          <label>
            <input
              type="checkbox"
              checked={isCheck}
              disabled={submitted}
              onChange={(event) => setCheck(event.target.checked)}
            />{' '}
            {t('review.checkToggle')}
          </label>
          <PatternComposer {...editor.composerProps} />
          {editor.composer.source && (
            <p className="muted" data-testid="adopting">
              {t('review.adopting', { annotator: editor.composer.source.annotator })}{' '}
              <button type="button" className="link-button" onClick={editor.cancelEdit}>
                {t('composer.cancel')}
              </button>
            </p>
          )}
          <WorkspaceNotice notice={notice} at="composer" onDismiss={() => setNotice(null)} />
          {goldPatterns.length === 0 ? (
            <p className="muted">{t('review.noGoldPatterns')}</p>
          ) : (
            <ul className="pattern-cards" data-testid="gold-patterns">
              {goldPatterns.map((pattern) => (
                <li
                  key={pattern.id}
                  className={`pattern-card${pattern.pending ? ' pending' : ''}`}
                  data-testid="gold-pattern"
                >
                  <p>
                    <span className={`chip pc-${pattern.colour}`}>
                      {t('workspace.patternNumber', { number: pattern.number })}
                    </span>{' '}
                    {pattern.description}
                  </p>
                  <p className="muted">
                    {t(`labels.${pattern.kind}`)} ·{' '}
                    {t('review.ranks', { ranks: pattern.prefix_ranks.join(', ') })} ·{' '}
                    {pattern.source === 'adopted' && pattern.source_annotator
                      ? t('review.adoptedFrom', { annotator: pattern.source_annotator })
                      : t('review.written')}
                  </p>
                  {!submitted && (
                    <div className="composer-actions">
                      <button
                        type="button"
                        onClick={() => editor.edit(pattern)}
                        aria-label={t('review.editNamed', { description: pattern.description })}
                      >
                        {t('review.edit')}
                      </button>
                      <button
                        type="button"
                        onClick={() => deleteGold(pattern)}
                        aria-label={t('review.deleteNamed', { description: pattern.description })}
                      >
                        {t('review.delete')}
                      </button>
                    </div>
                  )}
                </li>
              ))}
            </ul>
          )}
          <WorkspaceNotice notice={notice} at="patterns" onDismiss={() => setNotice(null)} />
          <div className="note-heading">
            <label htmlFor="gold-note" className="note-label">
              {t('review.note')}
            </label>
            <SaveState
              status={noteStatus}
              message={snapshot.message}
              live={false}
              id="gold-note-state"
              testId="note-save-state"
            />
          </div>
          <textarea
            id="gold-note"
            aria-describedby="gold-note-state"
            ref={noteRef}
            value={note.draft ?? ''}
            readOnly={submitted}
            maxLength={20000}
            rows={3}
            onChange={(event) => note.change(event.target.value)}
            onBlur={note.flush}
          />
          <WorkspaceNotice notice={notice} at="note" onDismiss={() => setNotice(null)} />
          <div className="composer-actions submit-card">
            {submitted ? (
              <button type="button" onClick={reopen}>
                {t('review.reopen')}
              </button>
            ) : (
              <button
                type="button"
                className="primary"
                onClick={requestSaveGold}
                aria-keyshortcuts="Control+Enter"
              >
                {t('review.saveGold')}
              </button>
            )}
          </div>
          <WorkspaceNotice notice={notice} at="submit" onDismiss={() => setNotice(null)} />
        </section>

        <div className="review-columns">
          {annotations.map((annotation, column) => (
            <section
              key={annotation.id}
              className="card annotator-column"
              data-testid="annotator-column"
              data-annotator={annotation.annotator}
            >
              <h2>
                <span className="column-letter">{letters[column]}</span> {annotation.annotator}
              </h2>
              <p className="muted">{t(`status.${annotation.status as 'draft' | 'submitted'}`)}</p>
              {annotation.note && <p className="annotator-note">{annotation.note}</p>}
              {annotation.patterns.length === 0 ? (
                <p className="muted">{t('review.noPatterns')}</p>
              ) : (
                <ul className="pattern-cards">
                  {annotation.patterns.map((pattern) => (
                    <li
                      key={pattern.id}
                      // The card takes focus so that `a` adopts it.
                      // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex
                      tabIndex={0}
                      className="pattern-card"
                      data-adopt-id={pattern.id}
                      data-testid="annotator-pattern"
                    >
                      <p>{pattern.description}</p>
                      <p className="muted">
                        {t(`labels.${pattern.kind}`)} ·{' '}
                        {t('review.ranks', { ranks: pattern.prefix_ranks.join(', ') })}
                      </p>
                      {adoptedIds.has(pattern.id) && (
                        <p className="muted" id={`adopted-${pattern.id}`}>
                          {t('review.alreadyAdopted')}
                        </p>
                      )}
                      <div className="composer-actions">
                        <button
                          type="button"
                          // Adopted once is enough; "Edit, then adopt" can still make a variant.
                          disabled={submitted || adoptedIds.has(pattern.id)}
                          aria-describedby={
                            adoptedIds.has(pattern.id) ? `adopted-${pattern.id}` : undefined
                          }
                          aria-keyshortcuts={characterKeys ? 'a' : undefined}
                          onClick={() => adoptPattern(pattern)}
                          aria-label={t('review.adoptNamed', {
                            annotator: annotation.annotator,
                            description: pattern.description,
                          })}
                        >
                          {t('review.adopt')}
                        </button>
                        <button
                          type="button"
                          disabled={submitted}
                          onClick={() => editThenAdopt(annotation, pattern)}
                          aria-label={t('review.editThenAdoptNamed', {
                            annotator: annotation.annotator,
                            description: pattern.description,
                          })}
                        >
                          {t('review.editThenAdopt')}
                        </button>
                      </div>
                    </li>
                  ))}
                </ul>
              )}
            </section>
          ))}
        </div>
      </div>
      {editor.guard.dialog}
      {helpOpen && (
        <KeyboardHelp
          onClose={() => setHelpOpen(false)}
          characterKeys={characterKeys}
          keymap={REVIEW_KEYMAP}
          describe={describeAction}
        />
      )}
    </section>
  );
}
