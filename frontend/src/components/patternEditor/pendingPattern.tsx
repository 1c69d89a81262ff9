// Submit (the workspace) and Save gold (the adjudication screen) never drop the pattern
// that is still in the composer: they ask first. What "could be added" is the Add
// button's own rule (composer.ts). A composer that holds typed text that cannot be added
// as it is (too few prefixes, no kind) asks too, with its own message, since the text
// would be lost; a selection or a kind alone does not ask (selecting is also how a
// pattern's prefixes are shown). Either way the screen empties the composer of what it
// submits.
import { useCallback, useEffect, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

import type { PatternKind } from '../../api/types';
import type { AddBlocker } from './composer';
import { MIN_PREFIXES } from './labels';
import { Modal } from '../Modal';
import { VisibleText } from './tokenDisplay';
import type { QueuedWrite, WriteQueue } from '../../lib/writeQueue/writeQueue';

/** What the composer holds when submit is asked for. */
export type ComposerHolding =
  /** Nothing that would be lost: submit at once. */
  | 'none'
  /** A pattern the Add (or Save) button would take. */
  | 'complete'
  /** Typed text that cannot be added as it is. */
  | 'incomplete';

export interface ComposerContents {
  submitted: boolean;
  blockers: readonly AddBlocker[];
  description: string;
  kind: PatternKind | null;
  /** The selected ranks. */
  selected: readonly number[];
  /** The pattern being edited, if any: an edit that changes nothing is not asked about. */
  editing: { description: string; kind: PatternKind; prefix_ranks: readonly number[] } | null;
}

function sameRanks(a: readonly number[], b: readonly number[]): boolean {
  const left = [...a].sort((x, y) => x - y).join();
  return left === [...b].sort((x, y) => x - y).join();
}

export function composerHolding(contents: ComposerContents): ComposerHolding {
  const { submitted, blockers, description, kind, selected, editing } = contents;
  if (submitted) return 'none';
  if (
    editing &&
    description.trim() === editing.description &&
    kind === editing.kind &&
    sameRanks(selected, editing.prefix_ranks)
  ) {
    return 'none';
  }
  if (blockers.length === 0) return 'complete';
  return description.trim() ? 'incomplete' : 'none';
}

/** Which screen asks: the labels of its submit differ ("submit", "save the gold"). */
export type SubmitAction = 'submit' | 'saveGold';

type Choice = 'add' | 'discard' | 'cancel';

export function ConfirmPendingPattern({
  holding,
  action,
  editing,
  description,
  blockers,
  selected,
  onChoose,
}: {
  holding: 'complete' | 'incomplete';
  action: SubmitAction;
  /** The number of the pattern being edited ("P2"), or null for a new one. */
  editing: number | null;
  description: string;
  blockers: readonly AddBlocker[];
  selected: number;
  onChoose: (choice: Choice) => void;
}) {
  const { t } = useTranslation();
  const first = useRef<HTMLButtonElement>(null);
  const which = editing === null ? 'new' : 'edit';
  const reasons = blockers.map((blocker) =>
    t(`composer.blocked.${blocker}`, { min: MIN_PREFIXES, count: selected }),
  );
  return (
    <Modal
      labelledBy="pending-pattern-heading"
      onClose={() => onChoose('cancel')}
      initialFocus={first}
      testId="pending-pattern"
    >
      <h2 id="pending-pattern-heading">
        {holding === 'complete'
          ? t(`pendingPattern.heading.${which}`, { number: editing ?? 0 })
          : t('pendingPattern.heading.incomplete')}
      </h2>
      <p>
        {holding === 'complete'
          ? t(`pendingPattern.text.${which}`, { number: editing ?? 0 })
          : t('pendingPattern.text.incomplete')}
      </p>
      <blockquote className="pending-description" data-testid="pending-description">
        <VisibleText text={description.trim()} />
      </blockquote>
      {holding === 'incomplete' && (
        <ul className="blockers">
          {reasons.map((reason) => (
            <li key={reason}>{reason}</li>
          ))}
        </ul>
      )}
      <div className="composer-actions">
        {holding === 'complete' && (
          <button ref={first} type="button" className="primary" onClick={() => onChoose('add')}>
            {t(`pendingPattern.add.${which}.${action}`)}
          </button>
        )}
        <button
          ref={holding === 'incomplete' ? first : undefined}
          type="button"
          className={holding === 'incomplete' ? 'primary' : undefined}
          onClick={() => onChoose('discard')}
        >
          {t(`pendingPattern.discard.${action}`)}
        </button>
        <button type="button" onClick={() => onChoose('cancel')}>
          {t('pendingPattern.cancel')}
        </button>
      </div>
    </Modal>
  );
}

/** How a submit went ahead: nothing to ask about, the pattern added, or discarded. */
export type Went = 'nothing' | 'added' | 'discarded';

export interface PendingPatternGuard {
  /**
   * Ask for a submit: `then` runs at once where the composer holds nothing to lose,
   * after the person's choice otherwise; after "add" only once the server has the
   * pattern (never where the add is refused). `then` is told how it went.
   */
  request: (then: (how: Went) => void) => void;
  dialog: ReactNode;
}

export function usePendingPatternGuard({
  contents,
  editingNumber,
  action,
  queue,
  add,
  discard,
}: {
  contents: ComposerContents;
  /** The number of the pattern being edited, for the dialog's words. */
  editingNumber: number | null;
  action: SubmitAction;
  queue: WriteQueue;
  /** The composer's Add: queues the write (and empties the composer), or null. */
  add: () => QueuedWrite | null;
  /** Empty the composer. */
  discard: () => void;
}): PendingPatternGuard {
  const holding = composerHolding(contents);
  const [asking, setAsking] = useState<((how: Went) => void) | null>(null);
  const waiting = useRef(false);
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const request = useCallback(
    (then: (how: Went) => void) => {
      if (waiting.current) return; // an add on its way will submit
      if (holding === 'none') then('nothing');
      else setAsking(() => then);
    },
    [holding],
  );

  const choose = (choice: Choice) => {
    const then = asking;
    setAsking(null);
    if (!then || choice === 'cancel') return;
    if (choice === 'discard') {
      discard();
      then('discarded');
      return;
    }
    const write = add();
    if (!write) return;
    waiting.current = true;
    void queue.whenDone(write.id).then((outcome) => {
      waiting.current = false;
      if (outcome === 'applied' && mounted.current) then('added');
    });
  };

  const dialog =
    asking && holding !== 'none' ? (
      <ConfirmPendingPattern
        holding={holding}
        action={action}
        editing={editingNumber}
        description={contents.description}
        blockers={contents.blockers}
        selected={contents.selected.length}
        onChoose={choose}
      />
    ) : null;

  return { request, dialog };
}
