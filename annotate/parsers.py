"""The API's JSON parser: a body too deep to decode is a 400, never a 500."""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

NESTED_TOO_DEEPLY = "JSON parse error - the body is nested too deeply."


class JSONParser(parsers.JSONParser):
    """DRF's parser, which lets Python's RecursionError through: a few kilobytes of ``[``
    would otherwise be a 500 on every JSON endpoint, anonymous sign-in included."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(NESTED_TOO_DEEPLY, code="nested_too_deeply") from None
