import { describe, expect, it } from 'vitest';

import { json, mockApi } from '../../../test/utils';
import { nextKeyFor } from './nextKey';

describe('nextKeyFor', () => {
  it("falls back to the user's own assignments when the link names someone else's", async () => {
    const fetchMock = mockApi({
      'GET /api/next-key/?assignment=1': () =>
        json(404, { detail: 'Not found.', code: 'not_found' }),
      'GET /api/next-key/': () => json(200, { key_id: 7, assignment_id: 2 }),
    });
    await expect(nextKeyFor(1)).resolves.toEqual({ key_id: 7, assignment_id: 2 });
    expect(fetchMock).toHaveBeenCalledTimes(2);
  });

  it('keeps to the named assignment when it is the user’s, and says when all is done', async () => {
    const fetchMock = mockApi({
      'GET /api/next-key/?assignment=2': () => json(204, null),
    });
    await expect(nextKeyFor(2)).resolves.toBeUndefined();
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });

  it('passes on other failures', async () => {
    mockApi({
      'GET /api/next-key/?assignment=2': () =>
        json(503, { detail: 'The database is unavailable.', code: 'database_unavailable' }),
    });
    await expect(nextKeyFor(2)).rejects.toMatchObject({ status: 503 });
  });
});
