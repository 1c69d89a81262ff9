// The half-built pattern of each key (selected prefixes, description, kind, the
// pattern being edited), kept in localStorage so that a reload or a closed tab does
// not lose it. One entry per user and key; an empty draft leaves no entry.
import { useEffect, useState } from 'react';

import type { PatternKind } from '../../../api/types';
import { KINDS } from '../../../components/patternEditor/labels';
import type { DisplayPattern } from '../../../components/patternEditor/labels';
import { safeLocalStorage } from '../../../lib/writeQueue/queueStorage';
import { findPattern } from '../../../lib/writeQueue/writeQueue';
import type { PatternRef } from '../../../lib/writeQueue/writeQueue';

export interface ComposerDraft {
  selected: number[];
  description: string;
  kind: PatternKind | null;
  editing: PatternRef | null;
}

export function draftKey(userId: number, keyId: number): string {
  return `ffkv.draft.${userId}.${keyId}`;
}

export function loadDraft(
  userId: number,
  keyId: number,
  storage = safeLocalStorage(),
): ComposerDraft | null {
  try {
    const value: unknown = JSON.parse(storage?.getItem(draftKey(userId, keyId)) ?? 'null');
    if (!value || typeof value !== 'object') return null;
    const draft = value as Partial<ComposerDraft>;
    const editing = draft.editing;
    return {
      selected: Array.isArray(draft.selected)
        ? draft.selected.filter((rank): rank is number => Number.isInteger(rank))
        : [],
      description: typeof draft.description === 'string' ? draft.description : '',
      kind: KINDS.find((kind) => kind === draft.kind) ?? null,
      editing:
        editing && typeof editing === 'object'
          ? {
              id: typeof editing.id === 'number' ? editing.id : undefined,
              clientId: editing.clientId ?? null,
            }
          : null,
    };
  } catch {
    return null; // unreadable: start afresh
  }
}

export function saveDraft(
  userId: number,
  keyId: number,
  draft: ComposerDraft,
  storage = safeLocalStorage(),
): void {
  const empty =
    draft.selected.length === 0 &&
    !draft.description &&
    draft.kind === null &&
    draft.editing === null;
  try {
    if (empty) storage?.removeItem(draftKey(userId, keyId));
    else storage?.setItem(draftKey(userId, keyId), JSON.stringify(draft));
  } catch {
    // Storage full or disabled: the draft lives on screen only.
  }
}

/** Forget the draft of one key (it was submitted). */
export function clearDraft(userId: number, keyId: number, storage = safeLocalStorage()): void {
  try {
    storage?.removeItem(draftKey(userId, keyId));
  } catch {
    // Storage disabled: there is nothing to forget.
  }
}

/** The draft as the page holds it: the pattern being edited, found among the key's. */
export interface ShownDraft {
  selected: number[];
  description: string;
  kind: PatternKind | null;
  editing: DisplayPattern | null;
}

/**
 * Keeps the composer's draft of one key in storage: restored once, when the key's
 * patterns are known (`patterns` not null), then saved on every change.
 */
export function useComposerDraft(
  userId: number,
  keyId: number,
  patterns: readonly DisplayPattern[] | null,
  current: ShownDraft,
  restore: (draft: ShownDraft) => void,
): void {
  const [restored, setRestored] = useState(false);
  const { selected, description, kind, editing } = current;

  useEffect(() => {
    if (restored || !patterns) return;
    setRestored(true);
    const draft = loadDraft(userId, keyId);
    if (!draft) return;
    const pattern = draft.editing ? (findPattern(patterns, draft.editing) ?? null) : null;
    restore({ ...draft, editing: pattern });
  }, [restored, patterns, userId, keyId, restore]);

  const selectedKey = selected.join();
  useEffect(() => {
    if (!restored) return;
    saveDraft(userId, keyId, {
      selected: selectedKey ? selectedKey.split(',').map(Number) : [],
      description,
      kind,
      editing: editing ? { id: editing.id, clientId: editing.client_id } : null,
    });
  }, [restored, userId, keyId, selectedKey, description, kind, editing]);
}
