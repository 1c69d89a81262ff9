from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import views

handler500 = "config.views.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/health/", views.health, name="health"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/", include("annotate.urls")),
    path("api/", include("mining.urls")),
    path("api/", include("reports.urls")),
    # Unknown API paths answer JSON, before the single-page app's catch-all.
    re_path(r"^api/", views.api_not_found),
    re_path(r"^(?!static/|admin(?:/|$)).*$", views.spa, name="spa"),
]
