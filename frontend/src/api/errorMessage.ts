import type { TFunction } from 'i18next';

import { isApiError } from './client';

/**
 * The line to show a person for a failed call: the API's own `detail` when it sent
 * one, else a translated generic message. Never a stack trace or a raw body.
 */
export function errorMessage(error: unknown, t: TFunction): string {
  if (isApiError(error)) {
    if (error.detail) return error.detail;
    if (error.status === 0) return t('errors.network');
    return t('errors.server', { status: error.status });
  }
  return t('errors.network');
}
