import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { api, isApiError } from '../../../api/client';
import type { KeyStudy, StudyGuidelines } from '../../../api/types';
import { workspaceKeys } from '../api/queryKeys';

/**
 * Where the annotator stands with the guidelines of the key's study.
 *
 * - `none`: the study has none, or the annotator acknowledged the latest version;
 * - `first`: they acknowledged no version: the workspace shows the guidelines instead
 *   of the key (the server refuses their writes until then);
 * - `changed`: a newer version than the one they acknowledged: the workspace asks them
 *   to read it. Their queued writes still go (the server does not block them).
 */
export type GuidelinesGateState = 'none' | 'first' | 'changed';

export function useGuidelines(study: KeyStudy | null) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const studyId = study?.id ?? 0;
  const latest = study?.guideline_version ?? null;
  const queryKey = workspaceKeys.guidelines(studyId, latest);
  const needsReading = !!study && latest !== null && !study.guidelines_acknowledged;
  const query = useQuery({
    queryKey,
    queryFn: () => api.guidelines(studyId),
    enabled: !!study && latest !== null && (needsReading || open),
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: (failures, error) => failures < 3 && isApiError(error) && error.status >= 500,
  });
  const data: StudyGuidelines | undefined = query.data;

  const acknowledge = useMutation({
    mutationFn: (version: number) => api.acknowledgeGuidelines(studyId, version),
    onSuccess: (answer) => client.setQueryData(queryKey, answer),
    onError: (error) => {
      // A version published meanwhile: show it, to be read and acknowledged in turn.
      if (isApiError(error) && error.code === 'guidelines_changed') {
        const current = (error.body as { current?: StudyGuidelines } | undefined)?.current;
        if (current) client.setQueryData(queryKey, current);
      }
    },
  });

  let gate: GuidelinesGateState = 'none';
  if (needsReading && !data?.acknowledged) {
    gate = (data?.acknowledged_version ?? null) !== null ? 'changed' : 'first';
  }

  return {
    gate,
    /** The guidelines as read (undefined while loading, or when not needed yet). */
    data,
    loading: query.isPending && query.fetchStatus !== 'idle',
    error: query.error,
    hasGuidelines: latest !== null,
    acknowledge: () => {
      if (data?.version != null) acknowledge.mutate(data.version);
    },
    acknowledging: acknowledge.isPending,
    acknowledgeError: acknowledge.error,
    dialogOpen: open,
    openDialog: () => setOpen(true),
    closeDialog: () => setOpen(false),
  };
}

export type Guidelines = ReturnType<typeof useGuidelines>;
