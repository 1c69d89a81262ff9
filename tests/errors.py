"""Reading the API's error answers in tests (annotate/api_errors.py)."""

from __future__ import annotations

from typing import Any


def _messages(fields: Any) -> Any:
    if isinstance(fields, list):
        return [_messages(each) for each in fields]
    if isinstance(fields, dict) and set(fields) == {"message", "code"}:
        return fields["message"]
    if isinstance(fields, dict):
        return {name: _messages(value) for name, value in fields.items()}
    return fields


def field_errors(response: Any) -> dict[str, Any]:
    """A validation error's ``fields`` as ``{field: [message, ...]}`` (nested as the input
    is), after checking that the answer is one: code "invalid", a detail, the fields."""
    body = response.json()
    assert body["code"] == "invalid", body
    assert isinstance(body["detail"], str) and body["detail"], body
    return _messages(body["fields"])
