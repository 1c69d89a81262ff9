// Reads go through TanStack Query: one cache per app, answers kept while the next
// page loads, and a retry only where one can help (no answer, or a 5xx).
import { QueryClient } from '@tanstack/react-query';

import { isApiError } from './client';

const MAX_RETRIES = 2;

export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (failureCount >= MAX_RETRIES) return false;
  return isApiError(error) && (error.status === 0 || error.status >= 500);
}

export function makeQueryClient(options: { retry?: boolean } = {}): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: options.retry === false ? false : shouldRetry,
        // The workspace's writes change what lists show; refetching on focus keeps
        // a tab that sat in the background honest.
        refetchOnWindowFocus: true,
        staleTime: 0,
      },
    },
  });
}
