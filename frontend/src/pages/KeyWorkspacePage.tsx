import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router-dom';

import { api, isApiError } from '../api/client';
import { useAuth } from '../auth/AuthContext';
import { errorMessage } from '../api/errorMessage';
import type { AnnotationState, KeyDetail, PatternKind } from '../api/types';
import { Loading } from '../components/Loading';
import { addBlockers } from '../workspace/composer';
import { KeyboardHelp } from '../workspace/KeyboardHelp';
import { nextKeyFor } from '../workspace/nextKey';
import { applyPending, deriveLabels, KINDS } from '../workspace/labels';
import type { DisplayPattern } from '../workspace/labels';
import { PatternComposer } from '../workspace/PatternComposer';
import { PatternList } from '../workspace/PatternList';
import { PrefixList } from '../workspace/PrefixList';
import { useQueue, useQueueSnapshot } from '../workspace/QueueContext';
import { SaveState } from '../workspace/SaveState';
import { initialSelection, selectionReducer } from '../workspace/selection';
import { newId } from '../workspace/writeQueue';
import type { QueuedWrite, WriteQueue } from '../workspace/writeQueue';

const NOTE_DELAY_MS = 800;

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
  return <Workspace key={id} keyId={id} queue={queue} />;
}

type Load =
  | { kind: 'loading' }
  | { kind: 'failed'; message: string }
  | { kind: 'ready'; detail: KeyDetail };

interface Notice {
  kind: 'conflict' | 'rejected';
  text: string;
  changes: string[];
}

interface Composer {
  description: string;
  kind: PatternKind | null;
  /** The pattern being edited (its display number and reference), or null. */
  editing: DisplayPattern | null;
}

const EMPTY_COMPOSER: Composer = { description: '', kind: null, editing: null };

function isTyping(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    !!target.closest('input, textarea, select, [contenteditable="true"]')
  );
}

function Workspace({ keyId, queue }: { keyId: number; queue: WriteQueue }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const assignmentParam = Number(params.get('assignment'));
  const assignmentId =
    Number.isInteger(assignmentParam) && assignmentParam > 0 ? assignmentParam : undefined;

  const [load, setLoad] = useState<Load>({ kind: 'loading' });
  const [server, setServer] = useState<AnnotationState | null>(null);
  const snapshot = useQueueSnapshot(queue);
  const [composer, setComposer] = useState<Composer>(EMPTY_COMPOSER);
  const [noteDraft, setNoteDraft] = useState<string | null>(null);
  const [noteDirty, setNoteDirty] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [advancing, setAdvancing] = useState(false);
  const [done, setDone] = useState(false);
  const [loadRound, setLoadRound] = useState(0);
  const loadAttempts = useRef(0);

  const listRef = useRef<HTMLDivElement>(null);
  const descriptionRef = useRef<HTMLInputElement>(null);
  const noteRef = useRef<HTMLTextAreaElement>(null);
  const noteTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const noteValue = useRef<string | null>(null);

  const prefixes = useMemo(
    () => (load.kind === 'ready' ? load.detail.prefixes : []),
    [load],
  );
  const ranks = useMemo(() => prefixes.map((prefix) => prefix.rank), [prefixes]);
  const reducer = useMemo(() => selectionReducer(ranks), [ranks]);
  const [selection, dispatch] = useReducer(
    (state: ReturnType<typeof initialSelection>, action: Parameters<typeof reducer>[1]) =>
      reducer(state, action),
    undefined,
    initialSelection,
  );

  const pending = useMemo(
    () => snapshot.writes.filter((write) => write.keyId === keyId),
    [snapshot.writes, keyId],
  );
  const display = useMemo(() => (server ? applyPending(server, pending) : null), [server, pending]);
  const labels = useMemo(
    () => deriveLabels(ranks, display?.patterns ?? []),
    [ranks, display],
  );
  const notCovered = [...labels.values()].filter((label) => label === 'not-covered').length;
  const submitted = display?.status === 'submitted';

  // -- loading ---------------------------------------------------------------------

  const adopt = useCallback((state: AnnotationState) => {
    setServer((known) => (known && known.version > state.version ? known : state));
  }, []);

  useEffect(() => {
    let cancelled = false;
    let retryTimer: ReturnType<typeof setTimeout> | null = null;
    api.key(keyId).then(
      (detail) => {
        if (cancelled) return;
        queue.observe(detail.annotation);
        const state = queue.stateOf(keyId) ?? detail.annotation;
        setServer(state);
        const shown = applyPending(state, queue.pendingFor(keyId));
        setNoteDraft(shown.note);
        noteValue.current = shown.note;
        loadAttempts.current = 0;
        setLoad({ kind: 'ready', detail });
      },
      (error: unknown) => {
        if (cancelled) return;
        setLoad({ kind: 'failed', message: errorMessage(error, t) });
        // No answer or a 5xx/503 (the database restarting, SQLite busy): try again by
        // itself, backing off, as the write queue does (DESIGN §9).
        if (isApiError(error) && (error.status === 0 || error.status >= 500)) {
          const delay = Math.min(10_000, 1_000 * 2 ** loadAttempts.current++);
          retryTimer = setTimeout(() => setLoadRound((round) => round + 1), delay);
        }
      },
    );
    return () => {
      cancelled = true;
      if (retryTimer) clearTimeout(retryTimer);
    };
  }, [keyId, queue, t, loadRound]);

  // -- the queue's news about this key ---------------------------------------------

  const restoreComposer = useCallback((writes: readonly QueuedWrite[]) => {
    const create = writes.find((write) => write.op.type === 'create');
    if (!create || create.op.type !== 'create') return;
    const op = create.op;
    setComposer((current) =>
      current.description.trim()
        ? current
        : { description: op.description, kind: op.kind, editing: null },
    );
    dispatch({ type: 'set', ranks: op.prefixRanks });
  }, []);

  useEffect(
    () =>
      queue.onEvent((event) => {
        if (event.keyId !== keyId) return;
        if (event.type === 'applied') {
          adopt(event.state);
          return;
        }
        if (event.type === 'conflict') {
          setServer(event.current);
          const changes = describeChanges(event.previous, event.current, t);
          if (event.dropped.length > 0) {
            changes.push(t('conflict.dropped', { count: event.dropped.length }));
            restoreComposer(event.dropped);
          }
          // Keep what the annotator is typing; otherwise show the server's note.
          if (noteTimer.current === null && !queue.pendingFor(keyId).some((w) => w.op.type === 'note')) {
            setNoteDraft(event.current.note);
            noteValue.current = event.current.note;
          }
          setNotice({
            kind: 'conflict',
            text:
              event.current.status === 'submitted'
                ? t('conflict.submittedElsewhere')
                : t('conflict.changedElsewhere'),
            changes,
          });
          return;
        }
        setNotice({
          kind: 'rejected',
          text: t('conflict.rejected', { message: event.message || t('errors.network') }),
          changes: [],
        });
        restoreComposer([event.write]);
      }),
    [queue, keyId, adopt, restoreComposer, t],
  );

  // -- note autosave ---------------------------------------------------------------

  const flushNote = useCallback(() => {
    if (noteTimer.current) clearTimeout(noteTimer.current);
    noteTimer.current = null;
    setNoteDirty(false);
    const value = noteValue.current;
    if (value === null) return;
    const state = queue.stateOf(keyId);
    const shown = state ? applyPending(state, queue.pendingFor(keyId)) : null;
    if (shown && shown.note !== value) queue.enqueue(keyId, { type: 'note', note: value });
  }, [queue, keyId]);

  useEffect(() => () => flushNote(), [flushNote]);

  function changeNote(value: string) {
    setNoteDraft(value);
    noteValue.current = value;
    setNoteDirty(true);
    if (noteTimer.current) clearTimeout(noteTimer.current);
    noteTimer.current = setTimeout(flushNote, NOTE_DELAY_MS);
  }

  // -- patterns --------------------------------------------------------------------

  const blockers = addBlockers({
    submitted,
    selected: selection.selected.size,
    description: composer.description,
    kind: composer.kind,
  });

  const addPattern = useCallback(() => {
    if (blockers.length > 0) return;
    const prefixRanks = ranks.filter((rank) => selection.selected.has(rank));
    const description = composer.description.trim();
    const kind = composer.kind!;
    if (composer.editing) {
      queue.enqueue(keyId, {
        type: 'update',
        ref: { id: composer.editing.id, clientId: composer.editing.client_id },
        changes: { description, kind, prefix_ranks: prefixRanks },
      });
    } else {
      queue.enqueue(keyId, {
        type: 'create',
        clientId: newId(),
        description,
        kind,
        prefixRanks,
      });
    }
    setComposer(EMPTY_COMPOSER);
    dispatch({ type: 'clear' });
  }, [blockers.length, ranks, selection.selected, composer, queue, keyId]);

  function editPattern(pattern: DisplayPattern) {
    setComposer({ description: pattern.description, kind: pattern.kind, editing: pattern });
    dispatch({ type: 'set', ranks: pattern.prefix_ranks });
    descriptionRef.current?.focus();
  }

  function deletePattern(pattern: DisplayPattern) {
    queue.enqueue(keyId, {
      type: 'delete',
      ref: { id: pattern.id, clientId: pattern.client_id },
    });
    if (composer.editing?.id === pattern.id) setComposer(EMPTY_COMPOSER);
  }

  function cancelEdit() {
    setComposer(EMPTY_COMPOSER);
    dispatch({ type: 'clear' });
  }

  // -- submit and move on ----------------------------------------------------------

  const submitAndNext = useCallback(async () => {
    if (advancing || load.kind !== 'ready') return;
    flushNote();
    setAdvancing(true);
    if (!submitted) queue.enqueue(keyId, { type: 'submit' });
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
      setNotice({ kind: 'rejected', text: errorMessage(error, t), changes: [] });
      setAdvancing(false);
    }
  }, [advancing, load.kind, flushNote, submitted, queue, keyId, assignmentId, navigate, t]);

  function reopen() {
    queue.enqueue(keyId, { type: 'reopen' });
  }

  // -- the keyboard ----------------------------------------------------------------

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (helpOpen) {
        if (event.key === 'Escape' || event.key === '?') {
          event.preventDefault();
          setHelpOpen(false);
        }
        return;
      }
      if ((event.ctrlKey || event.metaKey) && event.key === 'Enter') {
        event.preventDefault();
        void submitAndNext();
        return;
      }
      if (isTyping(event.target)) {
        if (event.key === 'Escape') {
          event.preventDefault();
          if (event.target === noteRef.current) flushNote();
          listRef.current?.focus();
        }
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const onControl =
        event.target instanceof HTMLElement && !!event.target.closest('button, a, summary');
      if (onControl && (event.key === ' ' || event.key === 'Enter')) return;

      const last = ranks.length - 1;
      let handled = true;
      switch (event.key) {
        case 'j':
        case 'ArrowDown':
          dispatch({ type: 'move', delta: 1, extend: event.shiftKey });
          break;
        case 'J':
          dispatch({ type: 'move', delta: 1, extend: true });
          break;
        case 'k':
        case 'ArrowUp':
          dispatch({ type: 'move', delta: -1, extend: event.shiftKey });
          break;
        case 'K':
          dispatch({ type: 'move', delta: -1, extend: true });
          break;
        case 'Home':
        case 'g':
          dispatch({ type: 'moveTo', index: 0 });
          break;
        case 'End':
        case 'G':
          dispatch({ type: 'moveTo', index: last });
          break;
        case ' ':
        case 'x':
          if (!submitted) dispatch({ type: 'toggle' });
          break;
        case '1':
        case '2':
        case '3':
          setComposer((current) => ({ ...current, kind: KINDS[Number(event.key) - 1] ?? null }));
          break;
        case 'd':
        case '/':
          descriptionRef.current?.focus();
          break;
        case 'n':
          noteRef.current?.focus();
          break;
        case 'a':
        case 'Enter':
          addPattern();
          break;
        case 'Escape':
          if (composer.editing) cancelEdit();
          else dispatch({ type: 'clear' });
          break;
        case '?':
          setHelpOpen(true);
          break;
        default:
          handled = false;
      }
      if (handled) event.preventDefault();
    }
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  });

  // -- render ----------------------------------------------------------------------

  if (load.kind === 'loading') return <Loading />;
  if (load.kind === 'failed') {
    return (
      <section className="card">
        <p role="alert" className="alert">
          {t('workspace.loadFailed')} {load.message}
        </p>
        <div className="composer-actions">
          <button
            type="button"
            onClick={() => {
              setLoad({ kind: 'loading' });
              setLoadRound((round) => round + 1);
            }}
          >
            {t('home.retry')}
          </button>
          <Link to="/">{t('notFound.back')}</Link>
        </div>
      </section>
    );
  }
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

  return (
    <section className="workspace" aria-labelledby="workspace-heading">
      <div className="workspace-header">
        <div>
          <Link to={backTo} className="back-link">
            {t('workspace.back')}
          </Link>
          <h1 id="workspace-heading">
            {t('workspace.heading', { layer: detail.layer, index: detail.index })}
          </h1>
          <p className="muted">
            {detail.study_name} ·{' '}
            <span className={`status-badge status-${display?.status}`} data-testid="annotation-status">
              {t(`status.${display?.status ?? 'draft'}`)}
            </span>{' '}
            ·{' '}
            <span data-testid="not-covered-count">
              {t('workspace.notCoveredCount', { count: notCovered, total: prefixes.length })}
            </span>
          </p>
        </div>
        <div className="workspace-tools">
          <SaveState
            status={snapshot.status}
            message={snapshot.message}
            dirty={noteDirty}
            onRetry={queue.retryNow}
          />
          <button type="button" onClick={() => setHelpOpen(true)} aria-keyshortcuts="?">
            {t('help.open')}
          </button>
        </div>
      </div>

      {notice && (
        <div
          role="alert"
          className={notice.kind === 'conflict' ? 'notice' : 'alert'}
          data-testid="notice"
        >
          <p>{notice.text}</p>
          {notice.changes.length > 0 && (
            <ul>
              {notice.changes.map((change) => (
                <li key={change}>{change}</li>
              ))}
            </ul>
          )}
          <button type="button" className="link-button" onClick={() => setNotice(null)}>
            {t('conflict.dismiss')}
          </button>
        </div>
      )}

      <div className="workspace-grid">
        <PrefixList
          ref={listRef}
          prefixes={prefixes}
          isCausal={detail.is_causal}
          selection={selection}
          dispatch={dispatch}
          patterns={display?.patterns ?? []}
          labels={labels}
          readOnly={submitted}
        />
        <aside className="workspace-side">
          <PatternComposer
            ref={descriptionRef}
            description={composer.description}
            onDescription={(description) => setComposer((c) => ({ ...c, description }))}
            kind={composer.kind}
            onKind={(kind) => setComposer((c) => ({ ...c, kind }))}
            selected={selection.selected.size}
            blockers={blockers}
            editing={composer.editing?.number ?? null}
            onAdd={addPattern}
            onCancelEdit={cancelEdit}
            onClearSelection={() => dispatch({ type: 'clear' })}
          />
          <PatternList
            patterns={display?.patterns ?? []}
            readOnly={submitted}
            onEdit={editPattern}
            onDelete={deletePattern}
            onShow={(pattern) => dispatch({ type: 'set', ranks: pattern.prefix_ranks })}
          />
          <section className="card">
            <label htmlFor="annotation-note" className="note-label">
              {t('workspace.note')}
            </label>
            <textarea
              id="annotation-note"
              ref={noteRef}
              value={noteDraft ?? ''}
              readOnly={submitted}
              maxLength={20000}
              rows={3}
              onChange={(event) => changeNote(event.target.value)}
              onBlur={flushNote}
            />
          </section>
          {detail.value_top_tokens && (
            <section className="card" data-testid="value-tokens">
              <h2>{t('workspace.valueTokens')}</h2>
              <ol className="value-tokens">
                {detail.value_top_tokens.map((token, index) => (
                  <li key={index}>
                    <span className="token">{token.token}</span>{' '}
                    <span className="muted">{(token.probability * 100).toFixed(1)}%</span>
                  </li>
                ))}
              </ol>
            </section>
          )}
          <section className="card submit-card">
            {submitted ? (
              <>
                <p>{t('workspace.submittedHint')}</p>
                <div className="composer-actions">
                  <button type="button" onClick={reopen}>
                    {t('workspace.reopen')}
                  </button>
                  <button
                    type="button"
                    className="primary"
                    onClick={() => void submitAndNext()}
                    disabled={advancing}
                  >
                    {t('workspace.next')}
                  </button>
                </div>
              </>
            ) : (
              <button
                type="button"
                className="primary"
                onClick={() => void submitAndNext()}
                disabled={advancing}
                aria-keyshortcuts="Control+Enter"
              >
                {t('workspace.submit')}
              </button>
            )}
            {advancing && snapshot.status !== 'saved' && (
              <p className="muted">{t('workspace.submitWaiting')}</p>
            )}
          </section>
        </aside>
      </div>
      {helpOpen && <KeyboardHelp onClose={() => setHelpOpen(false)} />}
    </section>
  );
}

/** What another tab (or person) changed, in words: pattern descriptions added or removed, the note, the status. */
function describeChanges(
  previous: AnnotationState | undefined,
  current: AnnotationState,
  t: ReturnType<typeof useTranslation>['t'],
): string[] {
  if (!previous) return [];
  const changes: string[] = [];
  const before = new Map(previous.patterns.map((pattern) => [pattern.id, pattern]));
  const after = new Map(current.patterns.map((pattern) => [pattern.id, pattern]));
  for (const [id, pattern] of after) {
    const old = before.get(id);
    if (!old) changes.push(t('conflict.added', { description: pattern.description }));
    else if (
      old.description !== pattern.description ||
      old.kind !== pattern.kind ||
      old.prefix_ranks.join() !== pattern.prefix_ranks.join()
    ) {
      changes.push(t('conflict.changed', { description: pattern.description }));
    }
  }
  for (const [id, pattern] of before) {
    if (!after.has(id)) changes.push(t('conflict.removed', { description: pattern.description }));
  }
  if (previous.note !== current.note) changes.push(t('conflict.note'));
  if (previous.status !== current.status) {
    changes.push(t('conflict.status', { status: t(`status.${current.status}`) }));
  }
  return changes;
}
