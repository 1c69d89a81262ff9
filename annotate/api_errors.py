"""Every API error is JSON ``{"detail": ..., "code": ...}``: never an HTML page, never a
traceback.

``detail`` is English prose, for logs and for clients that know no better; ``code`` is a
stable snake_case name (one of ``ErrorCode``) that the SPA translates (STYLE: the UI
translates codes, never server prose). Some errors add to these:

- a validation error (``code`` "invalid") adds ``fields``: for each field, nested as the
  input is, a list of ``{"message", "code"}`` (DRF's own codes: "required",
  "max_length", "invalid_choice", ...); its ``detail`` is the first message, after the
  field's name;
- a throttled request adds ``wait``, the seconds to wait (also its ``Retry-After``);
- a write conflict (409) adds ``current``, the annotation as it is now;
- a refused import adds ``errors``, every line at fault.
"""

from __future__ import annotations

import logging
import math
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import Http404
from kombu.exceptions import OperationalError as KombuOperationalError
from rest_framework import exceptions, status
from rest_framework.exceptions import ErrorDetail
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

logger = logging.getLogger(__name__)


class ErrorCode(StrEnum):
    """Every ``code`` an error answer can carry. Stable: clients key translations on them.

    A new code is added here, to the SPA's table (frontend/src/api/errorMessage.ts) and to
    both translation catalogues; the schema lists them, so the fuzz test refuses an answer
    with a code missing here.
    """

    # Any request.
    INVALID = "invalid"  # a validation error: see ``fields``
    PARSE_ERROR = "parse_error"
    NESTED_TOO_DEEPLY = "nested_too_deeply"
    BAD_REQUEST = "bad_request"
    NOT_AUTHENTICATED = "not_authenticated"
    AUTHENTICATION_FAILED = "authentication_failed"
    PERMISSION_DENIED = "permission_denied"
    CSRF_FAILED = "csrf_failed"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NOT_ACCEPTABLE = "not_acceptable"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    THROTTLED = "throttled"
    BODY_TOO_LARGE = "body_too_large"
    DATA_TOO_LARGE = "data_too_large"
    SERVER_ERROR = "server_error"
    DATABASE_UNAVAILABLE = "database_unavailable"
    QUEUE_UNAVAILABLE = "queue_unavailable"
    # Sign-in.
    INVALID_CREDENTIALS = "invalid_credentials"
    PASSWORD_LINK_INVALID = "password_link_invalid"  # expired, used, or replaced
    # Annotations (409 with ``current``).
    STALE_VERSION = "stale_version"
    ANNOTATION_SUBMITTED = "annotation_submitted"
    GOLD_SUBMITTED = "gold_submitted"  # a curator's gold annotation (409 with ``current``)
    # Domain rules (400); RULE_VIOLATION for a rule without a code of its own.
    RULE_VIOLATION = "rule_violation"
    NOTE_TOO_LONG = "note_too_long"
    PATTERN_NEEDS_THREE_PREFIXES = "pattern_needs_three_prefixes"
    PATTERN_PREFIX_OF_ANOTHER_KEY = "pattern_prefix_of_another_key"
    PATTERN_DUPLICATE_PREFIXES = "pattern_duplicate_prefixes"
    PATTERN_NEEDS_DESCRIPTION = "pattern_needs_description"
    PATTERN_DESCRIPTION_TOO_LONG = "pattern_description_too_long"
    PATTERN_KIND_UNKNOWN = "pattern_kind_unknown"
    TOO_MANY_PATTERNS = "too_many_patterns"
    # Mining runs, exports, imports.
    MINING_REFUSED = "mining_refused"
    COMPOSITION_REFUSED = "composition_refused"
    CAUSAL_REFUSED = "causal_refused"
    EXPORT_UNAVAILABLE = "export_unavailable"
    IMPORT_REFUSED = "import_refused"
    # Import refusals that a form words in its own way.
    STUDY_NAME_TAKEN = "study_name_taken"  # send another study_name
    NOT_JSONL = "not_jsonl"  # the file is no JSONL export
    ASSIGN_NEEDS_LIVE = "assign_needs_live"
    # Accounts (the annotator screens; usernames in NFKC, one script, unconfusable).
    USERNAME_INVALID = "username_invalid"
    USERNAME_TAKEN = "username_taken"
    USERNAME_MIXED_SCRIPTS = "username_mixed_scripts"
    USERNAME_CONFUSABLE = "username_confusable"  # looks like an existing account's name
    # Guidelines.
    GUIDELINES_CHANGED = "guidelines_changed"  # 409 with ``current``: read the new version
    GUIDELINES_NOT_ACKNOWLEDGED = "guidelines_not_acknowledged"  # 403: read them first


def error_body(detail: str, code: ErrorCode, **extra: Any) -> dict[str, Any]:
    """The JSON of an error answer: ``{"detail", "code"}`` and any ``extra`` members."""
    return {"detail": detail, "code": str(code), **extra}


def error_response(detail: str, code: ErrorCode, status_code: int, **extra: Any) -> Response:
    """An error answer from a view that returns it rather than raising."""
    return Response(printable(error_body(detail, code, **extra)), status=status_code)


DATABASE_UNAVAILABLE = "The database is unavailable; please retry in a moment."
QUEUE_UNAVAILABLE = "The task queue is unavailable; please retry in a moment."
BODY_TOO_LARGE = "The request body is larger than the limit of {limit}."
DATA_TOO_LARGE = "The request's data outside uploaded files is larger than the limit of {limit}."


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"


def body_too_large(limit: int) -> str:
    return BODY_TOO_LARGE.format(limit=_megabytes(limit))


def data_too_large(limit: int) -> str:
    return DATA_TOO_LARGE.format(limit=_megabytes(limit))


def printable(data: Any) -> Any:
    """``data`` (an error answer) with every string encodable as UTF-8.

    A JSON body may carry a lone surrogate as an escape (``"\\ud800"``); an error that
    echoes the input back (a ChoiceField's ``"…" is not a valid choice.``) would then make
    the JSON renderer fail, and the answer a 500. Such a character is written as its
    escape instead.
    """
    if isinstance(data, str):
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            text = data.encode("utf-8", "backslashreplace").decode("utf-8")
            return ErrorDetail(text, code=data.code) if isinstance(data, ErrorDetail) else text
        return data
    if isinstance(data, dict):
        return {printable(key): printable(value) for key, value in data.items()}
    if isinstance(data, list):
        return [printable(value) for value in data]
    return data


def _first_message(details: Any, path: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str]:
    """The first message of ``get_full_details()`` output, with the path to its field."""
    if isinstance(details, dict) and "message" in details and "code" in details:
        return path, str(details["message"])
    if isinstance(details, dict):
        for key, value in details.items():
            found = _first_message(value, (*path, str(key)))
            if found[1]:
                return found
    if isinstance(details, list):
        for value in details:
            found = _first_message(value, path)
            if found[1]:
                return found
    return path, ""


def _validation_body(exc: exceptions.ValidationError) -> dict[str, Any]:
    fields = exc.get_full_details()
    if not isinstance(fields, dict):
        # serializers.ValidationError("...") raised outside any one field.
        fields = {"non_field_errors": fields}
    path, message = _first_message(fields)
    named = [part for part in path if part != "non_field_errors"]
    detail = f"{'.'.join(named)}: {message}" if named else message
    return error_body(detail, ErrorCode.INVALID, fields=fields)


def _api_exception_body(exc: exceptions.APIException) -> dict[str, Any]:
    if isinstance(exc, exceptions.ValidationError):
        return _validation_body(exc)
    detail = exc.detail
    text = str(detail)
    code = detail.code if isinstance(detail, ErrorDetail) else None
    if isinstance(exc, exceptions.PermissionDenied) and text.startswith("CSRF Failed"):
        # DRF's SessionAuthentication says so in prose only.
        code = ErrorCode.CSRF_FAILED
    try:
        known = ErrorCode(code or exc.default_code)
    except ValueError:
        # A code no client knows would not be translated: the status's own is better.
        known = ErrorCode.BAD_REQUEST if exc.status_code == 400 else ErrorCode.SERVER_ERROR
        logger.warning("error code %r is not an ErrorCode", code)
    if isinstance(exc, exceptions.Throttled):
        seconds = getattr(exc, "wait", None)  # set by Throttled.__init__, unknown to the stubs
        wait = None if seconds is None else max(1, math.ceil(seconds))
        return error_body(text, known, wait=wait)
    return error_body(text, known)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    # As DRF's own handler does, so that the body below is built from an APIException.
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = drf_exception_handler(exc, context)
    if response is not None:
        assert isinstance(exc, exceptions.APIException)
        response.data = printable(_api_exception_body(exc))
        return response
    if isinstance(exc, RequestDataTooBig):
        # Form or JSON data past DATA_UPLOAD_MAX_MEMORY_SIZE; a whole body past the upload
        # limit never gets here (config.middleware.BodySizeLimitMiddleware).
        return error_response(
            data_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
            ErrorCode.DATA_TOO_LARGE,
            status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, DatabaseError):
        # PostgreSQL restarted under us (docs/reliability.md, "What is guaranteed"): the
        # client retries; nothing is lost
        # because every multi-row write runs in a transaction.
        logger.warning("database error answered with 503: %s", exc)
        return error_response(
            DATABASE_UNAVAILABLE,
            ErrorCode.DATABASE_UNAVAILABLE,
            status.HTTP_503_SERVICE_UNAVAILABLE,
        )
    if isinstance(exc, KombuOperationalError):
        logger.warning("broker error answered with 503: %s", exc)
        return error_response(
            QUEUE_UNAVAILABLE, ErrorCode.QUEUE_UNAVAILABLE, status.HTTP_503_SERVICE_UNAVAILABLE
        )
    return None
