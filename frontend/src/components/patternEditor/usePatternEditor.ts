// The pattern editor of one key, the same on the annotator's workspace and on the
// curator's adjudication screen: which prefixes are selected (and where the keyboard
// cursor is), what the composer holds, the composer's Add (or Save), and the question
// a submit asks where the composer still holds a pattern (pendingPattern.tsx). Every
// pattern write goes through the persistent write queue.
import { useCallback, useMemo, useReducer, useRef, useState } from 'react';
import type { Dispatch } from 'react';

import type { PatternKind } from '../../api/types';
import { addBlockers } from './composer';
import type { AddBlocker } from './composer';
import { usePendingPatternGuard } from './pendingPattern';
import type { PendingPatternGuard, SubmitAction } from './pendingPattern';
import { initialSelection, selectionReducer } from './selection';
import type { SelectionAction, SelectionState } from './selection';
import { newId } from '../../lib/writeQueue/writeQueue';
import type { QueuedWrite, WriteQueue } from '../../lib/writeQueue/writeQueue';

/** A pattern the composer can edit: the workspace's or the gold's, as displayed. */
export interface EditablePattern {
  id: number;
  client_id?: string | null;
  number: number;
  description: string;
  kind: PatternKind;
  prefix_ranks: readonly number[];
}

/** The other annotator's pattern a new one starts from (the curator's "Edit, then adopt"). */
export interface PatternSource {
  id: number;
  annotator: string;
}

export interface ComposerDraft<P extends EditablePattern> {
  description: string;
  kind: PatternKind | null;
  /** The pattern being edited, or null for a new one. */
  editing: P | null;
  /** The pattern a new one is adopted from, or null. */
  source: PatternSource | null;
}

function emptyComposer<P extends EditablePattern>(): ComposerDraft<P> {
  return { description: '', kind: null, editing: null, source: null };
}

/** The selection of a key's prefixes, `ranks[i]` being the i-th row's rank. */
export function useSelection(
  ranks: readonly number[],
): [SelectionState, Dispatch<SelectionAction>] {
  const reducer = useMemo(() => selectionReducer(ranks), [ranks]);
  return useReducer(
    (state: SelectionState, action: SelectionAction) => reducer(state, action),
    undefined,
    initialSelection,
  );
}

export interface PatternEditorOptions {
  keyId: number;
  queue: WriteQueue;
  /** The ranks of the key's prefixes, in the order shown. */
  ranks: readonly number[];
  /** A submitted annotation (or gold) is read-only. */
  submitted: boolean;
  /** Which submit asks about a pending pattern: the dialog's words differ. */
  action: SubmitAction;
  /** Runs where the composer is emptied by "Discard it" or by a submit (a stored draft). */
  onClear?: () => void;
}

export function usePatternEditor<P extends EditablePattern>({
  keyId,
  queue,
  ranks,
  submitted,
  action,
  onClear,
}: PatternEditorOptions) {
  const [selection, dispatch] = useSelection(ranks);
  const [composer, setComposer] = useState<ComposerDraft<P>>(emptyComposer);
  const listRef = useRef<HTMLDivElement>(null);
  const descriptionRef = useRef<HTMLInputElement>(null);

  const selectedRanks = useMemo(
    () => ranks.filter((rank) => selection.selected.has(rank)),
    [ranks, selection.selected],
  );
  const blockers: AddBlocker[] = addBlockers({
    submitted,
    selected: selection.selected.size,
    description: composer.description,
    kind: composer.kind,
  });

  /** The composer's Add (or Save): queues the write and empties the composer. */
  const add = useCallback((): QueuedWrite | null => {
    if (blockers.length > 0) return null;
    const description = composer.description.trim();
    const kind = composer.kind!;
    const write = composer.editing
      ? queue.enqueue(keyId, {
          type: 'update',
          ref: { id: composer.editing.id, clientId: composer.editing.client_id },
          changes: { description, kind, prefix_ranks: selectedRanks },
        })
      : queue.enqueue(keyId, {
          type: 'create',
          clientId: newId(),
          description,
          kind,
          prefixRanks: selectedRanks,
          ...(composer.source ? { sourcePatternId: composer.source.id } : {}),
        });
    setComposer(emptyComposer());
    dispatch({ type: 'clear' });
    // Back to the prefixes: the next `j x` selects, it is not typed into the description.
    listRef.current?.focus();
    return write;
  }, [blockers.length, selectedRanks, composer, queue, keyId, dispatch]);

  /** Put a pattern (or a new one's start) in the composer, its prefixes selected. */
  const load = useCallback(
    (draft: ComposerDraft<P>, prefixRanks: Iterable<number>, focus = true) => {
      setComposer(draft);
      dispatch({ type: 'set', ranks: prefixRanks });
      if (focus) descriptionRef.current?.focus();
    },
    [dispatch],
  );

  const edit = useCallback(
    (pattern: P) =>
      load(
        { description: pattern.description, kind: pattern.kind, editing: pattern, source: null },
        pattern.prefix_ranks,
      ),
    [load],
  );

  /** Empty the composer and the selection. */
  const cancelEdit = useCallback(() => {
    setComposer(emptyComposer());
    dispatch({ type: 'clear' });
  }, [dispatch]);

  /** Empty the composer for good (what a submit or "Discard it" does). */
  const clear = useCallback(() => {
    cancelEdit();
    onClear?.();
  }, [cancelEdit, onClear]);

  /** A deleted pattern leaves the composer where it was being edited. */
  const forget = useCallback((pattern: P) => {
    setComposer((current) => (current.editing?.id === pattern.id ? emptyComposer() : current));
  }, []);

  /** Escape: ends an edit (or an adoption), or else clears the selection. */
  const escape = useCallback(() => {
    if (composer.editing || composer.source) cancelEdit();
    else dispatch({ type: 'clear' });
  }, [composer.editing, composer.source, cancelEdit, dispatch]);

  /** A refused create comes back to the composer, unless something new was typed there. */
  const restoreRefused = useCallback(
    (writes: readonly QueuedWrite[]) => {
      const create = writes.find((write) => write.op.type === 'create');
      if (!create || create.op.type !== 'create') return;
      const op = create.op;
      setComposer((current) =>
        current.description.trim()
          ? current
          : { description: op.description, kind: op.kind, editing: null, source: null },
      );
      dispatch({ type: 'set', ranks: op.prefixRanks });
    },
    [dispatch],
  );

  const setKind = useCallback(
    (kind: PatternKind) => setComposer((current) => ({ ...current, kind })),
    [],
  );
  const setDescription = useCallback(
    (description: string) => setComposer((current) => ({ ...current, description })),
    [],
  );

  // A submit never drops the pattern still in the composer: it asks first.
  const guard: PendingPatternGuard = usePendingPatternGuard({
    contents: {
      submitted,
      blockers,
      description: composer.description,
      kind: composer.kind,
      selected: selectedRanks,
      editing: composer.editing,
    },
    editingNumber: composer.editing?.number ?? null,
    action,
    queue,
    add,
    discard: clear,
  });

  /** The props of the composer itself (PatternComposer). */
  const composerProps = {
    ref: descriptionRef,
    description: composer.description,
    onDescription: setDescription,
    kind: composer.kind,
    onKind: setKind,
    selected: selection.selected.size,
    blockers,
    editing: composer.editing?.number ?? null,
    onAdd: add,
    onCancelEdit: cancelEdit,
    onClearSelection: () => dispatch({ type: 'clear' }),
  };

  return {
    selection,
    dispatch,
    selectedRanks,
    composer,
    blockers,
    listRef,
    descriptionRef,
    add,
    load,
    edit,
    cancelEdit,
    clear,
    forget,
    escape,
    restoreRefused,
    setKind,
    guard,
    composerProps,
  };
}

export type PatternEditor<P extends EditablePattern> = ReturnType<typeof usePatternEditor<P>>;
