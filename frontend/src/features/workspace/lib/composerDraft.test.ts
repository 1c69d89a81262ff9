import { beforeEach, describe, expect, it } from 'vitest';

import { draftKey, loadDraft, saveDraft } from './composerDraft';

describe('the composer draft in storage', () => {
  beforeEach(() => window.localStorage.clear());

  it('keeps one draft per user and key, and no entry for an empty one', () => {
    saveDraft(1, 10, { selected: [2, 3], description: 'half', kind: 'semantic', editing: null });
    expect(loadDraft(1, 10)).toEqual({
      selected: [2, 3],
      description: 'half',
      kind: 'semantic',
      editing: null,
    });
    expect(loadDraft(2, 10)).toBeNull();
    expect(loadDraft(1, 11)).toBeNull();
    saveDraft(1, 10, { selected: [], description: '', kind: null, editing: null });
    expect(window.localStorage.getItem(draftKey(1, 10))).toBeNull();
  });

  it('reads what it can of a damaged entry and never throws', () => {
    window.localStorage.setItem(
      draftKey(1, 10),
      '{"selected":[1,"x",2.5,3],"kind":"bogus","description":7}',
    );
    expect(loadDraft(1, 10)).toEqual({
      selected: [1, 3],
      description: '',
      kind: null,
      editing: null,
    });
    window.localStorage.setItem(draftKey(1, 10), 'not json');
    expect(loadDraft(1, 10)).toBeNull();
  });
});
