import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';

import { placeOf, WorkspaceNotice } from './WorkspaceNotice';
import type { QueuedWrite } from './writeQueue';

const write = (op: QueuedWrite['op']): QueuedWrite => ({ id: 'w', keyId: 1, op });

describe('a notice about writes', () => {
  it('goes beside the control that made the latest of them', () => {
    expect(placeOf([write({ type: 'note', note: 'x' })])).toBe('note');
    expect(
      placeOf([
        write({ type: 'note', note: 'x' }),
        write({
          type: 'create',
          clientId: 'c',
          description: 'd',
          kind: 'shallow',
          prefixRanks: [1, 2, 3],
        }),
      ]),
    ).toBe('composer');
    expect(placeOf([write({ type: 'delete', ref: { id: 3, clientId: null } })])).toBe('patterns');
    expect(placeOf([write({ type: 'submit' })])).toBe('submit');
    expect(placeOf([])).toBe('top');
  });

  it('renders only in its own slot', () => {
    const notice = {
      kind: 'rejected' as const,
      text: 'refused',
      changes: [],
      place: 'note' as const,
    };
    render(
      <>
        <WorkspaceNotice notice={notice} at="top" onDismiss={() => undefined} />
        <WorkspaceNotice notice={notice} at="note" onDismiss={() => undefined} />
      </>,
    );
    expect(screen.getAllByTestId('notice')).toHaveLength(1);
    expect(screen.getByTestId('notice')).toHaveAttribute('data-place', 'note');
  });
});
