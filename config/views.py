"""The roof's own views: the single-page app, JSON 404s under /api/, a health check, the
throttled Django admin sign-in, and who may read the API's schema."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.core.exceptions import RequestDataTooBig, ValidationError
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie
from rest_framework.permissions import BasePermission

from annotate.api_errors import ErrorCode, data_too_large, error_body
from annotate.apis import user_payload
from annotate.apis.auth import known_device_remember, login_throttle_wait

FRONTEND_NOT_BUILT = (
    "The frontend is not built: run `make demo` (or `cd frontend && npm ci && npm run build`)."
)
API_NOT_FOUND = "Not found."
BAD_REQUEST = "Bad request."
SERVER_ERROR = "Internal server error."
ADMIN_LOGIN_THROTTLED = "Too many sign-in attempts. Try again in {seconds} seconds."
VITE_ENTRY = "src/main.tsx"


def _read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


_cached_manifest = cache(_read_manifest)


def vite_entry() -> dict[str, Any] | None:
    """The built entry chunk from Vite's manifest: ``{"file": ..., "css": [...]}``."""
    path = settings.FRONTEND_DIST / ".vite" / "manifest.json"
    manifest = _read_manifest(path) if settings.DEBUG else _cached_manifest(path)
    return None if manifest is None else manifest.get(VITE_ENTRY)


@ensure_csrf_cookie
def spa(request: HttpRequest, **_: Any) -> HttpResponse:
    entry = vite_entry()
    if entry is None:
        return HttpResponse(FRONTEND_NOT_BUILT, status=503, content_type="text/plain")
    user = user_payload(request.user) if request.user.is_authenticated else None
    return render(
        request,
        "frontend/index.html",
        {"entry": entry, "bootstrap": {"user": user}},
    )


def api_not_found(request: HttpRequest, **_: Any) -> JsonResponse:
    return JsonResponse(error_body(API_NOT_FOUND, ErrorCode.NOT_FOUND), status=404)


def health(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return JsonResponse({"status": "error", "database": "unavailable"}, status=503)
    return JsonResponse({"status": "ok"})


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    message = f"CSRF verification failed: {reason or 'missing or wrong token'}."
    if request.path.startswith("/api/"):
        return JsonResponse(error_body(message, ErrorCode.CSRF_FAILED), status=403)
    return HttpResponse(message, status=403, content_type="text/plain")


def server_error(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse(error_body(SERVER_ERROR, ErrorCode.SERVER_ERROR), status=500)
    return HttpResponse(SERVER_ERROR, status=500, content_type="text/plain")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: what Django answers for a request it refuses before a view (a body
    past DATA_UPLOAD_MAX_MEMORY_SIZE, too many form fields). JSON under /api/ and for an
    oversized body anywhere, never Django's HTML page."""
    if isinstance(exception, RequestDataTooBig):
        detail = data_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        return JsonResponse(error_body(detail, ErrorCode.DATA_TOO_LARGE), status=413)
    if request.path.startswith("/api/"):
        return JsonResponse(error_body(BAD_REQUEST, ErrorCode.BAD_REQUEST), status=400)
    return HttpResponse(BAD_REQUEST, status=400, content_type="text/plain")


def _refused_admin_login_form(message: str) -> type:
    from django.contrib.admin.forms import AdminAuthenticationForm  # needs the apps loaded

    class RefusedLoginForm(AdminAuthenticationForm):
        """The admin's form, refused before any password is checked."""

        def clean(self) -> dict[str, Any]:
            raise ValidationError(message, code="throttled")

    return RefusedLoginForm


@never_cache
def admin_login(request: HttpRequest) -> HttpResponse:
    """The Django admin's sign-in, counted in the API login's throttles (per address and
    per username): without this, the admin form let anyone guess passwords freely. A
    sign-in makes the browser a known device of the account, as the API's does.

    A refused attempt shows the form again with the reason, as a 429, without checking
    the password: the right one is refused too until the count has run out.
    """
    if request.method == "POST":
        seconds = login_throttle_wait(request)
        if seconds is not None:
            return _admin_login_refused(request, seconds)
    response = admin.site.login(request)
    if request.method == "POST" and response.status_code == 302 and request.user.is_authenticated:
        known_device_remember(request, response, request.user)  # signed in just now
    return response


def _admin_login_refused(request: HttpRequest, seconds: int) -> HttpResponse:
    form = _refused_admin_login_form(ADMIN_LOGIN_THROTTLED.format(seconds=seconds))(
        request, data=request.POST
    )
    next_url = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME)
    if not next_url or not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = reverse("admin:index")
    context = {
        **admin.site.each_context(request),
        "title": _("Log in"),
        "subtitle": None,
        "app_path": request.get_full_path(),
        "username": request.user.get_username(),
        "form": form,
        REDIRECT_FIELD_NAME: next_url,
    }
    response = TemplateResponse(request, "admin/login.html", context, status=429)
    response["Retry-After"] = str(seconds)
    return response


class StaffInProduction(BasePermission):
    """The OpenAPI schema and its docs map every endpoint: open in development, staff
    only in production."""

    def has_permission(self, request: Any, view: Any) -> bool:
        if not settings.PRODUCTION:
            return True
        return bool(request.user and request.user.is_staff)
