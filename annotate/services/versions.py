"""Optimistic concurrency, shared by the annotator's and the gold writes: every write names
the version it read; a write made from a stale version is refused and changes nothing,
and each successful write bumps the version by one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol


class Versioned(Protocol):
    """A row written under optimistic concurrency: an annotation or a gold annotation."""

    version: int
    status: str

    def save(self, *, update_fields: Sequence[str]) -> None: ...


def check_writable(
    row: Versioned,
    version: int,
    *,
    stale: Callable[[], Exception],
    submitted: Callable[[], Exception],
) -> None:
    """A write names the version it read (``stale`` otherwise) and a submitted row takes
    no write but its reopening (``submitted``); both errors carry the row as it is."""
    if row.version != version:
        raise stale()
    if row.status == "submitted":
        raise submitted()


def bump(row: Versioned, *fields: str) -> None:
    """Save ``fields`` and the next version."""
    row.version += 1
    row.save(update_fields=[*fields, "version", "updated_at"])
