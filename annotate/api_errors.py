"""Every API error is JSON ``{"detail": ...}``: never an HTML page, never a traceback."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from kombu.exceptions import OperationalError as KombuOperationalError
from rest_framework import status
from rest_framework.exceptions import ErrorDetail
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

logger = logging.getLogger(__name__)

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


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(exc, context)
    if response is not None:
        response.data = printable(response.data)
        return response
    if isinstance(exc, RequestDataTooBig):
        # Form or JSON data past DATA_UPLOAD_MAX_MEMORY_SIZE; a whole body past the upload
        # limit never gets here (config.middleware.BodySizeLimitMiddleware).
        return Response(
            {"detail": data_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, DatabaseError):
        # PostgreSQL restarted under us (DESIGN §9): the client retries; nothing is lost
        # because every multi-row write runs in a transaction.
        logger.warning("database error answered with 503: %s", exc)
        return Response(
            {"detail": DATABASE_UNAVAILABLE}, status=status.HTTP_503_SERVICE_UNAVAILABLE
        )
    if isinstance(exc, KombuOperationalError):
        logger.warning("broker error answered with 503: %s", exc)
        return Response({"detail": QUEUE_UNAVAILABLE}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    return None
