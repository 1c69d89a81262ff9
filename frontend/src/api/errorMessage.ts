import type { ParseKeys, TFunction } from 'i18next';

import { isApiError, type ApiError } from './client';
import type { ErrorCode } from './types';

/**
 * How each of the API's error codes reads in the user's language (the server's `detail`
 * is English). Typed by the schema's enum, so a code the server adds fails the typecheck
 * until it has a line here. `{{detail}}` brings in the server's message where it names
 * something only the server knows (a path, a line of a file).
 */
export const ERROR_CODE_KEYS: Record<ErrorCode, ParseKeys> = {
  invalid: 'errors.codes.invalid',
  parse_error: 'errors.codes.parse_error',
  nested_too_deeply: 'errors.codes.parse_error',
  bad_request: 'errors.codes.bad_request',
  not_authenticated: 'errors.codes.not_authenticated',
  authentication_failed: 'errors.codes.not_authenticated',
  permission_denied: 'errors.codes.permission_denied',
  csrf_failed: 'errors.codes.csrf_failed',
  not_found: 'errors.codes.not_found',
  method_not_allowed: 'errors.codes.bad_request',
  not_acceptable: 'errors.codes.bad_request',
  unsupported_media_type: 'errors.codes.bad_request',
  throttled: 'errors.codes.throttled',
  body_too_large: 'errors.codes.too_large',
  data_too_large: 'errors.codes.too_large',
  server_error: 'errors.codes.server_error',
  database_unavailable: 'errors.codes.unavailable',
  queue_unavailable: 'errors.codes.unavailable',
  invalid_credentials: 'errors.codes.invalid_credentials',
  password_link_invalid: 'errors.codes.password_link_invalid',
  stale_version: 'errors.codes.stale_version',
  annotation_submitted: 'errors.codes.annotation_submitted',
  gold_submitted: 'errors.codes.gold_submitted',
  rule_violation: 'errors.codes.rule_violation',
  note_too_long: 'errors.codes.note_too_long',
  pattern_needs_three_prefixes: 'errors.codes.pattern_needs_three_prefixes',
  pattern_prefix_of_another_key: 'errors.codes.pattern_prefix_of_another_key',
  pattern_duplicate_prefixes: 'errors.codes.pattern_duplicate_prefixes',
  pattern_needs_description: 'errors.codes.pattern_needs_description',
  pattern_description_too_long: 'errors.codes.pattern_description_too_long',
  pattern_kind_unknown: 'errors.codes.pattern_kind_unknown',
  too_many_patterns: 'errors.codes.too_many_patterns',
  mining_refused: 'errors.codes.mining_refused',
  composition_refused: 'errors.codes.composition_refused',
  causal_refused: 'errors.codes.causal_refused',
  export_unavailable: 'errors.codes.export_unavailable',
  import_refused: 'errors.codes.import_refused',
  study_name_taken: 'errors.codes.study_name_taken',
  not_jsonl: 'errors.codes.not_jsonl',
  assign_needs_live: 'errors.codes.assign_needs_live',
  guidelines_changed: 'errors.codes.guidelines_changed',
  guidelines_not_acknowledged: 'errors.codes.guidelines_not_acknowledged',
  username_invalid: 'errors.codes.username_invalid',
  username_taken: 'errors.codes.username_taken',
  username_mixed_scripts: 'errors.codes.username_mixed_scripts',
  username_confusable: 'errors.codes.username_confusable',
};

/** DRF's codes for a field's error whose message says nothing the code does not. */
export const FIELD_CODE_KEYS: Record<string, ParseKeys> = {
  required: 'errors.fields.required',
  blank: 'errors.fields.required',
  null: 'errors.fields.required',
  empty: 'errors.fields.required',
  max_length: 'errors.fields.max_length',
  min_length: 'errors.fields.min_length',
  max_value: 'errors.fields.max_value',
  min_value: 'errors.fields.min_value',
  invalid_choice: 'errors.fields.invalid_choice',
  not_a_list: 'errors.fields.not_a_list',
  null_characters_not_allowed: 'errors.fields.bad_characters',
  surrogate_characters_not_allowed: 'errors.fields.bad_characters',
};

interface FieldError {
  field: string;
  message: string;
  code: string;
}

function isFieldError(value: unknown): value is { message: string; code: string } {
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  return typeof record.message === 'string' && typeof record.code === 'string';
}

/** The first error of a validation error's `fields`, with the dotted path of its field. */
export function firstFieldError(fields: unknown, path: string[] = []): FieldError | null {
  if (isFieldError(fields)) {
    const named = path.filter((part) => part !== 'non_field_errors');
    return { field: named.join('.'), message: fields.message, code: fields.code };
  }
  if (Array.isArray(fields)) {
    for (const each of fields) {
      const found = firstFieldError(each, path);
      if (found) return found;
    }
  } else if (fields !== null && typeof fields === 'object') {
    for (const [name, value] of Object.entries(fields)) {
      const found = firstFieldError(value, [...path, name]);
      if (found) return found;
    }
  }
  return null;
}

function invalidMessage(error: ApiError, t: TFunction): string {
  const fields = (error.body as { fields?: unknown } | undefined)?.fields;
  const first = firstFieldError(fields);
  if (!first) return error.detail || t('errors.codes.bad_request');
  const key = FIELD_CODE_KEYS[first.code];
  // A message of the server's own making ("invalid", a rule's words) is all there is.
  const message = key ? t(key) : first.message;
  if (!first.field) return message;
  return t('errors.codes.invalid', { field: first.field, message });
}

function codeMessage(error: ApiError, t: TFunction): string | null {
  if (!Object.hasOwn(ERROR_CODE_KEYS, error.code)) return null;
  const code = error.code as ErrorCode;
  if (code === 'invalid') return invalidMessage(error, t);
  const wait = (error.body as { wait?: unknown } | undefined)?.wait;
  if (code === 'throttled' && typeof wait !== 'number') return t('errors.codes.throttledLater');
  return t(ERROR_CODE_KEYS[code], { detail: error.detail, wait });
}

/**
 * The line to show a person for a failed call, in their language: the translation of the
 * API's `code`; for a code this build does not know, the API's own `detail`; else a
 * translated generic message. Never a stack trace or a raw body.
 */
export function errorMessage(error: unknown, t: TFunction): string {
  if (isApiError(error)) {
    const translated = codeMessage(error, t);
    if (translated) return translated;
    if (error.detail) return error.detail;
    if (error.status === 0) return t('errors.network');
    return t('errors.server', { status: error.status });
  }
  return t('errors.network');
}
