import { useQueryClient } from '@tanstack/react-query';
import { useLayoutEffect, useRef, useState } from 'react';
import type { KeyboardEvent as ReactKeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';

import { errorMessage } from '../../../api/errorMessage';
import type { ReviewAnnotation, ReviewPattern } from '../../../api/review';
import { Loading } from '../../../components/Loading';
import { EditorTools } from '../../../components/patternEditor/EditorTools';
import { KeyboardHelp } from '../../../components/patternEditor/KeyboardHelp';
import type { KeyAction } from '../../../components/patternEditor/keymap';
import { handlePrefixListKey } from '../../../components/patternEditor/prefixListKeys';
import { useCharacterKeys } from '../../../components/patternEditor/useCharacterKeys';
import { usePatternEditor } from '../../../components/patternEditor/usePatternEditor';
import { ValueTokens } from '../../../components/patternEditor/ValueTokens';
import { useNoteAutosave } from '../../../lib/writeQueue/useNoteAutosave';
import { useQueueNotices } from '../../../lib/writeQueue/useQueueNotices';
import { WorkspaceNotice } from '../../../lib/writeQueue/WorkspaceNotice';
import { newId } from '../../../lib/writeQueue/writeQueue';
import type { WriteQueue } from '../../../lib/writeQueue/writeQueue';
import { reviewKeys } from '../api/queryKeys';
import { AnnotatorColumns } from '../components/AnnotatorColumns';
import { FlagList } from '../components/FlagList';
import { GoldPanel } from '../components/GoldPanel';
import { ReviewGrid } from '../components/ReviewGrid';
import { useReviewQueue } from '../hooks/reviewQueue';
import type { GoldDisplayPattern } from '../hooks/reviewQueue';
import { useGoldKey } from '../hooks/useGoldKey';
import { REVIEW_KEYMAP, type ReviewAction } from '../lib/reviewKeymap';
import { useAuth } from '../../../lib/auth';
import { ShadingToggle } from '../../../components/evidence/ShadingToggle';
import { useShading } from '../../../components/evidence/useShading';
import { HeldOutFolds } from '../components/HeldOutFolds';
import { ReviewSuggestions } from '../components/ReviewSuggestions';
import { reviewEvidence } from '../lib/reviewEvidence';

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
  const gold = useGoldKey(keyId, queue);
  const { query, detail, server, ready, snapshot, ranks, display, goldPatterns, adoptedIds } = gold;
  const note = useNoteAutosave(queue, keyId, ready);
  const [helpOpen, setHelpOpen] = useState(false);
  const [characterKeys, setCharacterKeys] = useCharacterKeys();
  const { user } = useAuth();
  const [shadingOn, setShading] = useShading(user?.id);
  const noteRef = useRef<HTMLTextAreaElement>(null);
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

  // The queue's news about this key.
  const { notice, setNotice } = useQueueNotices(queue, keyId, {
    adopt: gold.adopt,
    replace: gold.replace,
    restore: editor.restoreRefused,
    serverNote: note.adoptServerNote,
  });
  const refuse = (text: string, place: 'top' | 'patterns') =>
    setNotice({ kind: 'rejected', text, changes: [], place });

  // -- gold patterns ---------------------------------------------------------------

  /** Copy an annotator's pattern into the gold as it is (it can be edited after). */
  function adoptPattern(pattern: ReviewPattern) {
    if (submitted) return refuse(t('composer.blocked.submitted'), 'patterns');
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

  const requestSaveGold = () =>
    editor.guard.request(() => {
      editor.cancelEdit();
      if (submitted) return;
      queue.release(keyId);
      queue.enqueue(keyId, { type: 'submit' });
    });

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
            if (pattern && adoptedIds.has(pattern.id)) refuse(t('review.alreadyAdopted'), 'top');
            else if (pattern) adoptPattern(pattern);
            else refuse(t('review.adoptWhich'), 'top');
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
          case 'shading':
            setShading(!shadingOn);
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
  if (!ready || !detail) {
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
  const evidence = reviewEvidence(detail);
  const shading = { on: shadingOn, max: evidence.maxCoefficient };
  // KeyboardHelp lists REVIEW_KEYMAP's entries only, so every action it asks about is one.
  const describeAction = (action: KeyAction) => t(`review.help.${action as ReviewAction}`);
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
        <EditorTools
          snapshot={snapshot}
          onRetry={queue.retryNow}
          characterKeys={characterKeys}
          onCharacterKeys={setCharacterKeys}
          onHelp={() => setHelpOpen(true)}
        >
          <ShadingToggle
            on={shadingOn}
            onChange={setShading}
            shortcut={characterKeys ? 's' : undefined}
          />
        </EditorTools>
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
        <ReviewSuggestions suggestions={detail.suggestions} />
      </div>

      <div className="review-layout">
        <ReviewGrid
          ref={listRef}
          prefixes={gold.prefixes}
          isCausal={key.study.is_causal}
          annotations={annotations}
          goldLabels={gold.goldLabels}
          selection={selection}
          dispatch={dispatch}
          readOnly={submitted}
          shading={shading}
          after={
            <HeldOutFolds evidence={evidence} isCausal={key.study.is_causal} shading={shading} />
          }
        />
        <GoldPanel
          curator={server?.curator}
          isCheck={gold.isCheck}
          submitted={submitted}
          onCheck={(isCheck) => queue.enqueue(keyId, { type: 'check', isCheck })}
          editor={editor}
          patterns={goldPatterns}
          onDelete={deleteGold}
          note={note}
          noteStatus={gold.noteStatus}
          message={snapshot.message}
          noteRef={noteRef}
          notice={notice}
          onDismiss={() => setNotice(null)}
          onSave={requestSaveGold}
          onReopen={() => queue.enqueue(keyId, { type: 'reopen' })}
        />
        <AnnotatorColumns
          annotations={annotations}
          adoptedIds={adoptedIds}
          readOnly={submitted}
          characterKeys={characterKeys}
          onAdopt={adoptPattern}
          onEditThenAdopt={editThenAdopt}
        />
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
