from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import views

handler400 = "config.views.bad_request"
handler500 = "config.views.server_error"

urlpatterns = [
    # Before admin.site.urls: the admin's own login view has no throttle.
    path("admin/login/", views.admin_login, name="admin-login"),
    path("admin/", admin.site.urls),
    path("api/health/", views.health, name="health"),
    path(
        "api/schema/",
        SpectacularAPIView.as_view(permission_classes=[views.StaffInProduction]),
        name="schema",
    ),
    # The split view serves swagger-ui's start-up code as a script file (?script), not
    # inline: the Content-Security-Policy allows scripts from 'self' only.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="schema",
            template_name="api_docs.html",
            permission_classes=[views.StaffInProduction],
        ),
        name="api-docs",
    ),
    path("api/", include("annotate.urls")),
    path("api/", include("mining.urls")),
    path("api/", include("reports.urls")),
    # Unknown API paths answer JSON, before the single-page app's catch-all.
    re_path(r"^api/", views.api_not_found),
    re_path(r"^(?!static/|admin(?:/|$)).*$", views.spa, name="spa"),
]
