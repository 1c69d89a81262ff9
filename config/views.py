"""The roof's own views: the single-page app, JSON 404s under /api/, a health check."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from annotate.apis import user_payload

FRONTEND_NOT_BUILT = (
    "The frontend is not built: run `make demo` (or `cd frontend && npm ci && npm run build`)."
)
API_NOT_FOUND = "Not found."
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
    return JsonResponse({"detail": API_NOT_FOUND}, status=404)


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
        return JsonResponse({"detail": message}, status=403)
    return HttpResponse(message, status=403, content_type="text/plain")


def server_error(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Internal server error."}, status=500)
    return HttpResponse("Internal server error.", status=500, content_type="text/plain")
