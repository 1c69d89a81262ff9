"""The checks of one field of a line (its type, its bounds, a username, a time), and the
contract's field sets and bounds that the import reads on every line
(``reports.contract.records``). A failed check raises ``_LineError`` with the field's path."""

from __future__ import annotations

import math
import re
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError

from ..contract.records import (
    ANNOTATION,
    FLAG,
    GOLD,
    GOLD_PATTERN,
    HELDOUT,
    HELDOUT_RANDOM,
    KEY,
    MAX_INT,
    PATTERN,
    PREFIX,
    SAMPLE,
    STUDY,
    Field,
)
from .messages import (
    ANNOTATOR_INVALID,
    EMPTY_STRING,
    MISSING,
    NOT_BOOL,
    NOT_INT,
    NOT_LIST,
    NOT_NUMBER,
    NOT_OBJECT,
    NOT_STRING,
    NOT_TIME,
    NUL_CHARACTER,
    OUT_OF_RANGE,
    SURROGATE_CHARACTER,
    TOO_LONG,
    UNKNOWN_FIELD,
    UPDATED_BEFORE_CREATED,
)

# Every level's fields, required and additive, and their bounds: the contract's
# (``reports.contract.records``). Additive fields are optional: a file without them
# imports as a v1 file (docs/data-format.md, "Additive fields").
_STUDY_FIELDS = {f.name: f.max_len for f in STUDY.fields if f.required and f.type == "string"}
_PREFIX_STRINGS = {
    f.name: f.max_len for f in PREFIX.fields if f.required and f.type.startswith("string")
}
_STUDY_ADDITIVE = STUDY.additive
_KEY_ADDITIVE = KEY.additive
_PREFIX_ADDITIVE = PREFIX.additive
# A key's other stored examples (docs/evidence.md): each entry's fields as a prefix's.
_EXAMPLE_FIELDS = {
    "heldout": (HELDOUT.required, HELDOUT.additive),
    "heldout_random": (HELDOUT_RANDOM.required, HELDOUT_RANDOM.additive),
    "samples": (SAMPLE.required, SAMPLE.additive),
}
_HEX_BYTES = re.compile(r"(?:[0-9a-f]{2}){0,100}")
_ANNOTATION_ADDITIVE = ANNOTATION.additive
_PATTERN_ADDITIVE = PATTERN.additive
# The key's gold annotation (additive): an annotation whose annotator is its curator.
_GOLD_ADDITIVE = GOLD.additive
_FLAG_OPTIONAL = FLAG.additive
_GOLD_PATTERN_ADDITIVE = GOLD_PATTERN.additive


def _bounds(field: Field) -> tuple[int, int]:
    """An integer field's (lo, hi) as the contract gives them."""
    return (0 if field.lo is None else field.lo, MAX_INT if field.hi is None else field.hi)


_MAX_NOTE = ANNOTATION["note"].max_len
_MAX_DESCRIPTION = PATTERN["description"].max_len
_MAX_FLAG_NOTE = FLAG["note"].max_len
_MAX_USERNAME = ANNOTATION["annotator"].max_len or 150
_TOP_K = _bounds(STUDY["top_k"])
_SHAPE = {name: _bounds(STUDY[name]) for name in ("n_layers", "d_ff", "vocab_size")}
_SEED = _bounds(STUDY["seed"])
_LAYER = _bounds(KEY["layer"])
_INDEX = _bounds(KEY["index"])
_SENTENCE_INDEX = _bounds(PREFIX["sentence_index"])
_POSITION = _bounds(PREFIX["position"])
_TRIGGER_TOKEN_ID = _bounds(PREFIX["trigger_token_id"])
_NEXT_TOKEN_ID = _bounds(PREFIX["next_token_id"])
_VERSION = _bounds(ANNOTATION["version"])


class _LineError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _object(
    value: Any,
    path: str,
    fields: AbstractSet[str],
    optional: AbstractSet[str] = frozenset(),
) -> dict[str, Any]:
    """``value`` as an object with every one of ``fields``, and nothing but ``fields``
    and ``optional``."""
    if not isinstance(value, dict):
        raise _LineError(path, NOT_OBJECT)
    for name in sorted(fields):
        if name not in value:
            raise _LineError(f"{path}.{name}" if path else name, MISSING)
    for name in value:
        if name not in fields and name not in optional:
            raise _LineError(f"{path}.{name}" if path else str(name), UNKNOWN_FIELD)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _LineError(path, NOT_LIST)
    return value


def _int(value: Any, path: str, lo: int = 0, hi: int = MAX_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _LineError(path, NOT_INT)
    if not lo <= value <= hi:
        raise _LineError(path, OUT_OF_RANGE.format(lo=lo, hi=hi))
    return value


def _float(value: Any, path: str, lo: float | None = None, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _LineError(path, NOT_NUMBER)
    if lo is not None and hi is not None and not lo <= value <= hi:
        raise _LineError(path, OUT_OF_RANGE.format(lo=lo, hi=hi))
    return float(value)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _LineError(path, NOT_BOOL)
    return value


def _str(value: Any, path: str, max_len: int | None = None, non_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise _LineError(path, NOT_STRING)
    if "\x00" in value:
        # PostgreSQL cannot store it in a text column.
        raise _LineError(path, NUL_CHARACTER)
    if not value.isascii():  # a flag of the string: no scan for the usual ASCII text
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # JSON can escape one ("\ud800"); no database column can store it.
            raise _LineError(path, SURROGATE_CHARACTER) from None
    if max_len is not None and len(value) > max_len:
        raise _LineError(path, TOO_LONG.format(n=max_len))
    if non_empty and not value.strip():
        raise _LineError(path, EMPTY_STRING)
    return value


_username = UnicodeUsernameValidator()


def _time(value: Any, path: str) -> datetime:
    """An ISO 8601 date and time with a UTC offset, as an aware datetime in UTC."""
    if not isinstance(value, str) or len(value) > 64:
        raise _LineError(path, NOT_TIME)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise _LineError(path, NOT_TIME) from None
    if parsed.tzinfo is None:
        raise _LineError(path, NOT_TIME)
    return parsed.astimezone(UTC)


def _times(raw: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """``created_at`` and ``updated_at`` that ``raw`` has, checked, into ``out``."""
    for name in ("created_at", "updated_at"):
        if name in raw:
            out[name] = _time(raw[name], f"{path}.{name}")
    if "created_at" in out and "updated_at" in out and out["updated_at"] < out["created_at"]:
        raise _LineError(f"{path}.updated_at", UPDATED_BEFORE_CREATED)


def _username_of(value: Any, path: str) -> str:
    name = _str(value, path, _MAX_USERNAME, non_empty=True)
    try:
        _username(name)
    except ValidationError:
        raise _LineError(path, ANNOTATOR_INVALID) from None
    return name
