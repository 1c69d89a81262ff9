from django.urls import path

from . import apis

urlpatterns = [
    path("preparing/", apis.PreparingListApi.as_view(), name="preparing-list"),
    path("admin/mining-runs/", apis.MiningRunListCreateApi.as_view(), name="mining-run-list"),
    path(
        "admin/mining-runs/<int:run_id>/",
        apis.MiningRunDetailApi.as_view(),
        name="mining-run-detail",
    ),
    path(
        "admin/mining-runs/<int:run_id>/cancel/",
        apis.MiningRunCancelApi.as_view(),
        name="mining-run-cancel",
    ),
    path(
        "admin/studies/<int:study_id>/composition/",
        apis.CompositionApi.as_view(),
        name="study-composition",
    ),
    path(
        "admin/studies/<int:study_id>/causal/",
        apis.CausalJobListCreateApi.as_view(),
        name="study-causal",
    ),
    path("admin/causal/<int:job_id>/", apis.CausalJobDetailApi.as_view(), name="causal-job"),
]
