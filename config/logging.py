"""Log lines that carry the id of the request they were written in.

``RequestIdMiddleware`` (config/middleware.py) sets the id for the request; the filter
copies it onto every record that reaches the console handler, whichever logger wrote it
(Django's, DRF's, ours). ``LOG_FORMAT=json`` (the production default) writes one JSON
object a line, which log collectors read without a parsing rule; ``text`` is for people.
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime

# A context variable, not a thread-local: each gunicorn thread, and each ASGI task, sees
# its own request's id.
request_id: ContextVar[str | None] = ContextVar("ffkv_request_id", default=None)

NO_REQUEST = "-"


class RequestIdFilter(logging.Filter):
    """Adds ``record.request_id``: the current request's id, or ``-`` outside a request."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get() or NO_REQUEST
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message,
    request_id, and the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, tz=UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", NO_REQUEST),
        }
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack_info"] = self.formatStack(record.stack_info)
        # ensure_ascii: a line stays one valid line whatever the message holds.
        return json.dumps(entry, ensure_ascii=True, default=str)
