"""docs/data-format.md's field tables, rendered from the contract between two markers, so
that the page cannot drift from what the export writes and the import checks."""

from __future__ import annotations

from pathlib import Path

from .records import IF_SET, LEVELS, Field, Level
from .tables import TABLES, Table

BEGIN = "<!-- contract:begin -->"
END = "<!-- contract:end -->"
DOC = Path(__file__).resolve().parents[2] / "docs" / "data-format.md"
NO_MARKERS = f"{{path}} has no {BEGIN} ... {END} section"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _field_row(field: Field) -> str:
    kind = "required" if field.required else "additive"
    rule = field.rule
    if field.written == IF_SET:
        kind += " (written where set)"
    return (
        f"| `{field.name}` | {field.type} | {kind} | {_cell(rule)} | {_cell(field.description)} |"
    )


def _level_table(level: Level) -> list[str]:
    title = "A line" if not level.path else f"`{level.path}`"
    if level.path and level.path != level.name:
        title += f" ({level.name})"
    return [
        f"**{title}**",
        "",
        "| field | type | v1 | rule | what it holds |",
        "|---|---|---|---|---|",
        *(_field_row(f) for f in level.fields),
        "",
    ]


def _column_table(table: Table) -> list[str]:
    return [
        f"**`{table.name}`**: {table.description}",
        "",
        "| column | Parquet type | what it holds |",
        "|---|---|---|",
        *(f"| `{c.name}` | {c.type} | {_cell(c.description)} |" for c in table.columns),
        "",
    ]


def contract_markdown() -> str:
    """The tables of every level of a line, then of the CSV and Parquet tables."""
    lines = [
        "(generated from `reports/contract/` by `manage.py contract --write`; do not edit)",
        "",
    ]
    for level in LEVELS:
        lines += _level_table(level)
    lines += ["The CSV and Parquet tables, column by column:", ""]
    for table in TABLES:
        lines += _column_table(table)
    return "\n".join(lines)


def doc_rendered(text: str, *, path: Path = DOC) -> str:
    """``text`` (the page) with its section between the markers rendered anew."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(NO_MARKERS.format(path=path))
    return f"{text[: start + len(BEGIN)]}\n{contract_markdown()}\n{text[end:]}"
