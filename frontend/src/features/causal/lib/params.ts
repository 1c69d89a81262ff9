// A job's `params` (as asked, each key group with its `resolved` keys) in a few words for
// the job list. The schema types them as an object only: each field is read with care.

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** How many keys a group resolved to, or null where it does not say. */
export function resolvedCount(group: unknown): number | null {
  const resolved = record(group)?.resolved;
  return Array.isArray(resolved) ? resolved.length : null;
}

/** The text a job was asked about: the tracing's prompt, the attribution's prompts. */
export function promptsOf(params: Record<string, unknown>): string[] {
  if (typeof params.prompt === 'string') return [params.prompt];
  if (Array.isArray(params.prompts)) {
    return params.prompts.filter((p): p is string => typeof p === 'string');
  }
  return [];
}

export function answerOf(params: Record<string, unknown>): string | null {
  return typeof params.answer === 'string' ? params.answer : null;
}
