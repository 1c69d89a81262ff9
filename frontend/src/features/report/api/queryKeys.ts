import type { ReportQuery } from '../../../api/client';

/** The report's query keys; under 'admin', as the admin screens' (features/manage/api). */
export const reportKeys = {
  report: (studyId: number, query: ReportQuery) => ['admin', 'report', studyId, query] as const,
  annotatorTable: (studyId: number) => ['admin', 'annotator-table', studyId] as const,
  exportJob: (jobId: number | null) => ['admin', 'export-job', jobId] as const,
};
