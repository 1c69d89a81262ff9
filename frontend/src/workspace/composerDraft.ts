// The half-built pattern of each key (selected prefixes, description, kind, the
// pattern being edited), kept in localStorage so that a reload or a closed tab does
// not lose it. One entry per user and key; an empty draft leaves no entry.
import type { PatternKind } from '../api/types';
import { KINDS } from './labels';
import { safeLocalStorage } from './queueStorage';
import type { PatternRef } from './writeQueue';

export interface ComposerDraft {
  selected: number[];
  description: string;
  kind: PatternKind | null;
  editing: PatternRef | null;
}

export function draftKey(userId: number, keyId: number): string {
  return `ffkv.draft.${userId}.${keyId}`;
}

export function loadDraft(userId: number, keyId: number, storage = safeLocalStorage()): ComposerDraft | null {
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
          ? { id: typeof editing.id === 'number' ? editing.id : undefined, clientId: editing.clientId ?? null }
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
    draft.selected.length === 0 && !draft.description && draft.kind === null && draft.editing === null;
  try {
    if (empty) storage?.removeItem(draftKey(userId, keyId));
    else storage?.setItem(draftKey(userId, keyId), JSON.stringify(draft));
  } catch {
    // Storage full or disabled: the draft lives on screen only.
  }
}
