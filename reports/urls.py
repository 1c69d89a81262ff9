from django.urls import path

from .apis import annotators, exports, imports, report

urlpatterns = [
    path(
        "admin/studies/<int:study_id>/report/",
        report.ReportApi.as_view(),
        name="admin-study-report",
    ),
    path(
        "admin/studies/<int:study_id>/report.csv",
        report.ReportCsvApi.as_view(),
        name="admin-study-report-csv",
    ),
    path(
        "admin/studies/<int:study_id>/annotators/",
        annotators.AnnotatorTableApi.as_view(),
        name="admin-study-annotators",
    ),
    path(
        "admin/studies/<int:study_id>/annotators.csv",
        annotators.AnnotatorCsvApi.as_view(),
        name="admin-study-annotators-csv",
    ),
    path("studies/<int:study_id>/export", exports.StudyExportApi.as_view(), name="study-export"),
    path(
        "admin/studies/<int:study_id>/exports/",
        exports.ExportJobCreateApi.as_view(),
        name="admin-export-create",
    ),
    path("admin/exports/<int:job_id>/", exports.ExportJobDetailApi.as_view(), name="admin-export"),
    path(
        "admin/exports/<int:job_id>/download",
        exports.ExportJobDownloadApi.as_view(),
        name="admin-export-download",
    ),
    path("admin/imports/", imports.ImportApi.as_view(), name="admin-import"),
]
