from django.urls import path

from . import apis

urlpatterns = [
    path(
        "admin/studies/<int:study_id>/report/",
        apis.ReportApi.as_view(),
        name="admin-study-report",
    ),
    path(
        "admin/studies/<int:study_id>/report.csv",
        apis.ReportCsvApi.as_view(),
        name="admin-study-report-csv",
    ),
    path(
        "admin/studies/<int:study_id>/annotators/",
        apis.AnnotatorTableApi.as_view(),
        name="admin-study-annotators",
    ),
    path(
        "admin/studies/<int:study_id>/annotators.csv",
        apis.AnnotatorCsvApi.as_view(),
        name="admin-study-annotators-csv",
    ),
    path("studies/<int:study_id>/export", apis.StudyExportApi.as_view(), name="study-export"),
    path(
        "admin/studies/<int:study_id>/exports/",
        apis.ExportJobCreateApi.as_view(),
        name="admin-export-create",
    ),
    path("admin/exports/<int:job_id>/", apis.ExportJobDetailApi.as_view(), name="admin-export"),
    path(
        "admin/exports/<int:job_id>/download",
        apis.ExportJobDownloadApi.as_view(),
        name="admin-export-download",
    ),
    path("admin/imports/", apis.ImportApi.as_view(), name="admin-import"),
]
