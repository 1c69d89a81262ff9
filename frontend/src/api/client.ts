// The one door to the API: same-origin session cookies, JSON in and out, the CSRF
// token on unsafe methods, and every failure turned into an ApiError.
import type { Assignment, LoginRequest, User } from './types';

/** A failed API call. `status` 0 means the request never got an HTTP answer. */
export class ApiError extends Error {
  readonly status: number;
  /** The server's message (`{"detail": "..."}`), or '' when it sent none. */
  readonly detail: string;

  constructor(status: number, detail: string) {
    super(detail || `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function readCookie(name: string): string | null {
  for (const part of document.cookie.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return null;
}

// DRF answers `{"detail": "..."}` for most errors and `{"field": ["..."]}` for
// validation errors; fold the latter into one readable line.
function detailFrom(body: unknown): string {
  if (body === null || typeof body !== 'object') return '';
  const record = body as Record<string, unknown>;
  if (typeof record.detail === 'string') return record.detail;
  const messages: string[] = [];
  for (const [field, value] of Object.entries(record)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first !== 'string') continue;
    messages.push(field === 'non_field_errors' ? first : `${field}: ${first}`);
  }
  return messages.join(' ');
}

async function readJson(response: Response): Promise<unknown> {
  const type = response.headers.get('Content-Type') ?? '';
  if (!type.includes('json')) return undefined;
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const upper = method.toUpperCase();
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (!SAFE_METHODS.has(upper)) {
    // Django rotates the token at login, so read the cookie on every request.
    const token = readCookie('csrftoken');
    if (token) headers['X-CSRFToken'] = token;
  }

  let response: Response;
  try {
    response = await fetch(path, {
      method: upper,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, '');
  }

  if (response.status === 204) return undefined as T;
  const payload = await readJson(response);
  if (!response.ok) throw new ApiError(response.status, detailFrom(payload));
  return payload as T;
}

export const api = {
  me: () => request<User>('GET', '/api/auth/me/'),
  login: (credentials: LoginRequest) => request<User>('POST', '/api/auth/login/', credentials),
  logout: () => request<void>('POST', '/api/auth/logout/'),
  assignments: () => request<Assignment[]>('GET', '/api/assignments/'),
};
