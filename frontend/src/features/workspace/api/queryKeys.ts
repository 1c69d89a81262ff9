/** The annotator's query keys. */
export const workspaceKeys = {
  /** The home page's list of the annotator's assignments. */
  assignments: () => ['assignments'] as const,
  assignmentKeys: (assignmentId: number, page: number) =>
    ['assignment-keys', assignmentId, page] as const,
  /** One key's detail, asked with the assignment of the address (or none). */
  keyDetail: (keyId: number, assignmentId?: number) =>
    ['key', keyId, assignmentId ?? null] as const,
  /** Cached per study and per latest version, so that a new version is read afresh. */
  guidelines: (studyId: number, version: number | null) =>
    ['guidelines', studyId, version] as const,
  /** The key's suggestions with the user's own decisions. */
  suggestions: (keyId: number) => ['suggestions', keyId] as const,
};
