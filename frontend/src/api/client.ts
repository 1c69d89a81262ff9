// The one door to the API: same-origin session cookies, JSON in and out, the CSRF
// token on unsafe methods, and every failure turned into an ApiError.
import type {
  AdminAnnotator,
  AnnotatorDeactivated,
  AnnotatorWithLink,
  AnnotationState,
  Assignment,
  AssignmentCreateRequest,
  AssignmentExtended,
  AssignmentExtendRequest,
  AssignmentKeyPage,
  Batch,
  BatchCreateRequest,
  BatchKeyPage,
  BatchProgress,
  ExportFormat,
  ExportJob,
  KeyDetail,
  LoginRequest,
  MiningRun,
  MiningRunCreateRequest,
  NextKey,
  PatchedPatternUpdateRequest,
  PatternCreateRequest,
  StudyDetail,
  StudyImported,
  StudyReport,
  StudySummary,
  User,
} from './types';

/** A failed API call. `status` 0 means the request never got an HTTP answer. */
export class ApiError extends Error {
  readonly status: number;
  /** The server's message (`{"detail": "..."}`, in English), or '' when it sent none. */
  readonly detail: string;
  /** The server's stable name for the error (`{"code": "..."}`), or '' when it sent none. */
  readonly code: string;
  /** The parsed JSON body, when there was one (a 409 carries `current`). */
  readonly body: unknown;

  constructor(status: number, detail: string, body?: unknown) {
    super(detail || `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
    const code = (body as { code?: unknown } | null | undefined)?.code;
    this.code = typeof code === 'string' ? code : '';
    this.body = body;
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

// The API answers `{"detail": "...", "code": "..."}` for every error (a validation
// error adds `fields`); a body of bare `{"field": ["..."]}` is folded into one line.
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
  // A FormData body (a file upload) sets its own multipart Content-Type and boundary.
  const isForm = typeof FormData !== 'undefined' && body instanceof FormData;
  if (body !== undefined && !isForm) headers['Content-Type'] = 'application/json';
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
      body: body === undefined ? undefined : isForm ? (body as FormData) : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, '');
  }

  if (response.status === 204) return undefined as T;
  const payload = await readJson(response);
  if (!response.ok) throw new ApiError(response.status, detailFrom(payload), payload);
  return payload as T;
}

const enc = encodeURIComponent;

/** The report's filters; `null` (or an empty list) means "all". */
export interface ReportQuery {
  annotators: readonly string[] | null;
  layers: readonly number[] | null;
  submittedOnly: boolean;
}

/**
 * The query string of a report request ('' for the defaults): `annotators=a,b`,
 * `layers=1,2` (sorted), `submitted_only=false` when drafts count too.
 */
export function reportQueryString(query: ReportQuery): string {
  const parts: string[] = [];
  if (query.annotators && query.annotators.length > 0) {
    parts.push(`annotators=${query.annotators.map(enc).join(',')}`);
  }
  if (query.layers && query.layers.length > 0) {
    parts.push(`layers=${[...query.layers].sort((a, b) => a - b).join(',')}`);
  }
  if (!query.submittedOnly) parts.push('submitted_only=false');
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** Addresses the browser opens itself (downloads), not fetched as JSON. */
export const urls = {
  reportCsv: (studyId: number, query: ReportQuery) =>
    `/api/admin/studies/${studyId}/report.csv${reportQueryString(query)}`,
  export: (studyId: number, format: ExportFormat) =>
    `/api/studies/${studyId}/export?format=${enc(format)}`,
  exportDownload: (jobId: number) => `/api/admin/exports/${jobId}/download`,
};

export const api = {
  me: () => request<User>('GET', '/api/auth/me/'),
  login: (credentials: LoginRequest) => request<User>('POST', '/api/auth/login/', credentials),
  logout: () => request<void>('POST', '/api/auth/logout/'),
  /** Whose one-time link to set a password this is (a 400 when it is not valid). */
  passwordLinkOwner: (uid: string, token: string) =>
    request<{ username: string }>('POST', '/api/auth/password-link/', { uid, token }),
  /** Set one's password with a one-time link; signs in. */
  setPassword: (uid: string, token: string, password: string) =>
    request<User>('POST', '/api/auth/set-password/', { uid, token, password }),
  assignments: () => request<Assignment[]>('GET', '/api/assignments/'),
  /** One page of an assignment's keys (`limit` at most 1000); `count` is the whole's. */
  assignmentKeys: (assignmentId: number, offset = 0, limit = 100) =>
    request<AssignmentKeyPage>(
      'GET',
      `/api/assignments/${assignmentId}/keys/?limit=${limit}&offset=${offset}`,
    ),
  /** `undefined` (HTTP 204) when nothing is left to annotate. */
  nextKey: (assignmentId?: number) =>
    request<NextKey | undefined>(
      'GET',
      assignmentId === undefined ? '/api/next-key/' : `/api/next-key/?assignment=${assignmentId}`,
    ),
  key: (keyId: number) => request<KeyDetail>('GET', `/api/keys/${keyId}/`),
  annotation: (keyId: number) => request<AnnotationState>('GET', `/api/keys/${keyId}/annotation/`),
  saveNote: (keyId: number, note: string, version: number) =>
    request<AnnotationState>('PUT', `/api/keys/${keyId}/annotation/`, { note, version }),
  createPattern: (keyId: number, body: PatternCreateRequest) =>
    request<AnnotationState>('POST', `/api/keys/${keyId}/patterns/`, body),
  updatePattern: (keyId: number, patternId: number, body: PatchedPatternUpdateRequest) =>
    request<AnnotationState>('PATCH', `/api/keys/${keyId}/patterns/${patternId}/`, body),
  deletePattern: (keyId: number, patternId: number, version: number) =>
    request<AnnotationState>(
      'DELETE',
      `/api/keys/${keyId}/patterns/${patternId}/?version=${enc(String(version))}`,
    ),
  submit: (keyId: number, version: number) =>
    request<AnnotationState>('POST', `/api/keys/${keyId}/submit/`, { version }),
  reopen: (keyId: number, version: number) =>
    request<AnnotationState>('POST', `/api/keys/${keyId}/reopen/`, { version }),
  admin: {
    studies: () => request<StudySummary[]>('GET', '/api/admin/studies/'),
    study: (studyId: number) => request<StudyDetail>('GET', `/api/admin/studies/${studyId}/`),
    updateStudy: (studyId: number, body: { show_value_tokens: boolean }) =>
      request<StudyDetail>('PATCH', `/api/admin/studies/${studyId}/`, body),
    batches: (studyId: number) => request<Batch[]>('GET', `/api/admin/studies/${studyId}/batches/`),
    createBatch: (studyId: number, body: BatchCreateRequest) =>
      request<Batch>('POST', `/api/admin/studies/${studyId}/batches/`, body),
    assign: (batchId: number, body: AssignmentCreateRequest) =>
      request<Batch>('POST', `/api/admin/batches/${batchId}/assignments/`, body),
    /** Add annotators to an assigned batch and/or raise its overlap. */
    extendAssignment: (batchId: number, body: AssignmentExtendRequest) =>
      request<AssignmentExtended>('POST', `/api/admin/batches/${batchId}/assignments/extend/`, body),
    /** One page of a batch's keys with each annotator's status (`limit` at most 500). */
    batchKeys: (batchId: number, offset = 0, limit = 50) =>
      request<BatchKeyPage>(
        'GET',
        `/api/admin/batches/${batchId}/keys/?limit=${limit}&offset=${offset}`,
      ),
    batchProgress: (batchId: number) =>
      request<BatchProgress>('GET', `/api/admin/batches/${batchId}/progress/`),
    annotators: () => request<AdminAnnotator[]>('GET', '/api/admin/annotators/'),
    /** A new annotator without a password, with the one-time link that invites them. */
    createAnnotator: (username: string) =>
      request<AnnotatorWithLink>('POST', '/api/admin/annotators/', { username }),
    /** A new one-time link; the annotator's current password stops working. */
    passwordLink: (userId: number) =>
      request<AnnotatorWithLink>('POST', `/api/admin/annotators/${userId}/password-link/`),
    /** `transferDrafts`: the replacement sees and continues the drafts (off: starts blank). */
    deactivate: (userId: number, reassignTo: number | string | null, transferDrafts: boolean) =>
      request<AnnotatorDeactivated>('POST', `/api/admin/annotators/${userId}/deactivate/`, {
        reassign_to: reassignTo,
        transfer_drafts: transferDrafts,
      }),
    miningRuns: () => request<MiningRun[]>('GET', '/api/admin/mining-runs/'),
    miningRun: (runId: number) => request<MiningRun>('GET', `/api/admin/mining-runs/${runId}/`),
    createMiningRun: (body: MiningRunCreateRequest) =>
      request<MiningRun>('POST', '/api/admin/mining-runs/', body),
    cancelMiningRun: (runId: number) =>
      request<MiningRun>('POST', `/api/admin/mining-runs/${runId}/cancel/`),
    report: (studyId: number, query: ReportQuery) =>
      request<StudyReport>('GET', `/api/admin/studies/${studyId}/report/${reportQueryString(query)}`),
    createExport: (studyId: number, format: ExportFormat) =>
      request<ExportJob>('POST', `/api/admin/studies/${studyId}/exports/`, { format }),
    exportJob: (jobId: number) => request<ExportJob>('GET', `/api/admin/exports/${jobId}/`),
    /**
     * A 400 carries `ImportErrors` (`{detail, code, errors[]}`) in the ApiError's body.
     * Without `live` the new study is archived (read-only, unseen by annotators);
     * `assign` (with `live`) gives each annotator back the keys they annotated.
     */
    importStudy: (
      file: File,
      studyName?: string,
      options: { live?: boolean; assign?: boolean } = {},
    ) => {
      const form = new FormData();
      form.append('file', file);
      if (studyName) form.append('study_name', studyName);
      if (options.live) form.append('live', 'true');
      if (options.live && options.assign) form.append('assign', 'true');
      return request<StudyImported>('POST', '/api/admin/imports/', form);
    },
  },
};
