import type { ReportQuery } from '../../../api/client';

/** The report's query keys; under 'admin', as the admin screens' (features/manage/api). */
export const reportKeys = {
  /** Every report of a study, whatever its filters (to invalidate them all at once). */
  reports: (studyId: number) => ['admin', 'report', studyId] as const,
  report: (studyId: number, query: ReportQuery) => ['admin', 'report', studyId, query] as const,
  annotatorTable: (studyId: number) => ['admin', 'annotator-table', studyId] as const,
  exportJob: (jobId: number | null) => ['admin', 'export-job', jobId] as const,
  composition: (studyId: number) => ['admin', 'composition', studyId] as const,
};
