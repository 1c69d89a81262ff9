"""A file's records: every line decoded, parsed and checked (``line``); the first pass
over the file (``_validate_file``: up to ``MAX_ERRORS`` errors, the study, the
usernames) and the second (``_validated_records``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from annotate.imports import (
    ImportFileError,
)

from . import lines
from .fields import _LineError
from .line import _validate_record
from .messages import (
    DUPLICATE_KEY,
    EMPTY_FILE,
    FIELD_ERROR,
    LINE_TOO_LONG,
    MORE_ERRORS,
    NESTED_TOO_DEEPLY,
    NOT_JSON,
    NOT_JSONL,
    NOT_JSONL_FIRST_LINE,
    NOT_JSONL_TEXT,
    NOT_UTF8,
    STUDY_DIFFERS,
)
from .study import _Headers

MAX_ERRORS = 20


def _records(file: IO[bytes]) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, record, error) for every non-blank line of the file."""
    headers = _Headers()
    first = True  # no line with text read yet
    for number, raw in lines._lines(file):
        if raw is None:
            first = False
            yield number, None, LINE_TOO_LONG.format(line=number, limit=lines.MAX_LINE_BYTES >> 20)
            continue
        try:
            # A UTF-8 byte order mark, which some editors write, is no part of the JSON.
            text = raw.decode("utf-8-sig" if first else "utf-8")
        except UnicodeDecodeError:
            if first:  # a binary file (a zip, Parquet) or another encoding
                raise ImportFileError(
                    [NOT_JSONL.format(why=NOT_JSONL_TEXT)], code="not_jsonl"
                ) from None
            yield number, None, NOT_UTF8.format(line=number)
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except ValueError:
            if first:  # a CSV, or any other text: one error, not one per line
                raise ImportFileError(
                    [NOT_JSONL.format(why=NOT_JSONL_FIRST_LINE)], code="not_jsonl"
                ) from None
            first = False
            yield number, None, NOT_JSON.format(line=number)
            continue
        except RecursionError:
            first = False
            yield number, None, NESTED_TOO_DEEPLY.format(line=number)
            continue
        first = False
        try:
            record = _validate_record(obj, headers)
        except _LineError as exc:
            where = f"{exc.field}: " if exc.field else ""
            # The field's path holds the file's own names: an unknown one may be anything.
            message = f"line {number}: {where}{exc.message}"
            yield number, None, message.encode("utf-8", "backslashreplace").decode("utf-8")
            continue
        yield number, record, None


@dataclass
class _Summary:
    header: dict[str, Any] | None = None
    keys: int = 0
    # username -> (line, field) where it first appears
    annotators: dict[str, tuple[int, str]] = field(default_factory=dict)
    # the same for the curators of gold annotations
    curators: dict[str, tuple[int, str]] = field(default_factory=dict)
    max_layer: int = 0
    max_index: int = 0
    max_rank: int = 0


def _validate_file(file: IO[bytes]) -> _Summary:
    errors: list[str] = []
    summary = _Summary()
    header_line = 0
    seen: dict[tuple[int, int], int] = {}
    for number, record, error in _records(file):
        if record is not None:
            key = (record["key"]["layer"], record["key"]["index"])
            if summary.header is None:
                summary.header, header_line = record["study"], number
            if record["study"] != summary.header:
                error = FIELD_ERROR.format(
                    line=number, field="study", message=STUDY_DIFFERS.format(line=header_line)
                )
            elif key in seen:
                error = FIELD_ERROR.format(
                    line=number,
                    field="key",
                    message=DUPLICATE_KEY.format(layer=key[0], index=key[1], line=seen[key]),
                )
            else:
                seen[key] = number
                summary.keys += 1
                for a, ann in enumerate(record["annotations"]):
                    summary.annotators.setdefault(
                        ann["annotator"], (number, f"annotations[{a}].annotator")
                    )
                for f, flag in enumerate(record["flags"]):
                    summary.annotators.setdefault(
                        flag["annotator"], (number, f"flags[{f}].annotator")
                    )
                gold = record["gold"]
                if gold is not None:
                    if gold["annotator"] is not None:
                        summary.curators.setdefault(gold["annotator"], (number, "gold.annotator"))
                    for q, pattern in enumerate(gold["patterns"]):
                        if pattern["source_annotator"] is not None:
                            summary.annotators.setdefault(
                                pattern["source_annotator"],
                                (number, f"gold.patterns[{q}].source_annotator"),
                            )
                summary.max_layer = max(summary.max_layer, key[0])
                summary.max_index = max(summary.max_index, key[1])
                summary.max_rank = max(summary.max_rank, len(record["prefixes"]))
        if error is not None:
            errors.append(error)
            if len(errors) >= MAX_ERRORS:
                errors.append(MORE_ERRORS.format(n=MAX_ERRORS))
                break
    if errors:
        raise ImportFileError(errors)
    if summary.header is None:
        raise ImportFileError([EMPTY_FILE])
    return summary


def _validated_records(file: IO[bytes]) -> Iterator[dict[str, Any]]:
    """The second pass: every record again, now known to be valid."""
    for _, record, error in _records(file):
        if error is not None or record is None:  # the file changed between the passes
            raise ImportFileError([error or EMPTY_FILE])
        yield record
