import { api, isApiError } from '../../../api/client';
import type { NextKey } from '../../../api/types';

/**
 * The user's next unfinished key, in `assignmentId` when it is one of theirs. A link may
 * carry someone else's assignment (the API answers 404 for it): then the next key of
 * any of the user's own assignments, never "nothing left" while their keys are open.
 * `undefined`: every key of theirs is submitted.
 */
export async function nextKeyFor(assignmentId: number | undefined): Promise<NextKey | undefined> {
  if (assignmentId === undefined) return api.nextKey();
  try {
    return await api.nextKey(assignmentId);
  } catch (error) {
    if (isApiError(error) && error.status === 404) return api.nextKey();
    throw error;
  }
}
