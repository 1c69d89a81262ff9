"""Reads of the audit trail: every event of a study, an annotator's and the gold's, in the
order they happened (docs/annotation.md, "The audit trail")."""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from ..models import AnnotationEvent, GoldEvent, Study

AUDIT_KINDS = ("annotation", "gold")
# Events read per query: the trail of a large study is streamed, never held whole.
AUDIT_CHUNK = 2000


def _events(kind: str, study: Study) -> Iterator[dict[str, Any]]:
    rows: Any
    if kind == "annotation":
        rows = AnnotationEvent.objects.filter(annotation__key__study=study).values_list(
            "at",
            "id",
            "annotation__key__layer",
            "annotation__key__index",
            "actor__username",
            "action",
            "before",
            "after",
        )
    else:
        rows = GoldEvent.objects.filter(gold__key__study=study).values_list(
            "at",
            "id",
            "gold__key__layer",
            "gold__key__index",
            "actor__username",
            "action",
            "before",
            "after",
            "source",
        )
    source: list[Any]
    for at, _, layer, index, actor, action, before, after, *source in rows.order_by(
        "at", "id"
    ).iterator(chunk_size=AUDIT_CHUNK):
        yield {
            "kind": kind,
            "layer": layer,
            "index": index,
            "actor": actor,
            "at": at,
            "action": action,
            "before": before,
            "after": after,
            "source": source[0] if source else None,
        }


def audit_events(*, study: Study) -> Iterator[dict[str, Any]]:
    """Every event of ``study``'s annotations and gold, oldest first (annotator events
    before gold events at the same instant). Two queries, streamed in chunks."""
    return heapq.merge(
        _events("annotation", study),
        _events("gold", study),
        key=lambda event: (event["at"], AUDIT_KINDS.index(event["kind"])),
    )
