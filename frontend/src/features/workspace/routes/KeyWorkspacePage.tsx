import { useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { KeyboardEvent as ReactKeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router-dom';

import { useAuth } from '../../../lib/auth';
import { errorMessage } from '../../../api/errorMessage';
import { Loading } from '../../../components/Loading';
import { KeyActivityNotice } from '../components/KeyActivityNotice';
import { KeyHeading } from '../components/KeyHeading';
import { KeyLoadFailed } from '../components/KeyLoadFailed';
import { clearDraft, useComposerDraft } from '../lib/composerDraft';
import type { ShownDraft } from '../lib/composerDraft';
import { ConfirmEmptySubmit } from '../components/ConfirmEmptySubmit';
import { GuidelinesDialog, GuidelinesGate } from '../components/GuidelinesGate';
import { KeyboardHelp } from '../../../components/patternEditor/KeyboardHelp';
import { KeyFlagControl } from '../components/KeyFlagControl';
import { KEYMAP } from '../../../components/patternEditor/keymap';
import { nextKeyFor } from '../api/nextKey';
import { applyPending, deriveLabels } from '../../../components/patternEditor/labels';
import type { DisplayPattern } from '../../../components/patternEditor/labels';
import { PatternComposer } from '../../../components/patternEditor/PatternComposer';
import { PatternList } from '../components/PatternList';
import { PrefixList } from '../components/PrefixList';
import { handlePrefixListKey } from '../../../components/patternEditor/prefixListKeys';
import { useQueue } from '../../../lib/writeQueue/QueueContext';
import { useKeyWrites } from '../../../lib/writeQueue/useKeyWrites';
import { EditorTools } from '../../../components/patternEditor/EditorTools';
import { NoteField } from '../../../components/patternEditor/NoteField';
import { SubmitCard } from '../components/SubmitCard';
import { ValueTokens } from '../../../components/patternEditor/ValueTokens';
import { WorkspaceNotice } from '../../../lib/writeQueue/WorkspaceNotice';
import { useCharacterKeys } from '../../../components/patternEditor/useCharacterKeys';
import { useActiveTime } from '../hooks/useActiveTime';
import { useGuidelines } from '../hooks/useGuidelines';
import { useKeyDetail } from '../hooks/useKeyDetail';
import { useNoteAutosave } from '../../../lib/writeQueue/useNoteAutosave';
import { useQueueNotices } from '../../../lib/writeQueue/useQueueNotices';
import { usePatternEditor } from '../../../components/patternEditor/usePatternEditor';
import { useUndoableDelete } from '../hooks/useUndoableDelete';
import { ActivationHistogram } from '../../../components/evidence/ActivationHistogram';
import { SampleFolds } from '../../../components/evidence/ExampleFolds';
import { ShadingToggle } from '../../../components/evidence/ShadingToggle';
import { useShading } from '../../../components/evidence/useShading';
import { keyEvidence } from '../lib/keyEvidence';
import { SuggestionsPanel } from '../components/SuggestionsPanel';
import { useSuggestions } from '../hooks/useSuggestions';
import type { WriteQueue } from '../../../lib/writeQueue/writeQueue';

export function KeyWorkspacePage() {
  const { keyId } = useParams();
  const id = Number(keyId);
  const queue = useQueue();
  const { user } = useAuth();
  const { t } = useTranslation();
  if (!Number.isInteger(id) || id <= 0) {
    return <p className="alert">{t('workspace.notFound')}</p>;
  }
  if (user && !user.is_annotator) return <p className="alert">{t('home.notAnnotator')}</p>;
  if (!queue) return <Loading />;
  // A fresh workspace per key: nothing of one key's selection leaks into the next.
  return <Workspace key={id} keyId={id} queue={queue} userId={user?.id ?? 0} />;
}

function Workspace({ keyId, queue, userId }: { keyId: number; queue: WriteQueue; userId: number }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const assignmentParam = Number(params.get('assignment'));
  const askedAssignment =
    Number.isInteger(assignmentParam) && assignmentParam > 0 ? assignmentParam : undefined;

  const { load, server, setServer, adopt, retry } = useKeyDetail(keyId, queue, askedAssignment);
  // The address may carry someone else's assignment: only the user's own, as the server
  // names it (the one of the address where it is theirs and holds the key), is linked to
  // or asked for the next key; none: home.
  const assignmentId =
    load.kind === 'ready' ? (load.detail.assignment_id ?? undefined) : askedAssignment;
  const guidelines = useGuidelines(load.kind === 'ready' ? load.detail.study : null);
  const { snapshot, pending, noteStatus } = useKeyWrites(queue, keyId);
  const activeSeconds = useActiveTime(
    load.kind === 'ready' ? load.detail.annotation.active_seconds : undefined,
  );
  const note = useNoteAutosave(queue, keyId, load.kind === 'ready', activeSeconds);
  const [helpOpen, setHelpOpen] = useState(false);
  const [flagOpen, setFlagOpen] = useState(false);
  const [confirmEmpty, setConfirmEmpty] = useState(false);
  const [characterKeys, setCharacterKeys] = useCharacterKeys();
  const [shadingOn, setShading] = useShading(userId);
  const [advancing, setAdvancing] = useState(false);
  const [done, setDone] = useState(false);
  const undoable = useUndoableDelete(queue, keyId);
  const { deleted } = undoable;

  const noteRef = useRef<HTMLTextAreaElement>(null);

  const prefixes = useMemo(() => (load.kind === 'ready' ? load.detail.prefixes : []), [load]);
  const evidence = useMemo(() => (load.kind === 'ready' ? keyEvidence(load.detail) : null), [load]);
  const shading = { on: shadingOn, max: evidence?.maxCoefficient };
  const ranks = useMemo(() => prefixes.map((prefix) => prefix.rank), [prefixes]);

  const display = useMemo(() => (server ? applyPending(server, pending) : null), [server, pending]);
  const labels = useMemo(() => deriveLabels(ranks, display?.patterns ?? []), [ranks, display]);
  const notCovered = [...labels.values()].filter((label) => label === 'not-covered').length;
  const submitted = display?.status === 'submitted';
  // Submit never drops the pattern still in the composer: it asks first (pendingPattern);
  // the composer is emptied in storage too: the composer of a submitted key is empty.
  const clearStoredDraft = useCallback(() => clearDraft(userId, keyId), [userId, keyId]);
  const editor = usePatternEditor<DisplayPattern>({
    keyId,
    queue,
    ranks,
    submitted,
    action: 'submit',
    onClear: clearStoredDraft,
  });
  const { selection, dispatch, listRef, composer } = editor;

  // -- the half-built pattern survives a reload ------------------------------------

  const { load: loadComposer } = editor;
  const restoreDraft = useCallback(
    (draft: ShownDraft) =>
      loadComposer(
        { description: draft.description, kind: draft.kind, editing: draft.editing, source: null },
        draft.selected.filter((rank) => ranks.includes(rank)),
        false,
      ),
    [loadComposer, ranks],
  );
  useComposerDraft(
    userId,
    keyId,
    display?.patterns ?? null,
    {
      description: composer.description,
      kind: composer.kind,
      editing: composer.editing,
      selected: editor.selectedRanks,
    },
    restoreDraft,
  );

  // -- the queue's news about this key ---------------------------------------------

  const suggestions = useSuggestions({
    keyId,
    enabled: load.kind === 'ready' && load.detail.study.suggestions_enabled,
    queue,
    fallbackVersion: server?.version ?? 0,
    onState: adopt,
  });

  const { notice, setNotice } = useQueueNotices(queue, keyId, {
    adopt,
    replace: setServer,
    restore: editor.restoreRefused,
    serverNote: note.adoptServerNote,
  });

  // -- patterns --------------------------------------------------------------------

  function deletePattern(pattern: DisplayPattern) {
    undoable.remove(pattern);
    editor.forget(pattern);
  }

  // -- submit and move on ----------------------------------------------------------

  const flushNote = note.flush;
  const { clear: clearEditor } = editor;

  const submitAndNext = useCallback(async () => {
    if (advancing || load.kind !== 'ready') return;
    setAdvancing(true);
    clearEditor();
    // Whatever is held back (the note, a delete that could still be undone) goes now.
    queue.release(keyId);
    if (!submitted) queue.enqueue(keyId, { type: 'submit', activeSeconds: activeSeconds() });
    await queue.whenSettled(keyId);
    try {
      const next = await nextKeyFor(assignmentId);
      if (!next) {
        setDone(true);
        setAdvancing(false);
        return;
      }
      navigate(`/keys/${next.key_id}?assignment=${next.assignment_id}`);
    } catch (error) {
      setNotice({ kind: 'rejected', text: errorMessage(error, t), changes: [], place: 'submit' });
      setAdvancing(false);
    }
  }, [
    advancing,
    load.kind,
    clearEditor,
    submitted,
    queue,
    keyId,
    activeSeconds,
    assignmentId,
    navigate,
    t,
    setNotice,
  ]);

  function reopen() {
    queue.enqueue(keyId, { type: 'reopen' });
  }

  // -- the keyboard ----------------------------------------------------------------

  // Ctrl+Enter on a key with no pattern asks before it submits, where nothing else was
  // asked: a slip would submit an empty key.
  function requestSubmit(byKeyboard: boolean) {
    const empty = !submitted && (display?.patterns.length ?? 0) === 0;
    editor.guard.request((how) => {
      if (byKeyboard && how === 'nothing' && empty) setConfirmEmpty(true);
      else void submitAndNext();
    });
  }

  // Keys count only inside the workspace (the page's header and menus keep theirs),
  // and are looked up in the keymap that the help lists.
  function onKeyDown(event: ReactKeyboardEvent<HTMLElement>) {
    handlePrefixListKey(event, KEYMAP, characterKeys, {
      submit: () => requestSubmit(true),
      leaveField: (field) => {
        if (field === noteRef.current) flushNote();
        listRef.current?.focus();
      },
      dispatch,
      lastIndex: ranks.length - 1,
      readOnly: submitted,
      setKind: editor.setKind,
      focusDescription: () => editor.descriptionRef.current?.focus(),
      focusNote: () => noteRef.current?.focus(),
      other: (action) => {
        switch (action) {
          case 'add':
            editor.add();
            break;
          case 'clear':
            editor.escape();
            break;
          case 'help':
            setHelpOpen(true);
            break;
          case 'guidelines':
            guidelines.openDialog();
            break;
          case 'flag':
            setFlagOpen(true);
            break;
          case 'shading':
            setShading(!shadingOn);
            break;
        }
      },
    });
  }

  // Focus starts in the prefix list, where the keys act (unless the user is elsewhere);
  // before paint, so that a key pressed as soon as the list shows is not lost. Without
  // scrolling: the page opens at its top, with the composer on screen, also where the
  // guidelines shown before it were read down to their end.
  const ready = load.kind === 'ready' && guidelines.gate === 'none';
  useLayoutEffect(() => {
    if (!ready) return;
    if (window.scrollY !== 0) window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
    if (!document.activeElement || document.activeElement === document.body) {
      listRef.current?.focus({ preventScroll: true });
    }
  }, [ready, listRef]);

  // -- render ----------------------------------------------------------------------

  if (load.kind === 'loading') return <Loading />;
  if (load.kind === 'failed') return <KeyLoadFailed message={load.message} onRetry={retry} />;
  const { detail } = load;
  const backTo = assignmentId ? `/assignments/${assignmentId}` : '/';

  if (done) {
    return (
      <section className="card" data-testid="all-done">
        <h1>{t('workspace.allDone')}</h1>
        <p>{t('workspace.allDoneHint')}</p>
        <Link to="/">{t('notFound.back')}</Link>
      </section>
    );
  }
  if (guidelines.gate !== 'none') return <GuidelinesGate guidelines={guidelines} />;

  return (
    // The shortcuts are the workspace's own (WCAG 2.1.4: scoped, and they can be turned
    // off); the section is where they are listened for, not a control.
    // eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions
    <section
      className="workspace"
      aria-labelledby="workspace-heading"
      // Clicks on its text keep focus (and so the keys) inside the workspace.
      tabIndex={-1}
      onKeyDown={onKeyDown}
    >
      <div className="workspace-header">
        <KeyHeading
          backTo={backTo}
          detail={detail}
          status={display?.status}
          notCovered={notCovered}
          total={prefixes.length}
        />
        <EditorTools
          snapshot={snapshot}
          onRetry={queue.retryNow}
          characterKeys={characterKeys}
          onCharacterKeys={setCharacterKeys}
          onHelp={() => setHelpOpen(true)}
          trailing={
            <KeyFlagControl
              keyId={keyId}
              initial={detail.flag}
              open={flagOpen}
              onOpen={() => setFlagOpen(true)}
              onClose={() => setFlagOpen(false)}
              characterKeys={characterKeys}
            />
          }
        >
          <button
            type="button"
            onClick={guidelines.openDialog}
            aria-keyshortcuts={characterKeys ? 'g' : undefined}
          >
            {t('guidelines.open')}
          </button>
        </EditorTools>
      </div>

      <WorkspaceNotice notice={notice} at="top" onDismiss={() => setNotice(null)} />

      <KeyActivityNotice prefixes={prefixes} />

      <div className="workspace-grid">
        <div className="workspace-main">
          {/* Above the list, not in the header's tools: the header stays one line high,
              so that the composer and Submit are on screen when a key opens. */}
          <div className="shading-bar">
            <ShadingToggle
              on={shadingOn}
              onChange={setShading}
              shortcut={characterKeys ? 's' : undefined}
            />
          </div>
          <PrefixList
            ref={listRef}
            prefixes={prefixes}
            isCausal={detail.is_causal}
            selection={selection}
            dispatch={dispatch}
            patterns={display?.patterns ?? []}
            labels={labels}
            readOnly={submitted}
            shading={shading}
          />
          <SampleFolds
            samples={evidence?.samples ?? []}
            isCausal={detail.is_causal}
            shading={shading}
          />
        </div>
        <aside className="workspace-side">
          <PatternComposer {...editor.composerProps} />
          <WorkspaceNotice notice={notice} at="composer" onDismiss={() => setNotice(null)} />
          <PatternList
            patterns={display?.patterns ?? []}
            readOnly={submitted}
            onEdit={editor.edit}
            onDelete={deletePattern}
            onShow={(pattern) => dispatch({ type: 'set', ranks: pattern.prefix_ranks })}
            deleted={
              deleted && {
                id: deleted.write.id,
                name: t('workspace.patternNumber', { number: deleted.pattern.number }),
                description: deleted.pattern.description,
                onUndo: undoable.undo,
              }
            }
          />
          <WorkspaceNotice notice={notice} at="patterns" onDismiss={() => setNotice(null)} />
          {suggestions.shown && (
            <SuggestionsPanel
              suggestions={suggestions.suggestions}
              readOnly={submitted}
              busy={suggestions.busy}
              failed={suggestions.failed}
              error={suggestions.error}
              onAccept={suggestions.accept}
              onDismiss={suggestions.dismiss}
              onShow={(suggestion) => dispatch({ type: 'set', ranks: suggestion.prefix_ranks })}
            />
          )}
          <section className="card">
            <NoteField
              id="annotation-note"
              label={t('workspace.note')}
              ref={noteRef}
              draft={note.draft}
              status={noteStatus}
              message={snapshot.message}
              readOnly={submitted}
              onChange={note.change}
              onFlush={flushNote}
            />
            <WorkspaceNotice notice={notice} at="note" onDismiss={() => setNotice(null)} />
          </section>
          {detail.value_top_tokens && <ValueTokens tokens={detail.value_top_tokens} />}
          <ActivationHistogram histogram={evidence?.histogram} density={evidence?.density} />
          <SubmitCard
            submitted={submitted}
            advancing={advancing}
            waiting={snapshot.status !== 'saved'}
            onSubmit={() => requestSubmit(false)}
            onReopen={reopen}
          >
            <WorkspaceNotice notice={notice} at="submit" onDismiss={() => setNotice(null)} />
          </SubmitCard>
        </aside>
      </div>
      {helpOpen && (
        <KeyboardHelp onClose={() => setHelpOpen(false)} characterKeys={characterKeys} />
      )}
      {guidelines.dialogOpen && <GuidelinesDialog guidelines={guidelines} />}
      {editor.guard.dialog}
      {confirmEmpty && (
        <ConfirmEmptySubmit
          onCancel={() => setConfirmEmpty(false)}
          onSubmit={() => {
            setConfirmEmpty(false);
            void submitAndNext();
          }}
        />
      )}
    </section>
  );
}
