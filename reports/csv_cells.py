"""CSV writing shared by the report's CSV and the export's: RFC 4180 rows, and cells
that a spreadsheet would run as a formula neutralised."""

from __future__ import annotations

import csv
from typing import IO, Any

# A spreadsheet runs a cell that starts with one of these as a formula (OWASP, "CSV
# injection"); study names, usernames and prefix texts may start so.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """One value as a CSV cell: ``None`` empty, a text that starts like a formula behind a
    ``'`` so that a spreadsheet shows it as text. Every such text is prefixed, a plain
    negative number written as text (``"-0.5"``) too, as OWASP advises: the writer cannot
    tell a number from a formula such as ``-1+A1``. Numbers (int, float) are data and
    stay as they are. Only the CSV writers use this: JSONL and Parquet stay exact."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_writer(out: IO[str]) -> Any:
    """Every CSV of the project: RFC 4180's CRLF rows, which also makes the csv module
    quote a cell holding a lone ``\r`` (with ``\n`` rows Python 3.11 leaves it bare, and
    a reader breaks the row there)."""
    return csv.writer(out, lineterminator="\r\n")
