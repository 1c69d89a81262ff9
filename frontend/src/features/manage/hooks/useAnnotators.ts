import { useQuery } from '@tanstack/react-query';

import { api } from '../../../api/client';
import { manageKeys } from '../api/queryKeys';

/** Every annotator, for the assign and extend forms (one cache entry for both). */
export function useAnnotators() {
  return useQuery({ queryKey: manageKeys.annotators(), queryFn: () => api.admin.annotators() });
}
