"""The roof's middleware: a request id for the logs, the Content-Security-Policy on every
response, and a cap on the size of request bodies."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.signals import request_finished
from django.http import HttpRequest, HttpResponse, JsonResponse

from annotate.api_errors import ErrorCode, body_too_large, error_body

from .logging import request_id

Handler = Callable[[HttpRequest], HttpResponse]

REQUEST_ID_HEADER = "X-Request-ID"
# What a load balancer or a client may send as an id: uuids, hex, dotted or dashed tokens.
# Anything else (spaces, quotes, control characters, very long) is replaced, so that a
# client cannot write into the logs through it.
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


class RequestIdMiddleware:
    """Takes the request's ``X-Request-ID`` when it is sane, or makes one, and sends it
    back on the response. Log lines written meanwhile carry it (config/logging.py).

    The id stays set until the response is closed (``request_finished``), not only while
    the middleware runs: Django logs a 4xx or 5xx answer ("Not Found: /x") after the
    middleware chain has returned.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        sent = request.headers.get(REQUEST_ID_HEADER, "")
        rid = sent if _SANE_REQUEST_ID.fullmatch(sent) else uuid.uuid4().hex
        request_id.set(rid)
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = rid
        return response


def _forget_request_id(**_: Any) -> None:
    request_id.set(None)


request_finished.connect(_forget_request_id, dispatch_uid="ffkv-forget-request-id")


class ContentSecurityPolicyMiddleware:
    """Sends ``settings.CONTENT_SECURITY_POLICY`` on every response: the API, the SPA,
    static files, the admin, error pages. It sits outside every other middleware, so
    that answers those give on their own (whitenoise's files, a CSRF refusal, a 500)
    carry it too. A view that sets its own policy keeps it."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response
        self.policy: str = settings.CONTENT_SECURITY_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = self.policy
        return response


class BodySizeLimitMiddleware:
    """Refuses a body longer than ``FFKV_MAX_UPLOAD_BYTES`` with a JSON 413, before
    anything reads it.

    Django caps form and JSON data (DATA_UPLOAD_MAX_MEMORY_SIZE, answered in
    annotate/api_errors.py and config.views.bad_request) but not uploaded files, which
    it streams to disk whatever their size. The declared length is the bound: Django
    reads no more than ``Content-Length`` bytes of a body, and none without it.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit: int = settings.FFKV_MAX_UPLOAD_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            return JsonResponse(
                error_body(body_too_large(limit), ErrorCode.BODY_TOO_LARGE), status=413
            )
        return self.get_response(request)
