// The one door to the API: same-origin session cookies, JSON in and out, the CSRF
// token on unsafe methods, and every failure turned into an ApiError. Paths, their
// parameters, queries, bodies and answers are typed from the schema (openapi-fetch).
import createClient, { createQuerySerializer } from 'openapi-fetch';

import type { CausalJobCreate, CausalProbe } from './causal';
import type { GoldPatternCreate, GoldPatternUpdate, GoldUpdate, ReviewQueueQuery } from './review';
import { reviewQueueParams } from './review';
import type { paths } from './schema';
import type {
  AssignmentCreateRequest,
  AssignmentExtendRequest,
  BatchCreateRequest,
  ExportFormat,
  KeyFlagRequest,
  LoginRequest,
  MiningRunCreateRequest,
  NextKey,
  PatchedPatternUpdateRequest,
  PatternCreateRequest,
  StudyImported,
  StudyUpdateRequest,
  SuggestionAcceptRequest,
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

/**
 * The one request openapi-fetch cannot make: a multipart upload (the study import).
 * Same cookies, CSRF token and errors as the typed calls below; nothing is checked
 * against the schema here, so keep its callers few.
 */
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

function isJson(response: Response): boolean {
  return (response.headers.get('Content-Type') ?? '').includes('json');
}

// openapi-fetch hands over a Request; `fetch` is looked up on each call (tests stub
// it). No middleware and no await before `fetch`: the request is out as soon as the
// call is made, as it was before the typed client.
async function send(request: Request): Promise<Response> {
  if (!SAFE_METHODS.has(request.method)) {
    // Django rotates the token at login, so read the cookie on every request.
    const token = readCookie('csrftoken');
    if (token) request.headers.set('X-CSRFToken', token);
  }
  let response: Response;
  try {
    response = await fetch(request);
  } catch {
    throw new ApiError(0, '');
  }
  if (isJson(response)) return response;
  // Only JSON is read: a non-JSON answer (Django's HTML error page, a proxy's) has no body.
  return new Response(null, { status: response.status, statusText: response.statusText });
}

/**
 * Typed from the schema: a path, path parameter, query or body the API does not have
 * fails `npm run typecheck`. Absolute same-origin URLs, as a Request needs one.
 */
export const client = createClient<paths>({
  baseUrl: window.location.origin,
  credentials: 'same-origin',
  headers: { Accept: 'application/json' },
  fetch: send,
});

/** One typed call's answer, or an ApiError for an error status or no (whole) answer. */
async function call<Data>(
  pending: Promise<{ data?: Data; error?: unknown; response: Response }>,
): Promise<Data> {
  let result: { data?: Data; error?: unknown; response: Response };
  try {
    result = await pending;
  } catch (error) {
    if (isApiError(error)) throw error;
    // An answer whose body broke off (JSON cut short) counts as no answer.
    throw new ApiError(0, '');
  }
  const { data, error, response } = result;
  if (!response.ok) {
    // openapi-fetch leaves a body it could not parse as text; such a body is no body.
    const body = typeof error === 'string' ? undefined : error;
    throw new ApiError(response.status, detailFrom(body), body);
  }
  return data as Data;
}

const enc = encodeURIComponent;

/** The report's filters; `null` (or an empty list) means "all". */
export interface ReportQuery {
  annotators: readonly string[] | null;
  layers: readonly number[] | null;
  submittedOnly: boolean;
  /** Count the gold (curated) annotations as one more coder in the agreement. */
  goldAsCoder?: boolean;
}

type ReportParams = NonNullable<
  paths['/api/admin/studies/{study_id}/report/']['get']['parameters']['query']
>;

// Each value encoded already, so the lists' commas stay bare in the query string.
function reportParams(query: ReportQuery): ReportParams {
  const params: ReportParams = {};
  if (query.annotators && query.annotators.length > 0) {
    params.annotators = query.annotators.map(enc).join(',');
  }
  if (query.layers && query.layers.length > 0) {
    params.layers = [...query.layers].sort((a, b) => a - b).join(',');
  }
  if (!query.submittedOnly) params.submitted_only = false;
  if (query.goldAsCoder) params.gold_as_coder = true;
  return params;
}

const REPORT_QUERY = { allowReserved: true } as const;
const serializeReportQuery = createQuerySerializer<ReportParams>(REPORT_QUERY);

/**
 * The query string of a report request ('' for the defaults): `annotators=a,b`,
 * `layers=1,2` (sorted), `submitted_only=false` when drafts count too, `gold_as_coder=true`
 * when gold counts as a coder.
 */
export function reportQueryString(query: ReportQuery): string {
  const search = serializeReportQuery(reportParams(query));
  return search ? `?${search}` : '';
}

// A path of the schema with its `{name}` parameters filled in.
function link(path: keyof paths, params: Record<string, number>, search = ''): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => enc(String(params[name]))) + search;
}

/** Addresses the browser opens itself (downloads), not fetched as JSON. */
export const urls = {
  reportCsv: (studyId: number, query: ReportQuery) =>
    link(
      '/api/admin/studies/{study_id}/report.csv',
      { study_id: studyId },
      reportQueryString(query),
    ),
  annotatorTableCsv: (studyId: number) =>
    link('/api/admin/studies/{study_id}/annotators.csv', { study_id: studyId }),
  export: (studyId: number, format: ExportFormat) =>
    link('/api/studies/{study_id}/export', { study_id: studyId }, `?format=${enc(format)}`),
  exportDownload: (jobId: number) =>
    link('/api/admin/exports/{job_id}/download', { job_id: jobId }),
};

export const api = {
  me: () => call(client.GET('/api/auth/me/')),
  login: (credentials: LoginRequest) =>
    call(client.POST('/api/auth/login/', { body: credentials })),
  logout: () => call(client.POST('/api/auth/logout/')),
  /** Whose one-time link to set a password this is (a 400 when it is not valid). */
  passwordLinkOwner: (uid: string, token: string) =>
    call(client.POST('/api/auth/password-link/', { body: { uid, token } })),
  /** Set one's password with a one-time link; signs in. */
  setPassword: (uid: string, token: string, password: string) =>
    call(client.POST('/api/auth/set-password/', { body: { uid, token, password } })),
  assignments: () => call(client.GET('/api/assignments/')),
  preparing: () => call(client.GET('/api/preparing/')),
  /** One page of an assignment's keys (`limit` at most 1000); `count` is the whole's. */
  assignmentKeys: (assignmentId: number, offset = 0, limit = 100) =>
    call(
      client.GET('/api/assignments/{assignment_id}/keys/', {
        params: { path: { assignment_id: assignmentId }, query: { limit, offset } },
      }),
    ),
  /** `undefined` (HTTP 204) when nothing is left to annotate. */
  nextKey: (assignmentId?: number): Promise<NextKey | undefined> =>
    call(client.GET('/api/next-key/', { params: { query: { assignment: assignmentId } } })),
  /** With the assignment the key was opened from: the answer names the user's own. */
  key: (keyId: number, assignmentId?: number) =>
    call(
      client.GET('/api/keys/{key_id}/', {
        params: { path: { key_id: keyId }, query: { assignment: assignmentId } },
      }),
    ),
  annotation: (keyId: number) =>
    call(client.GET('/api/keys/{key_id}/annotation/', { params: { path: { key_id: keyId } } })),
  saveNote: (keyId: number, note: string, version: number, activeSeconds?: number) =>
    call(
      client.PUT('/api/keys/{key_id}/annotation/', {
        params: { path: { key_id: keyId } },
        body: { note, version, active_seconds: activeSeconds },
      }),
    ),
  /** The key's suggestions with the caller's own decisions (docs/evidence.md). */
  suggestions: (keyId: number) =>
    call(client.GET('/api/keys/{key_id}/suggestions/', { params: { path: { key_id: keyId } } })),
  /** Make a suggestion the caller's pattern; answers the annotation state. */
  acceptSuggestion: (keyId: number, suggestionId: number, body: SuggestionAcceptRequest) =>
    call(
      client.POST('/api/keys/{key_id}/suggestions/{suggestion_id}/accept/', {
        params: { path: { key_id: keyId, suggestion_id: suggestionId } },
        body,
      }),
    ),
  dismissSuggestion: (keyId: number, suggestionId: number) =>
    call(
      client.POST('/api/keys/{key_id}/suggestions/{suggestion_id}/dismiss/', {
        params: { path: { key_id: keyId, suggestion_id: suggestionId } },
      }),
    ),
  createPattern: (keyId: number, body: PatternCreateRequest) =>
    call(
      client.POST('/api/keys/{key_id}/patterns/', { params: { path: { key_id: keyId } }, body }),
    ),
  updatePattern: (keyId: number, patternId: number, body: PatchedPatternUpdateRequest) =>
    call(
      client.PATCH('/api/keys/{key_id}/patterns/{pattern_id}/', {
        params: { path: { key_id: keyId, pattern_id: patternId } },
        body,
      }),
    ),
  deletePattern: (keyId: number, patternId: number, version: number) =>
    call(
      client.DELETE('/api/keys/{key_id}/patterns/{pattern_id}/', {
        params: { path: { key_id: keyId, pattern_id: patternId }, query: { version } },
      }),
    ),
  submit: (keyId: number, version: number, activeSeconds?: number) =>
    call(
      client.POST('/api/keys/{key_id}/submit/', {
        params: { path: { key_id: keyId } },
        body: { version, active_seconds: activeSeconds },
      }),
    ),
  /** Set (or replace) the user's own flag on a key. */
  flagKey: (keyId: number, body: KeyFlagRequest) =>
    call(client.PUT('/api/keys/{key_id}/flag/', { params: { path: { key_id: keyId } }, body })),
  unflagKey: (keyId: number) =>
    call(client.DELETE('/api/keys/{key_id}/flag/', { params: { path: { key_id: keyId } } })),
  reopen: (keyId: number, version: number) =>
    call(
      client.POST('/api/keys/{key_id}/reopen/', {
        params: { path: { key_id: keyId } },
        body: { version },
      }),
    ),
  /** The study's guidelines as they are now, and whether the user acknowledged them. */
  guidelines: (studyId: number) =>
    call(
      client.GET('/api/studies/{study_id}/guidelines/', {
        params: { path: { study_id: studyId } },
      }),
    ),
  /** Record that the user read `version` (409 `guidelines_changed` if not the latest). */
  acknowledgeGuidelines: (studyId: number, version: number) =>
    call(
      client.POST('/api/studies/{study_id}/guidelines/acknowledge/', {
        params: { path: { study_id: studyId } },
        body: { version },
      }),
    ),
  admin: {
    /** Every version of a study's guidelines, newest first. */
    guidelines: (studyId: number) =>
      call(
        client.GET('/api/admin/studies/{study_id}/guidelines/', {
          params: { path: { study_id: studyId } },
        }),
      ),
    publishGuidelines: (studyId: number, text: string) =>
      call(
        client.POST('/api/admin/studies/{study_id}/guidelines/', {
          params: { path: { study_id: studyId } },
          body: { text },
        }),
      ),
    studies: () => call(client.GET('/api/admin/studies/')),
    study: (studyId: number) =>
      call(
        client.GET('/api/admin/studies/{study_id}/', { params: { path: { study_id: studyId } } }),
      ),
    updateStudy: (studyId: number, body: StudyUpdateRequest) =>
      call(
        client.PATCH('/api/admin/studies/{study_id}/', {
          params: { path: { study_id: studyId } },
          body,
        }),
      ),
    batches: (studyId: number) =>
      call(
        client.GET('/api/admin/studies/{study_id}/batches/', {
          params: { path: { study_id: studyId } },
        }),
      ),
    createBatch: (studyId: number, body: BatchCreateRequest) =>
      call(
        client.POST('/api/admin/studies/{study_id}/batches/', {
          params: { path: { study_id: studyId } },
          body,
        }),
      ),
    assign: (batchId: number, body: AssignmentCreateRequest) =>
      call(
        client.POST('/api/admin/batches/{batch_id}/assignments/', {
          params: { path: { batch_id: batchId } },
          body,
        }),
      ),
    /** Add annotators to an assigned batch and/or raise its overlap. */
    extendAssignment: (batchId: number, body: AssignmentExtendRequest) =>
      call(
        client.POST('/api/admin/batches/{batch_id}/assignments/extend/', {
          params: { path: { batch_id: batchId } },
          body,
        }),
      ),
    /** One page of a batch's keys with each annotator's status (`limit` at most 500). */
    batchKeys: (batchId: number, offset = 0, limit = 50) =>
      call(
        client.GET('/api/admin/batches/{batch_id}/keys/', {
          params: { path: { batch_id: batchId }, query: { limit, offset } },
        }),
      ),
    batchProgress: (batchId: number) =>
      call(
        client.GET('/api/admin/batches/{batch_id}/progress/', {
          params: { path: { batch_id: batchId } },
        }),
      ),
    annotators: () => call(client.GET('/api/admin/annotators/')),
    /** A new annotator without a password, with the one-time link that invites them. */
    createAnnotator: (username: string) =>
      call(client.POST('/api/admin/annotators/', { body: { username } })),
    /** A new one-time link; the annotator's current password stops working. */
    passwordLink: (userId: number) =>
      call(
        client.POST('/api/admin/annotators/{user_id}/password-link/', {
          params: { path: { user_id: userId } },
        }),
      ),
    /** `transferDrafts`: the replacement sees and continues the drafts (off: starts blank). */
    deactivate: (userId: number, reassignTo: number | string | null, transferDrafts: boolean) =>
      call(
        client.POST('/api/admin/annotators/{user_id}/deactivate/', {
          params: { path: { user_id: userId } },
          body: { reassign_to: reassignTo, transfer_drafts: transferDrafts },
        }),
      ),
    miningRuns: () => call(client.GET('/api/admin/mining-runs/')),
    miningRun: (runId: number) =>
      call(client.GET('/api/admin/mining-runs/{run_id}/', { params: { path: { run_id: runId } } })),
    createMiningRun: (body: MiningRunCreateRequest) =>
      call(client.POST('/api/admin/mining-runs/', { body })),
    cancelMiningRun: (runId: number) =>
      call(
        client.POST('/api/admin/mining-runs/{run_id}/cancel/', {
          params: { path: { run_id: runId } },
        }),
      ),
    report: (studyId: number, query: ReportQuery) =>
      call(
        client.GET('/api/admin/studies/{study_id}/report/', {
          params: { path: { study_id: studyId }, query: reportParams(query) },
          querySerializer: REPORT_QUERY,
        }),
      ),
    /** Per annotator: work, speed, agreement with the others and with gold, checks. */
    annotatorTable: (studyId: number) =>
      call(
        client.GET('/api/admin/studies/{study_id}/annotators/', {
          params: { path: { study_id: studyId } },
        }),
      ),
    createExport: (studyId: number, format: ExportFormat) =>
      call(
        client.POST('/api/admin/studies/{study_id}/exports/', {
          params: { path: { study_id: studyId } },
          body: { format },
        }),
      ),
    /** The study's latest §5 composition job, and the slice sizes a new one may take. */
    compositionStatus: (studyId: number) =>
      call(
        client.GET('/api/admin/studies/{study_id}/composition/', {
          params: { path: { study_id: studyId } },
        }),
      ),
    /**
     * Queue a composition job over a slice of `prefixes` (a 400 `composition_refused` when
     * the corpus is too small or a job is already queued or running). The seed is the
     * server's default, sent because the schema types it as required.
     */
    createComposition: (studyId: number, prefixes: number, seed = 0) =>
      call(
        client.POST('/api/admin/studies/{study_id}/composition/', {
          params: { path: { study_id: studyId } },
          body: { prefixes, seed },
        }),
      ),
    /** A study's causal probes (docs/causal.md), newest first, without their results. */
    causalJobs: (studyId: number) =>
      call(
        client.GET('/api/admin/studies/{study_id}/causal/', {
          params: { path: { study_id: studyId } },
        }),
      ),
    /**
     * Queue a causal probe (202 and the job). A 400 is a validation error (`fields`) or
     * `causal_refused` with the reason (an empty key group, a study not mined here).
     */
    createCausalJob: (studyId: number, probe: CausalProbe) =>
      call(
        client.POST('/api/admin/studies/{study_id}/causal/', {
          params: { path: { study_id: studyId } },
          // Only the probe's own fields: the schema marks every field with a default as
          // required, but the server fills in (and ignores) those the probe does not read.
          body: probe as CausalJobCreate,
        }),
      ),
    /** One causal probe with its `result` ({} until it is done). */
    causalJob: (jobId: number) =>
      call(client.GET('/api/admin/causal/{job_id}/', { params: { path: { job_id: jobId } } })),
    exportJob: (jobId: number) =>
      call(client.GET('/api/admin/exports/{job_id}/', { params: { path: { job_id: jobId } } })),
    /**
     * A 400 carries `ImportErrors` (`{detail, code, errors[]}`) in the ApiError's body.
     * Without `live` the new study is archived (read-only, unseen by annotators);
     * `assign` (with `live`) gives each annotator back the keys they annotated.
     * A multipart upload, so it goes through `request` rather than the typed client.
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
  /** The curator's review and gold (docs/annotation.md, "Review and gold"). Every write answers the gold. */
  review: {
    studies: () => call(client.GET('/api/review/studies/')),
    queue: (studyId: number, query: ReviewQueueQuery = {}) =>
      call(
        client.GET('/api/review/studies/{study_id}/queue/', {
          params: { path: { study_id: studyId }, query: reviewQueueParams(query) },
        }),
      ),
    key: (keyId: number) =>
      call(client.GET('/api/review/keys/{key_id}/', { params: { path: { key_id: keyId } } })),
    updateGold: (keyId: number, body: GoldUpdate) =>
      call(
        client.PATCH('/api/review/keys/{key_id}/gold/', {
          params: { path: { key_id: keyId } },
          body,
        }),
      ),
    createPattern: (keyId: number, body: GoldPatternCreate) =>
      call(
        client.POST('/api/review/keys/{key_id}/gold/patterns/', {
          params: { path: { key_id: keyId } },
          body,
        }),
      ),
    updatePattern: (keyId: number, patternId: number, body: GoldPatternUpdate) =>
      call(
        client.PATCH('/api/review/keys/{key_id}/gold/patterns/{pattern_id}/', {
          params: { path: { key_id: keyId, pattern_id: patternId } },
          body,
        }),
      ),
    deletePattern: (keyId: number, patternId: number, version: number) =>
      call(
        client.DELETE('/api/review/keys/{key_id}/gold/patterns/{pattern_id}/', {
          params: { path: { key_id: keyId, pattern_id: patternId }, query: { version } },
        }),
      ),
    submit: (keyId: number, version: number) =>
      call(
        client.POST('/api/review/keys/{key_id}/gold/submit/', {
          params: { path: { key_id: keyId } },
          body: { version },
        }),
      ),
    reopen: (keyId: number, version: number) =>
      call(
        client.POST('/api/review/keys/{key_id}/gold/reopen/', {
          params: { path: { key_id: keyId } },
          body: { version },
        }),
      ),
  },
};
