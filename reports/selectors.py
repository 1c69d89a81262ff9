"""Reads for the reports and the exports: a study into arrays, or into export records.

``study_arrays`` costs a fixed number of queries whatever the size of the study; each
query returns plain tuples (``values_list``), never model instances. ``export_chunks``
costs a fixed number of queries per chunk of keys and holds one chunk at a time.
Labels are derived from patterns exactly as ``annotate.selectors`` derives them
(``reports.computations.LABEL_OF_BITS`` for arrays, ``prefix_labels`` for records).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, IntegerField, Max, Q, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from annotate.models import Annotation, Key, Pattern, Study, TriggerPrefix
from annotate.selectors import PatternView, prefix_labels

from .computations import KIND_BITS, PERTURBATIONS, StudyArrays, masks_from_ranks
from .models import ExportJob

EXPORT_CHUNK = 500


@dataclass(frozen=True)
class ReportFilter:
    """Which part of a study a report covers. ``None``: every annotator / layer."""

    annotators: tuple[str, ...] | None = None
    layers: tuple[int, ...] | None = None
    submitted_only: bool = True


def _keys(study: Study, layers: Sequence[int] | None) -> QuerySet[Key]:
    keys = Key.objects.filter(study=study)
    if layers is not None:
        keys = keys.filter(layer__in=list(layers))
    return keys


def _annotations(study: Study, flt: ReportFilter) -> QuerySet[Annotation]:
    rows = Annotation.objects.filter(key__study=study)
    if flt.layers is not None:
        rows = rows.filter(key__layer__in=list(flt.layers))
    if flt.annotators is not None:
        rows = rows.filter(annotator__username__in=list(flt.annotators))
    if flt.submitted_only:
        rows = rows.filter(status=Annotation.Status.SUBMITTED)
    return rows


def _int_array(values: Sequence[Any]) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _positions(ids: np.ndarray, sorted_ids: np.ndarray) -> np.ndarray:
    """Positions of ``ids`` in the ascending ``sorted_ids`` (every id is there)."""
    return np.searchsorted(sorted_ids, ids)


def study_annotator_names(*, study: Study) -> list[str]:
    """Usernames of everyone who annotated a key of the study."""
    return list(
        get_user_model()
        .objects.filter(annotations__key__study=study)
        .distinct()
        .order_by("username")
        .values_list("username", flat=True)
    )


def study_arrays(*, study: Study, flt: ReportFilter | None = None) -> StudyArrays:
    """The study as arrays for ``reports.computations``. Seven queries, whatever its size."""
    flt = flt or ReportFilter()
    keys = _keys(study, flt.layers)
    # The value's argmax id comes out of the JSON in SQL, and perturbation rows only for
    # keys that have one: decoding 65k JSON documents in Python would cost a second.
    key_rows = list(
        keys.order_by("id").values_list(
            "id",
            "layer",
            "index",
            Cast(KT("value_top_token_ids__0"), IntegerField()),
        )
    )
    n_keys = len(key_rows)
    key_id = _int_array([r[0] for r in key_rows])
    key_layer = _int_array([r[1] for r in key_rows])
    key_index = _int_array([r[2] for r in key_rows])
    value_top_id = _int_array([-1 if r[3] is None else r[3] for r in key_rows])
    pert = np.full((n_keys, len(PERTURBATIONS)), np.nan)
    for pk, p in keys.exclude(perturbation={}).values_list("id", "perturbation"):
        k = int(_positions(np.asarray([pk]), key_id)[0])
        for c, name in enumerate(PERTURBATIONS):
            value = p.get(name) if isinstance(p, dict) else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                pert[k, c] = float(value)

    # Which ranks each key has. Ranks are 1..n per key (the miner and the import make
    # them so); one aggregate row per key confirms it, and only a study that breaks the
    # rule pays for reading every (key, rank).
    prefixes = TriggerPrefix.objects.filter(key__in=keys)
    shape = list(
        prefixes.order_by()
        .values("key_id")
        .annotate(n=Count("id"), top=Max("rank"))
        .values_list("key_id", "n", "top")
    )
    n_ranks = max((top for _, _, top in shape), default=0)
    exists = np.zeros((n_keys, n_ranks), dtype=bool)
    if shape:
        pos = _positions(_int_array([r[0] for r in shape]), key_id)
        counts = _int_array([r[1] for r in shape])
        tops = _int_array([r[2] for r in shape])
        if np.array_equal(counts, tops):
            n_per_key = np.zeros(n_keys, dtype=np.int64)
            n_per_key[pos] = counts
            exists = np.arange(n_ranks)[None, :] < n_per_key[:, None]
        else:
            pairs = np.asarray(list(prefixes.values_list("key_id", "rank")), dtype=np.int64)
            exists[_positions(pairs[:, 0], key_id), pairs[:, 1] - 1] = True

    top1 = np.asarray(
        list(prefixes.filter(rank=1).values_list("key_id", "trigger_token_id", "next_token_id")),
        dtype=np.int64,
    ).reshape(-1, 3)
    top1_trigger = np.full(n_keys, -1, dtype=np.int64)
    top1_next = np.full(n_keys, -1, dtype=np.int64)
    if top1.size:
        pos = _positions(top1[:, 0], key_id)
        top1_trigger[pos] = top1[:, 1]
        top1_next[pos] = top1[:, 2]

    annotations = _annotations(study, flt)
    ann = np.asarray(
        list(annotations.order_by("id").values_list("id", "key_id", "annotator_id")), dtype=np.int64
    ).reshape(-1, 3)
    users = dict(
        get_user_model()
        .objects.filter(pk__in=np.unique(ann[:, 2]).tolist())
        .values_list("id", "username")
    )
    coders = tuple(sorted(users.values()))
    coder_pos = {user_id: coders.index(name) for user_id, name in users.items()}
    ann_coder = (
        _int_array([coder_pos[u] for u in ann[:, 2].tolist()]) if ann.size else _int_array([])
    )

    _, pat_ann_id, pat_kind, pat_mask = _pattern_masks(annotations, n_ranks)

    return StudyArrays(
        layers=np.unique(key_layer),
        key_layer=key_layer,
        key_index=key_index,
        prefix_exists=exists,
        coders=coders,
        ann_key=_positions(ann[:, 1], key_id),
        ann_coder=ann_coder,
        pat_ann=_positions(pat_ann_id, ann[:, 0]),
        pat_kind=pat_kind,
        pat_mask=pat_mask,
        value_top_id=value_top_id,
        top1_next_id=top1_next,
        top1_trigger_id=top1_trigger,
        vocab_size=int(study.vocab_size),
        perturbation=pert,
    )


_MASK_SQL = """
SELECT p.id, p.annotation_id,
       CASE p.kind WHEN 'shallow' THEN 1 WHEN 'semantic' THEN 2 ELSE 4 END,
       COALESCE({agg}(CAST(1 AS BIGINT) << (tp.{rank} - 1)), 0)
FROM {pattern} p
LEFT JOIN {through} pp ON pp.pattern_id = p.id
LEFT JOIN {prefix} tp ON tp.id = pp.triggerprefix_id
WHERE p.annotation_id IN ({annotations})
GROUP BY p.id, p.annotation_id, p.kind
ORDER BY p.id
"""


def _pattern_masks(
    annotations: QuerySet[Annotation], n_ranks: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pattern of ``annotations``: id, annotation id, kind bit, covered ranks as a bit
    set [P, W]. One query: the database folds each pattern's covered prefixes into one
    64-bit word (a pattern covers distinct ranks, so a sum of their bits is their OR),
    so it sends one row per pattern instead of one per covered prefix. Ranks above 64
    need more than one word: then the (pattern, rank) rows come back instead."""
    through = Pattern.prefixes.through
    if n_ranks > 64:
        pat = np.asarray(
            list(
                Pattern.objects.filter(annotation__in=annotations)
                .order_by("id")
                .values_list("id", "annotation_id", "kind")
            ),
            dtype=object,
        ).reshape(-1, 3)
        pat_id = pat[:, 0].astype(np.int64)
        cov = np.asarray(
            list(
                through.objects.filter(pattern__annotation__in=annotations).values_list(
                    "pattern_id", "triggerprefix__rank"
                )
            ),
            dtype=np.int64,
        ).reshape(-1, 2)
        masks = masks_from_ranks(len(pat_id), _positions(cov[:, 0], pat_id), cov[:, 1], n_ranks)
        kinds = np.asarray([KIND_BITS.get(k, 0) for k in pat[:, 2]], dtype=np.uint8)
        return pat_id, pat[:, 1].astype(np.int64), kinds, masks
    sub_sql, sub_params = annotations.order_by().values("id").query.sql_with_params()
    quote = connection.ops.quote_name
    sql = _MASK_SQL.format(
        agg="BIT_OR" if connection.vendor == "postgresql" else "SUM",
        rank=quote("rank"),
        pattern=quote(Pattern._meta.db_table),
        through=quote(through._meta.db_table),
        prefix=quote(TriggerPrefix._meta.db_table),
        annotations=sub_sql,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, sub_params)
        rows = np.asarray(cursor.fetchall(), dtype=np.int64).reshape(-1, 4)
    return rows[:, 0], rows[:, 1], rows[:, 2].astype(np.uint8), rows[:, 3:4].view(np.uint64)


# --- exports ----------------------------------------------------------------------------


def _after(layer: int, index: int) -> Q:
    return Q(layer__gt=layer) | Q(layer=layer, index__gt=index)


def export_key_count(*, study: Study, layers: Sequence[int] | None = None) -> int:
    return _keys(study, layers).count()


def export_chunks(
    *, study: Study, layers: Sequence[int] | None = None, chunk_size: int = EXPORT_CHUNK
) -> Iterator[list[dict[str, Any]]]:
    """The study's keys in (layer, index) order as export records, ``chunk_size`` keys
    at a time: five queries per chunk (keys, prefixes, annotations, patterns, covered
    ranks), and only one chunk in memory. Keys are paged by (layer, index), not by
    offset, so a page costs the same at the end of a large study as at its start."""
    last: tuple[int, int] | None = None
    while True:
        keys = _keys(study, layers)
        if last is not None:
            keys = keys.filter(_after(*last))
        rows = list(
            keys.order_by("layer", "index").values_list("id", "layer", "index", "value_top_tokens")[
                :chunk_size
            ]
        )
        if not rows:
            return
        last = (rows[-1][1], rows[-1][2])
        ids = [r[0] for r in rows]
        prefixes: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for key_id, *values in (
            TriggerPrefix.objects.filter(key_id__in=ids)
            .order_by("key_id", "rank")
            .values_list(
                "key_id",
                "rank",
                "coefficient",
                "text",
                "trigger_token",
                "next_token",
                "sentence",
                "sentence_index",
                "position",
            )
        ):
            rank, coefficient, text, trigger, nxt, sentence, sentence_index, position = values
            prefixes[key_id].append(
                {
                    "rank": rank,
                    "coefficient": coefficient,
                    "text": text,
                    "trigger_token": trigger,
                    "next_token": nxt,
                    "sentence": sentence,
                    "sentence_index": sentence_index,
                    "position": position,
                }
            )
        annotations = list(
            Annotation.objects.filter(key_id__in=ids)
            .order_by("key_id", "annotator__username")
            .values_list("id", "key_id", "annotator__username", "status")
        )
        covered: dict[int, list[int]] = defaultdict(list)
        for pattern_id, rank in (
            Pattern.prefixes.through.objects.filter(pattern__annotation__key_id__in=ids)
            .order_by("pattern_id", "triggerprefix__rank")
            .values_list("pattern_id", "triggerprefix__rank")
        ):
            covered[pattern_id].append(rank)
        patterns: dict[int, list[PatternView]] = defaultdict(list)
        for pattern_id, annotation_id, description, kind, order in (
            Pattern.objects.filter(annotation__key_id__in=ids)
            .order_by("annotation_id", "order", "id")
            .values_list("id", "annotation_id", "description", "kind", "order")
        ):
            patterns[annotation_id].append(
                PatternView(
                    id=pattern_id,
                    description=description,
                    kind=kind,
                    prefix_ranks=covered.get(pattern_id, []),
                    order=order,
                    client_id=None,
                )
            )
        by_key: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for annotation_id, key_id, username, status in annotations:
            ranks = [p["rank"] for p in prefixes[key_id]]
            views = patterns.get(annotation_id, [])
            by_key[key_id].append(
                {
                    "annotator": username,
                    "status": status,
                    "patterns": [
                        {
                            "description": v.description,
                            "kind": v.kind,
                            "prefix_ranks": v.prefix_ranks,
                        }
                        for v in views
                    ],
                    "labels": prefix_labels(ranks=ranks, patterns=views),
                }
            )
        yield [
            {
                "key": {"layer": layer, "index": index, "value_top_tokens": value_top_tokens},
                "prefixes": prefixes[key_id],
                "annotations": by_key[key_id],
            }
            for key_id, layer, index, value_top_tokens in rows
        ]
        if len(rows) < chunk_size:
            return


def export_job_get(*, job_id: int) -> ExportJob | None:
    return ExportJob.objects.select_related("study").filter(pk=job_id).first()
