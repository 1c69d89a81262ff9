import type { User } from '../api/types';

export const BOOTSTRAP_ELEMENT_ID = 'ffkv-bootstrap';

export interface Bootstrap {
  user: User | null;
}

/**
 * What Django rendered into the page with `json_script` (config/views.py `spa`),
 * so the first screen knows who is signed in without a request. `undefined` when
 * the element is missing or unreadable: then ask the API.
 */
export function readBootstrap(doc: Document = document): Bootstrap | undefined {
  const element = doc.getElementById(BOOTSTRAP_ELEMENT_ID);
  if (!element?.textContent) return undefined;
  try {
    const data: unknown = JSON.parse(element.textContent);
    if (data !== null && typeof data === 'object' && 'user' in data) {
      const user = (data as { user: unknown }).user;
      if (user === null) return { user: null };
      if (typeof user === 'object' && typeof (user as User).username === 'string') {
        return { user: user as User };
      }
    }
  } catch {
    // fall through: a broken bootstrap is the same as none
  }
  return undefined;
}
