"""The study's keys as export records (``reports.contract.records``), a chunk of keys at a
time: the key, its prefixes, its other stored examples (held-out sets and samples),
annotations, gold annotation and flags."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC
from typing import Any

from django.db.models import (
    Q,
)

from annotate.labels import prefix_labels
from annotate.models import (
    Annotation,
    GoldAnnotation,
    GoldPattern,
    KeyExample,
    KeyFlag,
    Pattern,
    Study,
    TriggerPrefix,
)
from annotate.selectors.annotations import PatternView

from ..contract.records import EXAMPLE_SETS, IF_SET, KEY, PREFIX, SAMPLE, Level
from .report_filter import _keys

# Keys a chunk holds. A mined key carries 125 stored examples with their per-token
# coefficients (docs/evidence.md); at 500 keys a chunk took the JSONL export's peak RSS to
# about 500 MiB, at 100 to about 170 MiB, at the same speed (bench/reports.py --examples).
EXPORT_CHUNK = 100
# An export record's key and prefixes are their columns under the fields' names, as the
# contract declares them (``reports.contract.records``; ``reports.imports`` reads them).
_PREFIX_COLUMNS = PREFIX.columns()
# Every column a stored example beyond the top-k is read from (``KeyExample``): a
# sample's, and a held-out example's rank.
_EXAMPLE_COLUMNS = ("rank", *SAMPLE.columns())
# And every column of an annotation and of a pattern (its order is the list's order; its
# client_id, the browser's token for a retried write, is no data of the annotation).
EXPORT_ANNOTATION_FIELDS = ("note", "version", "created_at", "updated_at", "submitted_at")
EXPORT_PATTERN_TIMES = ("created_at", "updated_at")
# A pattern's evidence columns (docs/evidence.md): "written" or "suggestion" (a gold
# pattern: "written" or "adopted"), its rule (null or {type, value}), its scores ({}
# until scored), written as stored.
EXPORT_PATTERN_EVIDENCE = ("source", "rule", "scores")


def _record_maker(
    level: Level, columns: Sequence[str]
) -> Callable[[Sequence[Any]], dict[str, Any]]:
    """A function from a row of ``columns`` to the level's object: its column fields in
    the contract's order, those written only where set (a token's bytes) left out where
    empty, so that a study without them exports as before."""
    place = {name: i for i, name in enumerate(columns)}
    fields = tuple(
        (name, place[column], level[name].written == IF_SET)
        for name, column in zip(level.column_fields(), level.columns(), strict=True)
    )

    def make(row: Sequence[Any]) -> dict[str, Any]:
        return {name: row[i] for name, i, if_set in fields if not if_set or row[i]}

    return make


_prefix_record = _record_maker(PREFIX, _PREFIX_COLUMNS)
# The line's list of each kind of ``KeyExample`` and the maker of its objects.
_EXAMPLE_LISTS = {
    kind: (name, _record_maker(level, _EXAMPLE_COLUMNS))
    for name, level, kinds in EXAMPLE_SETS
    for kind in kinds
}


def _example_records(ids: list[int]) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """The stored examples beyond the top-k of the keys ``ids`` as export objects, by key
    id and the line's list (``heldout``, ``heldout_random``, ``samples``): one query.
    Held-out ones by rank (their order), the samples by band (1 first) and draw, the
    random ones after the bands."""
    out: dict[int, dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: {name: [] for name, _, _ in EXAMPLE_SETS}
    )
    for key_id, kind, *values in (
        KeyExample.objects.filter(key_id__in=ids)
        .order_by("key_id", "kind", "band", "order")
        .values_list("key_id", "kind", *_EXAMPLE_COLUMNS)
    ):
        name, make = _EXAMPLE_LISTS[kind]
        out[key_id][name].append(make(values))
    return out


def export_time(value: Any) -> str | None:
    """A timestamp of the export: ISO 8601 in UTC (``2026-12-01T09:30:00.123456+00:00``)."""
    return None if value is None else value.astimezone(UTC).isoformat()


def _after(layer: int, index: int) -> Q:
    return Q(layer__gt=layer) | Q(layer=layer, index__gt=index)


def export_key_count(*, study: Study, layers: Sequence[int] | None = None) -> int:
    return _keys(study, layers).count()


def _covered_ranks(
    model: type[Pattern] | type[GoldPattern], key_path: str, ids: Iterable[int]
) -> dict[int, list[int]]:
    """The covered ranks, sorted, of every pattern of ``model`` (an annotator's or a gold
    pattern) whose key (reached by ``key_path``) is in ``ids``. One query."""
    name = model._meta.model_name
    covered: dict[int, list[int]] = defaultdict(list)
    for pattern_id, rank in (
        model.prefixes.through.objects.filter(**{f"{name}__{key_path}__in": ids})
        .order_by(f"{name}_id", "triggerprefix__rank")
        .values_list(f"{name}_id", "triggerprefix__rank")
    ):
        covered[pattern_id].append(rank)
    return covered


def _export_pattern_view(
    pattern_id: int, description: str, kind: str, order: int, covered: dict[int, list[int]]
) -> PatternView:
    return PatternView(
        id=pattern_id,
        description=description,
        kind=kind,
        prefix_ranks=covered.get(pattern_id, []),
        order=order,
        client_id=None,
    )


def _flag_records(ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The annotators' flags on the keys ``ids`` as export objects, by key id, in order of
    username (one flag per annotator and key): one query."""
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for key_id, username, reason, note, created_at in (
        KeyFlag.objects.filter(key_id__in=ids)
        .order_by("key_id", "annotator__username")
        .values_list("key_id", "annotator__username", "reason", "note", "created_at")
    ):
        out[key_id].append(
            {
                "reason": reason,
                "note": note,
                "annotator": username,
                "created_at": export_time(created_at),
            }
        )
    return out


def _gold_records(
    ids: list[int],
    prefixes: dict[int, list[dict[str, Any]]],
    pattern_place: dict[int, tuple[int, str, int]],
) -> dict[int, dict[str, Any]]:
    """The gold annotations of the keys ``ids`` as export objects, by key id: three
    queries (golds, their patterns, the patterns' ranks). ``pattern_place``: an annotator
    pattern's id to its key, its annotator and its place in that annotation's exported
    list (an adopted pattern's ``source_pattern``; null where the source is gone, or is
    not a pattern of the same key's annotation by ``source_annotator``)."""
    golds = list(
        GoldAnnotation.objects.filter(key_id__in=ids)
        .order_by("key_id")
        .values_list(
            "id",
            "key_id",
            "curator__username",
            "status",
            "note",
            "version",
            "is_check",
            "created_at",
            "updated_at",
            "submitted_at",
        )
    )
    key_of = {g[0]: g[1] for g in golds}
    covered = _covered_ranks(GoldPattern, "gold__key_id", ids)
    views: dict[int, list[PatternView]] = defaultdict(list)
    extras: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for (
        pattern_id,
        gold_id,
        description,
        kind,
        order,
        source,
        source_pattern_id,
        source_annotator,
        created_at,
        updated_at,
        rule,
        scores,
    ) in (
        GoldPattern.objects.filter(gold__key_id__in=ids)
        .order_by("gold_id", "order", "id")
        .values_list(
            "id",
            "gold_id",
            "description",
            "kind",
            "order",
            "source",
            "source_pattern_id",
            "source_annotator__username",
            "created_at",
            "updated_at",
            "rule",
            "scores",
        )
    ):
        views[gold_id].append(_export_pattern_view(pattern_id, description, kind, order, covered))
        place = pattern_place.get(source_pattern_id) if source_pattern_id is not None else None
        extras[gold_id].append(
            {
                "source": source,
                "source_annotator": source_annotator,
                "source_pattern": (
                    place[2]
                    if place is not None and place[:2] == (key_of[gold_id], source_annotator)
                    else None
                ),
                "created_at": export_time(created_at),
                "updated_at": export_time(updated_at),
                "rule": rule,
                "scores": scores,
            }
        )
    out: dict[int, dict[str, Any]] = {}
    for gold_id, key_id, curator, status, note, version, is_check, *times in golds:
        gold_views = views.get(gold_id, [])
        out[key_id] = {
            "annotator": curator,
            "status": status,
            "note": note,
            "version": version,
            "is_check": is_check,
            **{
                name: export_time(t)
                for name, t in zip(("created_at", "updated_at", "submitted_at"), times, strict=True)
            },
            "patterns": [
                {
                    "description": v.description,
                    "kind": v.kind,
                    "prefix_ranks": v.prefix_ranks,
                    **extra,
                }
                for v, extra in zip(gold_views, extras[gold_id], strict=True)
            ],
            "labels": prefix_labels(
                ranks=[p["rank"] for p in prefixes[key_id]], patterns=gold_views
            ),
        }
    return out


def export_chunks(
    *, study: Study, layers: Sequence[int] | None = None, chunk_size: int = EXPORT_CHUNK
) -> Iterator[list[dict[str, Any]]]:
    """The study's keys in (layer, index) order as export records, ``chunk_size`` keys
    at a time: ten queries per chunk (keys, prefixes, the other stored examples,
    annotations, patterns, covered ranks; golds, their patterns and ranks; flags), and
    only one chunk in memory. Keys are
    paged by (layer, index), not by offset, so a page costs the same at the end of a
    large study as at its start. Check annotations (``is_check``) are exported like the
    others, with ``check`` true (the reports leave them out)."""
    last: tuple[int, int] | None = None
    while True:
        keys = _keys(study, layers)
        if last is not None:
            keys = keys.filter(_after(*last))
        rows = list(
            # Every field of the key is a column of it (``reports.contract.records.KEY``),
            # ``layer`` and ``index`` first.
            keys.order_by("layer", "index").values_list("id", *KEY.columns())[:chunk_size]
        )
        if not rows:
            return
        last = (rows[-1][1], rows[-1][2])
        ids = [r[0] for r in rows]
        prefixes: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for key_id, *values in (
            TriggerPrefix.objects.filter(key_id__in=ids)
            .order_by("key_id", "rank")
            .values_list("key_id", *_PREFIX_COLUMNS)
        ):
            prefixes[key_id].append(_prefix_record(values))
        examples = _example_records(ids)
        annotations = list(
            Annotation.objects.filter(key_id__in=ids)
            .order_by("key_id", "annotator__username")
            .values_list(
                "id",
                "key_id",
                "annotator__username",
                "status",
                "active_seconds",
                "guideline_version",
                "is_check",
                *EXPORT_ANNOTATION_FIELDS,
            )
        )
        owner_of = {a[0]: (a[1], a[2]) for a in annotations}
        covered = _covered_ranks(Pattern, "annotation__key_id", ids)
        patterns: dict[int, list[PatternView]] = defaultdict(list)
        pattern_times: dict[int, list[dict[str, Any]]] = defaultdict(list)
        # An annotator's pattern: its annotator and its place in the exported list.
        pattern_place: dict[int, tuple[int, str, int]] = {}
        for pattern_id, annotation_id, description, kind, order, created, updated, *evidence in (
            Pattern.objects.filter(annotation__key_id__in=ids)
            .order_by("annotation_id", "order", "id")
            .values_list(
                "id",
                "annotation_id",
                "description",
                "kind",
                "order",
                *EXPORT_PATTERN_TIMES,
                *EXPORT_PATTERN_EVIDENCE,
            )
        ):
            pattern_place[pattern_id] = (*owner_of[annotation_id], len(patterns[annotation_id]))
            patterns[annotation_id].append(
                _export_pattern_view(pattern_id, description, kind, order, covered)
            )
            pattern_times[annotation_id].append(
                {
                    "created_at": export_time(created),
                    "updated_at": export_time(updated),
                    **dict(zip(EXPORT_PATTERN_EVIDENCE, evidence, strict=True)),
                }
            )
        golds = _gold_records(ids, prefixes, pattern_place)
        flags = _flag_records(ids)
        by_key: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for (
            annotation_id,
            key_id,
            username,
            status,
            active_seconds,
            guideline_version,
            is_check,
            note,
            version,
            *times,
        ) in annotations:
            ranks = [p["rank"] for p in prefixes[key_id]]
            views = patterns.get(annotation_id, [])
            by_key[key_id].append(
                {
                    "annotator": username,
                    "status": status,
                    "note": note,
                    "version": version,
                    **{
                        name: export_time(t)
                        for name, t in zip(EXPORT_ANNOTATION_FIELDS[2:], times, strict=True)
                    },
                    "active_seconds": active_seconds,
                    "guideline_version": guideline_version,
                    "check": is_check,
                    "patterns": [
                        {
                            "description": v.description,
                            "kind": v.kind,
                            "prefix_ranks": v.prefix_ranks,
                            **extra,
                        }
                        for v, extra in zip(views, pattern_times[annotation_id], strict=True)
                    ],
                    "labels": prefix_labels(ranks=ranks, patterns=views),
                }
            )
        yield [
            {
                "key": dict(zip(KEY.column_fields(), values, strict=True)),
                "prefixes": prefixes[key_id],
                **examples[key_id],
                "annotations": by_key[key_id],
                "gold": golds.get(key_id),
                "flags": flags.get(key_id, []),
            }
            for key_id, *values in rows
        ]
        if len(rows) < chunk_size:
            return
