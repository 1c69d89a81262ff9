"""A file's lines, read ``READ_CHUNK`` bytes at a time, a line longer than
``MAX_LINE_BYTES`` skipped without being held; a file that is no JSONL (a CSV, a zip,
Parquet) refused after its first line."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from typing import IO

from annotate.imports import (
    ImportFileError,
)

from .messages import LINE_TOO_LONG, NOT_JSONL, NOT_JSONL_FIRST_LINE, NOT_JSONL_TEXT

# The file is read this many bytes at a time, and a line may hold at most
# ``MAX_LINE_BYTES``: an export's line is one key (a few kilobytes; a key of 64 prefixes
# with long sentences and many annotators, some hundreds). A longer line is refused
# without being held: the first as soon as it passes the limit, as is a first line that
# does not start with ``{`` as soon as its first byte is read.
READ_CHUNK = 1 << 20
MAX_LINE_BYTES = 16 << 20
_JSON_SPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


def _not_jsonl(start: bytes) -> ImportFileError:
    """The refusal of a file whose first line is no JSON object; ``start``: the bytes of it
    read so far, which say whether it is text at all."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(start, final=False)
    except UnicodeDecodeError:  # a binary file (a zip, Parquet) or another encoding
        return ImportFileError([NOT_JSONL.format(why=NOT_JSONL_TEXT)], code="not_jsonl")
    return ImportFileError([NOT_JSONL.format(why=NOT_JSONL_FIRST_LINE)], code="not_jsonl")


def _lines(file: IO[bytes]) -> Iterator[tuple[int, bytes | None]]:
    """(line number, the line without its end) for every line of the file, read
    ``READ_CHUNK`` bytes at a time; None for a line longer than ``MAX_LINE_BYTES``, which
    is skipped without being held (so memory never holds more than one line and one
    chunk). Refuses the file (``ImportFileError``, ``not_jsonl``) as soon as the first
    byte of text (after a UTF-8 byte order mark and blank space) is not the ``{`` that
    starts a JSON object, and when the first line of text is too long."""
    number = 0  # of the last line ended
    parts: list[bytes] = []
    size = 0
    skipping = False  # the line under way is too long, and was reported
    started = False  # the first byte of text was read (and is a "{")
    at_start = True  # nothing read yet but perhaps the byte order mark

    bom = b""  # the file's first bytes while they may still be a byte order mark

    def first_text(piece: bytes) -> None:
        nonlocal started, at_start, bom
        if at_start:
            head = bom + piece
            if len(head) < len(_BOM) and _BOM.startswith(head):
                bom = head  # read on before deciding
                return
            at_start = False
            piece = head.removeprefix(_BOM)
        rest = piece.lstrip(_JSON_SPACE)
        if rest:
            if not rest.startswith(b"{"):
                raise _not_jsonl(b"".join(parts) + piece)
            started = True

    def too_long(line: int) -> None:
        if not started or line == first_line:
            raise ImportFileError([LINE_TOO_LONG.format(line=line, limit=MAX_LINE_BYTES >> 20)])

    first_line = 0  # the number of the line whose text came first
    while chunk := file.read(READ_CHUNK):
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8", "surrogatepass")
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not started:
                first_text(piece)
                if started:
                    first_line = number + 1
            if not skipping:
                size += len(piece)
                if size > MAX_LINE_BYTES:
                    too_long(number + 1)
                    skipping = True
                    parts = []
                    yield number + 1, None
                else:
                    parts.append(piece)
            if end < 0:
                break
            number += 1
            if not skipping:
                yield number, b"".join(parts)
            parts, size, skipping = [], 0, False
            start = end + 1
    if parts and not skipping:
        yield number + 1, b"".join(parts)
