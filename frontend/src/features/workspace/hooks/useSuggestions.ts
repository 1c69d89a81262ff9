import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useState } from 'react';

import { api, isApiError } from '../../../api/client';
import { errorMessage } from '../../../api/errorMessage';
import type { AnnotationState, Suggestion } from '../../../api/types';
import { newId } from '../../../lib/writeQueue/queueStorage';
import type { WriteQueue } from '../../../lib/writeQueue/writeQueue';
import { workspaceKeys } from '../api/queryKeys';

/**
 * The key's suggestions (only where the study offers them) and the user's accept and
 * dismiss. An accept is a pattern write: it waits for the key's queued writes, is sent
 * with the latest version the queue knows, and its answer (the annotation state, with
 * the new pattern) is handed to the queue and the page like a write's.
 */
export function useSuggestions({
  keyId,
  enabled,
  queue,
  fallbackVersion,
  onState,
}: {
  keyId: number;
  enabled: boolean;
  queue: WriteQueue;
  fallbackVersion: number;
  onState: (state: AnnotationState) => void;
}) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const queryKey = workspaceKeys.suggestions(keyId);
  const query = useQuery({
    queryKey,
    queryFn: () => api.suggestions(keyId),
    enabled,
    refetchOnWindowFocus: false,
  });

  const refresh = () => client.invalidateQueries({ queryKey });

  const accept = useMutation({
    mutationFn: async ({
      suggestion,
      description,
    }: {
      suggestion: Suggestion;
      description?: string;
    }) => {
      await queue.whenSettled(keyId);
      const version = queue.stateOf(keyId)?.version ?? fallbackVersion;
      return api.acceptSuggestion(keyId, suggestion.id, {
        version,
        client_id: newId(),
        ...(description ? { description } : {}),
      });
    },
    onSuccess: (state) => {
      setError(null);
      queue.observe(state);
      onState(state);
      void refresh();
    },
    onError: (failure) => {
      // A 409 carries the current state: the page takes it, and the user can try again.
      const current = isApiError(failure)
        ? (failure.body as { current?: AnnotationState } | undefined)?.current
        : undefined;
      if (current && typeof current.version === 'number') {
        queue.observe(current);
        onState(current);
      }
      setError(t('evidence.acceptFailed', { message: errorMessage(failure, t) }));
    },
  });

  const dismiss = useMutation({
    mutationFn: (suggestion: Suggestion) => api.dismissSuggestion(keyId, suggestion.id),
    onSuccess: (changed) => {
      setError(null);
      client.setQueryData(queryKey, (list: typeof query.data) =>
        list
          ? {
              ...list,
              suggestions: (list.suggestions ?? []).map((item) =>
                item.id === changed.id ? changed : item,
              ),
            }
          : list,
      );
    },
    onError: (failure) => setError(errorMessage(failure, t)),
  });

  const list = query.data;
  return {
    /** Whether the panel shows: the study offers suggestions and the server agrees. */
    shown: enabled && (list === undefined || list.enabled),
    suggestions: list?.enabled ? (list.suggestions ?? []) : [],
    loading: query.isPending,
    failed: query.isError,
    busy: accept.isPending || dismiss.isPending,
    error,
    accept: (suggestion: Suggestion, description?: string) =>
      accept.mutate({ suggestion, description }),
    dismiss: (suggestion: Suggestion) => dismiss.mutate(suggestion),
  };
}
