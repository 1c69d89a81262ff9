// Names for the API's shapes. They come from the OpenAPI schema (drf-spectacular →
// openapi.yaml → `npm run gen:api` → schema.d.ts); never write them by hand.
import type { components } from './schema';

type Schemas = components['schemas'];

export type User = Schemas['User'];
export type Assignment = Schemas['Assignment'];
export type LoginRequest = Schemas['LoginRequest'];
export type ErrorBody = Schemas['Error'];
export type AssignmentKey = Schemas['AssignmentKey'];
export type NextKey = Schemas['NextKey'];
export type KeyDetail = Schemas['KeyDetail'];
export type TriggerPrefix = Schemas['TriggerPrefix'];
export type AnnotationState = Schemas['AnnotationState'];
export type Pattern = Schemas['Pattern'];
export type PatternKind = Schemas['KindEnum'];
export type PrefixLabelValue = Schemas['LabelEnum'];
export type PatternCreateRequest = Schemas['PatternCreateRequest'];
export type PatchedPatternUpdateRequest = Schemas['PatchedPatternUpdateRequest'];
export type Conflict = Schemas['Conflict'];
export type ValueToken = Schemas['ValueToken'];
export type StudySummary = Schemas['StudySummary'];
export type StudyDetail = Schemas['StudyDetail'];
export type Batch = Schemas['Batch'];
export type BatchCreateRequest = Schemas['BatchCreateRequest'];
export type AssignmentCreateRequest = Schemas['AssignmentCreateRequest'];
export type BatchProgress = Schemas['BatchProgress'];
export type ProgressCounts = Schemas['ProgressCounts'];
export type AdminAnnotator = Schemas['AdminAnnotator'];
export type MiningRun = Schemas['MiningRun'];
export type MiningRunStatus = Schemas['MiningRunStatusEnum'];
export type MiningRunCreateRequest = Schemas['MiningRunCreateRequest'];
export type StudyReport = Schemas['StudyReport'];
export type ReportFigure2Row = Schemas['ReportFigure2Row'];
export type ReportFigure2Block = Schemas['ReportFigure2Block'];
export type ReportLabelValues = Schemas['ReportLabelValues'];
export type ReportEstimate = Schemas['ReportEstimate'];
export type ReportAgreementBlock = Schemas['ReportAgreementBlock'];
export type ReportAgreementRow = Schemas['ReportAgreementRow'];
export type ReportCoverageRow = Schemas['ReportCoverageRow'];
export type ReportJaccardRow = Schemas['ReportJaccardRow'];
export type ReportValueAgreementRow = Schemas['ReportValueAgreementRow'];
export type ReportPerturbationRow = Schemas['ReportPerturbationRow'];
export type ExportJob = Schemas['ExportJob'];
export type ExportFormat = Schemas['FormatEnum'];
export type ExportJobStatus = Schemas['ExportJobStatusEnum'];
export type ImportErrors = Schemas['ImportErrors'];
export type StudyImported = Schemas['StudyImported'];
