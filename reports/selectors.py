"""Reads for the reports and the exports: a study into arrays, or into export records.

``study_arrays`` costs a fixed number of queries whatever the size of the study; each
returns integer columns read straight into numpy arrays (on PostgreSQL as one binary
array per column), never model instances. ``export_chunks`` costs a fixed number of
queries per chunk of keys and holds one chunk at a time.
Labels are derived from patterns exactly as ``annotate.selectors`` derives them
(``reports.stats.labels.LABEL_OF_BITS`` for arrays, ``prefix_labels`` for records).
"""

from __future__ import annotations

import itertools
import json
import struct
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db import OperationalError, connection
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    ExpressionWrapper,
    F,
    FilteredRelation,
    IntegerField,
    ManyToManyField,
    Max,
    Min,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce

from annotate.models import (
    Annotation,
    GoldAnnotation,
    GoldPattern,
    Key,
    KeyFlag,
    Pattern,
    Study,
    TriggerPrefix,
)
from annotate.selectors import PatternView, prefix_labels

from .contract.records import ALWAYS, IF_SET, KEY, PATTERN, PREFIX
from .models import ExportJob
from .stats.arrays import GOLD_CODER, AnnotationSet, StudyArrays, empty_int
from .stats.labels import masks_from_ranks, n_words
from .stats.perturbation import PERTURBATIONS

EXPORT_CHUNK = 500
# An export record's key and prefixes are their columns under the fields' names, as the
# contract declares them (``reports.contract.records``; ``reports.imports`` reads them).
_PREFIX_COLUMNS = PREFIX.columns(written=ALWAYS)
_PREFIX_ALWAYS = PREFIX.column_fields(written=ALWAYS)
_N_PREFIX_ALWAYS = len(_PREFIX_ALWAYS)
# Written only where a prefix has them (a token that is part of a multi-byte character),
# so that a study without them exports as before.
EXPORT_PREFIX_FIELDS_IF_SET = PREFIX.column_fields(written=IF_SET)
# And every column of an annotation and of a pattern (its order is the list's order; its
# client_id, the browser's token for a retried write, is no data of the annotation).
EXPORT_ANNOTATION_FIELDS = ("note", "version", "created_at", "updated_at", "submitted_at")
EXPORT_PATTERN_FIELDS = tuple(f for f in PATTERN.column_fields() if f in PATTERN.additive)
# An annotator's pattern is always written by them (a gold pattern may be adopted).
PATTERN_SOURCE_WRITTEN = "written"


def export_time(value: Any) -> str | None:
    """A timestamp of the export: ISO 8601 in UTC (``2026-12-01T09:30:00.123456+00:00``)."""
    return None if value is None else value.astimezone(UTC).isoformat()


@dataclass(frozen=True)
class ReportFilter:
    """Which part of a study a report covers. ``None``: every annotator / layer."""

    annotators: tuple[str, ...] | None = None
    layers: tuple[int, ...] | None = None
    submitted_only: bool = True
    # Not a filter: the report's choice to count the gold as one more coder in agreement.
    gold_as_coder: bool = False


def _keys(study: Study, layers: Sequence[int] | None) -> QuerySet[Key]:
    keys = Key.objects.filter(study=study)
    if layers is not None:
        keys = keys.filter(layer__in=list(layers))
    return keys


def _annotations(study: Study, flt: ReportFilter) -> QuerySet[Annotation]:
    """The report's annotations (never a check annotation), and the check annotations of
    the same annotators and layers (submitted ones only, whatever the filter says)."""
    rows = Annotation.objects.filter(key__study=study)
    if flt.layers is not None:
        rows = rows.filter(key__layer__in=list(flt.layers))
    if flt.annotators is not None:
        rows = rows.filter(annotator__username__in=list(flt.annotators))
    own = Q(is_check=False)
    if flt.submitted_only:
        own &= Q(status=Annotation.Status.SUBMITTED)
    return rows.filter(own | Q(is_check=True, status=Annotation.Status.SUBMITTED))


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
    """The study as arrays for ``reports.stats``: its annotations (never a check
    annotation), and apart the check annotations and the keys' submitted gold. Seven
    queries whatever its size, two more where it has gold (one more per kind of pattern
    where a key's prefix ids are not in rank order, see ``_pattern_masks``)."""
    flt = flt or ReportFilter()
    keys = _keys(study, flt.layers)
    # The value's argmax id comes out of the JSON in SQL, and perturbation rows only for
    # keys that have one: decoding 65k JSON documents in Python would cost a second. The
    # rank-1 prefix's tokens come with the key (one index look-up per key).
    key_rows = _int_rows(
        keys.annotate(
            top1=FilteredRelation("prefixes", condition=Q(prefixes__rank=1)),
            done=FilteredRelation("gold", condition=Q(gold__status=_GOLD_SUBMITTED)),
        )
        .order_by("id")
        .values_list(
            "id",
            "layer",
            "index",
            Coalesce(Cast(KT("value_top_token_ids__0"), IntegerField()), Value(-1)),
            Coalesce("top1__trigger_token_id", Value(-1)),
            Coalesce("top1__next_token_id", Value(-1)),
            # The key's submitted gold annotation, if any (the gold source:
            # docs/annotation.md, "Review and gold").
            Coalesce("done__id", Value(-1)),
        ),
        7,
    )
    n_keys = key_rows.shape[0]
    key_id, key_layer, key_index, value_top_id, top1_trigger, top1_next, gold_id = (
        key_rows[:, i].copy() for i in range(7)
    )
    pert = np.full((n_keys, len(PERTURBATIONS)), np.nan)
    for pk, p in keys.exclude(perturbation={}).values_list("id", "perturbation"):
        k = int(_positions(np.asarray([pk]), key_id)[0])
        for c, name in enumerate(PERTURBATIONS):
            value = p.get(name) if isinstance(p, dict) else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                pert[k, c] = float(value)

    shape = _prefix_shape(keys, key_id)
    ann = _int_rows(
        _annotations(study, flt)
        .order_by("id")
        .values_list(
            "id",
            "key_id",
            "annotator_id",
            Case(When(is_check=True, then=Value(1)), default=Value(0), output_field=IntegerField()),
        ),
        4,
    )
    users = dict(
        get_user_model()
        .objects.filter(pk__in=np.unique(ann[:, 2]).tolist())
        .values_list("id", "username")
    )
    ann_key = _positions(ann[:, 1], key_id)
    # One read of the patterns for the report's annotations and the checks together.
    all_pat_ann, all_pat_kind, all_pat_mask = _pattern_masks(ann[:, 0], ann_key, shape)
    is_check = ann[:, 3] == 1
    own, checks = (
        _annotation_set(ann, ann_key, users, keep, all_pat_ann, all_pat_kind, all_pat_mask)
        for keep in (~is_check, is_check)
    )

    # The submitted gold annotations, by id: one more read of patterns (none without gold).
    has_gold = np.flatnonzero(gold_id >= 0)
    gold_order = has_gold[np.argsort(gold_id[has_gold], kind="stable")]
    gold_pat_ann, gold_pat_kind, gold_pat_mask = _pattern_masks(
        gold_id[gold_order], gold_order, shape, _GOLD_PATTERNS
    )
    gold = AnnotationSet(
        coders=(GOLD_CODER,),
        ann_key=gold_order.astype(np.int64),
        ann_coder=np.zeros(len(gold_order), dtype=np.int64),
        pat_ann=gold_pat_ann,
        pat_kind=gold_pat_kind,
        pat_mask=gold_pat_mask.reshape(-1, n_words(shape.exists.shape[1])),
    )

    return StudyArrays(
        layers=np.unique(key_layer),
        key_layer=key_layer,
        key_index=key_index,
        prefix_exists=shape.exists,
        coders=own.coders,
        ann_key=own.ann_key,
        ann_coder=own.ann_coder,
        pat_ann=own.pat_ann,
        pat_kind=own.pat_kind,
        pat_mask=own.pat_mask,
        value_top_id=value_top_id,
        top1_next_id=top1_next,
        top1_trigger_id=top1_trigger,
        vocab_size=int(study.vocab_size),
        perturbation=pert,
        gold=gold,
        checks=checks,
    )


_GOLD_SUBMITTED = GoldAnnotation.Status.SUBMITTED


def _annotation_set(
    ann: np.ndarray,
    ann_key: np.ndarray,
    users: dict[int, str],
    keep: np.ndarray,
    pat_ann: np.ndarray,
    pat_kind: np.ndarray,
    pat_mask: np.ndarray,
) -> AnnotationSet:
    """The annotations ``keep`` (a mask of ``ann``'s rows) with their patterns; coders are
    their annotators, by username."""
    rows = np.flatnonzero(keep)
    user_ids = ann[rows, 2]
    present = np.unique(user_ids)
    coders = tuple(sorted(users[int(u)] for u in present))
    coder_of_user = np.zeros(int(present.max()) + 1 if present.size else 0, dtype=np.int64)
    for user_id in present.tolist():
        coder_of_user[user_id] = coders.index(users[user_id])
    position = np.full(len(ann), -1, dtype=np.int64)
    position[rows] = np.arange(len(rows))
    mine = keep[pat_ann] if pat_ann.size else np.zeros(0, dtype=bool)
    return AnnotationSet(
        coders=coders,
        ann_key=ann_key[rows],
        ann_coder=coder_of_user[user_ids],
        pat_ann=position[pat_ann[mine]],
        pat_kind=pat_kind[mine],
        pat_mask=pat_mask[mine],
    )


# --- reading integer rows ---------------------------------------------------------------


def _int_rows(query: QuerySet[Any] | str, n_cols: int, params: Sequence[Any] = ()) -> np.ndarray:
    """[N, n_cols] int64: the rows of a query (a ``values_list`` queryset, or SQL and its
    parameters) whose columns are integers, none NULL, ordered by the first column.

    On PostgreSQL the server folds each column into one array and sends them in binary,
    which numpy reads whole: no Python object per row or value (688k patterns × 6
    columns cost ~1.2 s of Python through a cursor or a COPY, ~0.05 s so)."""
    if isinstance(query, str):
        sql, params = query, tuple(params)
    else:
        sql, params = query.query.sql_with_params()
    if connection.vendor == "postgresql":
        rows = _pg_int_rows(sql, params, n_cols)
    else:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            flat = itertools.chain.from_iterable(cursor.fetchall())
            rows = np.fromiter(flat, dtype=np.int64).reshape(-1, n_cols)
    first = rows[:, 0]
    if first.size and (first[1:] < first[:-1]).any():
        rows = rows[np.argsort(first, kind="stable")]
    return rows


def _pg_int_rows(sql: str, params: Sequence[Any], n_cols: int) -> np.ndarray:
    import psycopg

    names = ", ".join(f"c{i}" for i in range(n_cols))
    arrays = ", ".join(f"array_send(array_agg(CAST(c{i} AS BIGINT)))" for i in range(n_cols))
    # One aggregate node fills every column's array from the same rows in the same order.
    folded = f"SELECT {arrays} FROM ({sql}) AS q({names})"
    connection.ensure_connection()
    start = time.monotonic()
    # Django's cursors bind parameters client-side, and those cannot take binary results.
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(folded, params, binary=True)
        found = cursor.fetchone()
    if connection.queries_logged:  # the debug cursor does not see this one
        connection.queries_log.append({"sql": folded, "time": f"{time.monotonic() - start:.3f}"})
    if found is None or found[0] is None:  # no rows
        return np.zeros((0, n_cols), dtype=np.int64)
    return np.stack([_parse_int8_array(data) for data in found], axis=1)


def _parse_int8_array(data: bytes) -> np.ndarray:
    """[N] int64 from PostgreSQL's binary form of a 1-D bigint array (``array_send``): ndim,
    a has-NULL flag, the element type, its size and lower bound, then a (length,
    big-endian value) per element."""
    ndim, has_null, _, size = struct.unpack_from(">iiii", data, 0)
    if ndim != 1 or has_null:
        raise ValueError("not a 1-D bigint array without NULL")
    element = np.dtype([("length", ">i4"), ("value", ">i8")])
    items = np.frombuffer(data, dtype=element, count=size, offset=20)
    if (items["length"] != 8).any():
        raise ValueError("not bigint elements")
    return items["value"].astype(np.int64)


# --- prefixes and patterns --------------------------------------------------------------


@dataclass(frozen=True)
class _PrefixShape:
    """Per key (positions of ``study_arrays``' keys): which ranks it has, and whether its
    prefix ids are ``offset + rank`` for ranks 1..n (n ≤ 64)."""

    exists: np.ndarray  # [K, R] bool
    n: np.ndarray  # [K] int64, the number of prefixes
    offset: np.ndarray  # [K] int64, id − rank of the key's prefixes (where dense)
    dense: np.ndarray  # [K] bool: ranks 1..n with ids offset + 1..offset + n, n ≤ 64


def _prefix_shape(keys: QuerySet[Key], key_id: np.ndarray) -> _PrefixShape:
    """One aggregate row per key. Ranks are 1..n per key (the miner and the import make
    them so); only a study that breaks the rule pays for reading every (key, rank)."""
    n_keys = key_id.shape[0]
    prefixes = TriggerPrefix.objects.filter(key__in=keys)
    offset = ExpressionWrapper(F("id") - F("rank"), output_field=BigIntegerField())
    rows = _int_rows(
        prefixes.order_by()
        .values("key_id")
        .annotate(n=Count("id"), top=Max("rank"), lo=Min(offset), hi=Max(offset))
        .values_list("key_id", "n", "top", "lo", "hi"),
        5,
    )
    per_key = np.zeros((n_keys, 4), dtype=np.int64)
    per_key[_positions(rows[:, 0], key_id)] = rows[:, 1:]
    n, top, lo, hi = (per_key[:, i] for i in range(4))
    n_ranks = int(top.max()) if n_keys else 0
    if np.array_equal(n, top):
        exists = np.arange(n_ranks)[None, :] < n[:, None]
    else:
        exists = np.zeros((n_keys, n_ranks), dtype=bool)
        pairs = _int_rows(prefixes.values_list("key_id", "rank"), 2)
        exists[_positions(pairs[:, 0], key_id), pairs[:, 1] - 1] = True
    dense = (n > 0) & (n == top) & (lo == hi) & (n <= 64)
    return _PrefixShape(exists=exists, n=n, offset=lo, dense=dense)


# The patterns of an annotation id range (the report's annotations are picked out of it
# by id: cheaper than a join with the annotations and keys), in no order (``_int_rows``
# sorts them by id; SQLite reads them in id order anyway).
_PATTERNS_SQL = """
SELECT p.id, p.{owner}, CASE p.kind WHEN 'shallow' THEN 1 WHEN 'semantic' THEN 2 ELSE 4 END
FROM {pattern} p
WHERE {annotation} BETWEEN %s AND %s
"""

# Per pattern of an id range: its prefix ids folded into one 64-bit word (bit id mod 64),
# with the smallest and the largest. Where a key's prefix ids are ``offset + rank``
# (dense), a pattern whose ids all lie in its key's range covers the ranks ``id −
# offset``: its rank bit set is that word rotated by (offset + 1) mod 64. So the pattern
# → prefix table is read alone, in pattern order, without a join with the 1.6M prefixes
# for their ranks nor one with the patterns (the two joins cost ~4 s on 65,536 keys).
_WORDS_SQL = """
SELECT pp.{pid}, MIN(pp.{tpid}), MAX(pp.{tpid}), {word}
FROM {through} pp
WHERE pp.{pid} BETWEEN %s AND %s
GROUP BY pp.{pid}
"""

# The covered ranks of the patterns that the fast reading does not apply to.
_RANKS_SQL = """
SELECT pp.{pid}, tp.{rank}
FROM {through} pp
JOIN {prefix} tp ON tp.id = pp.{tpid}
WHERE pp.{pid} IN ({ids})
"""


@dataclass(frozen=True)
class _PatternTables:
    """Where the patterns of an annotation live: annotators' or gold."""

    pattern: type[Pattern] | type[GoldPattern]
    owner: str  # the pattern's column naming its annotation


_ANNOTATOR_PATTERNS = _PatternTables(pattern=Pattern, owner="annotation_id")
_GOLD_PATTERNS = _PatternTables(pattern=GoldPattern, owner="gold_id")


def _pattern_masks(
    ann_id: np.ndarray,
    ann_key: np.ndarray,
    shape: _PrefixShape,
    tables: _PatternTables = _ANNOTATOR_PATTERNS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pattern of the annotations ``ann_id`` (ascending), by pattern id: position of
    its annotation, kind bit, and covered ranks as a bit set [P, W]. Two queries (the
    patterns; their prefix ids as words), and a third for the patterns that the words do
    not settle (a key whose prefix ids are not ``offset + rank``, a key of more than 64
    prefixes, a pattern with a prefix outside its key): their (pattern, rank) rows."""
    m2m = tables.pattern._meta.get_field("prefixes")
    assert isinstance(m2m, ManyToManyField)
    through_table = tables.pattern.prefixes.through._meta.db_table
    quote = connection.ops.quote_name
    pid, tpid = quote(m2m.m2m_column_name()), quote(m2m.m2m_reverse_name())
    postgres = connection.vendor == "postgresql"
    n_ranks = shape.exists.shape[1]
    if not len(ann_id):
        return empty_int(), np.zeros(0, dtype=np.uint8), np.zeros((0, n_words(n_ranks)), np.uint64)
    patterns = _int_rows(
        _PATTERNS_SQL.format(
            pattern=quote(tables.pattern._meta.db_table),
            owner=quote(tables.owner),
            # SQLite: scan the patterns in id order rather than by the annotation index.
            annotation=f"p.{quote(tables.owner)}" if postgres else f"+p.{quote(tables.owner)}",
        ),
        3,
        (int(ann_id[0]), int(ann_id[-1])),
    )
    patterns = patterns[_members(patterns[:, 1], ann_id)]
    pat_id = patterns[:, 0]
    pat_ann = _positions(patterns[:, 1], ann_id)
    kind = patterns[:, 2].astype(np.uint8)
    masks = np.zeros((len(pat_id), n_words(n_ranks)), dtype=np.uint64)
    if not len(pat_id):
        return pat_ann, kind, masks

    if postgres:
        word = "BIT_OR(CAST(1 AS BIGINT) << CAST(pp.triggerprefix_id & 63 AS INTEGER))"
    else:
        # Distinct bits add up to their OR. Bits that repeat (ids 64 apart: never in a
        # dense key's range) may overflow SQLite's SUM: then every pattern is read exactly.
        word = "SUM(1 << (pp.triggerprefix_id & 63))"
    bounds = (int(pat_id[0]), int(pat_id[-1]))
    try:
        words = _int_rows(
            _WORDS_SQL.format(word=word, through=quote(through_table), pid=pid, tpid=tpid),
            4,
            bounds,
        )
    except OperationalError:  # SQLite's "integer overflow"
        if postgres:
            raise
        fast = np.zeros(len(pat_id), dtype=bool)
    else:
        # Rows of patterns in the id range but outside the report (another study, a
        # draft, ...) are left out; patterns without a row cover nothing.
        words = words[_members(words[:, 0], pat_id)]
        at = _positions(words[:, 0], pat_id)
        key = ann_key[pat_ann[at]]
        first = shape.offset[key] + 1  # the id of the key's rank-1 prefix, where dense
        low, high = words[:, 1], words[:, 2]
        inside = shape.dense[key] & (low >= first) & (high < first + shape.n[key])
        turn = (first[inside] & 63).astype(np.uint64)
        bits = words[inside, 3].view(np.uint64)
        back = np.where(turn == 0, np.uint64(0), bits << ((np.uint64(64) - turn) & np.uint64(63)))
        masks[at[inside], 0] = (bits >> turn) | back
        fast = np.ones(len(pat_id), dtype=bool)
        fast[at[~inside]] = False
    slow = np.flatnonzero(~fast)
    if slow.size:
        ids = pat_id[slow].tolist()
        if postgres:
            placeholder, param = "SELECT unnest(CAST(%s AS BIGINT[]))", ids
        else:
            placeholder, param = "SELECT value FROM json_each(%s)", json.dumps(ids)
        sql = _RANKS_SQL.format(
            rank=quote("rank"),
            through=quote(through_table),
            pid=pid,
            tpid=tpid,
            prefix=quote(TriggerPrefix._meta.db_table),
            ids=placeholder,
        )
        cov = _int_rows(sql, 2, (param,))
        cov = cov[(cov[:, 1] >= 1) & (cov[:, 1] <= masks.shape[1] * 64)]
        masks[slow] = masks_from_ranks(
            len(slow), _positions(cov[:, 0], pat_id[slow]), cov[:, 1], n_ranks
        )
    return pat_ann, kind, masks


def _members(ids: np.ndarray, sorted_ids: np.ndarray) -> np.ndarray:
    """[N] bool: which of ``ids`` are in the ascending ``sorted_ids``."""
    if not len(sorted_ids):
        return np.zeros(len(ids), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return sorted_ids[at] == ids


# --- exports ----------------------------------------------------------------------------


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
    at a time: nine queries per chunk (keys, prefixes, annotations, patterns, covered
    ranks; golds, their patterns and ranks; flags), and only one chunk in memory. Keys are
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
            .values_list("key_id", *_PREFIX_COLUMNS, *PREFIX.columns(written=IF_SET))
        ):
            prefixes[key_id].append(
                {
                    **dict(zip(_PREFIX_ALWAYS, values[:_N_PREFIX_ALWAYS], strict=True)),
                    **{
                        name: value
                        for name, value in zip(
                            EXPORT_PREFIX_FIELDS_IF_SET, values[_N_PREFIX_ALWAYS:], strict=True
                        )
                        if value
                    },
                }
            )
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
        for pattern_id, annotation_id, description, kind, order, *times in (
            Pattern.objects.filter(annotation__key_id__in=ids)
            .order_by("annotation_id", "order", "id")
            .values_list(
                "id", "annotation_id", "description", "kind", "order", *EXPORT_PATTERN_FIELDS
            )
        ):
            pattern_place[pattern_id] = (*owner_of[annotation_id], len(patterns[annotation_id]))
            patterns[annotation_id].append(
                _export_pattern_view(pattern_id, description, kind, order, covered)
            )
            pattern_times[annotation_id].append(
                {
                    **{
                        name: export_time(t)
                        for name, t in zip(EXPORT_PATTERN_FIELDS, times, strict=True)
                    },
                    "source": PATTERN_SOURCE_WRITTEN,
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
                "annotations": by_key[key_id],
                "gold": golds.get(key_id),
                "flags": flags.get(key_id, []),
            }
            for key_id, *values in rows
        ]
        if len(rows) < chunk_size:
            return


def export_job_get(*, job_id: int) -> ExportJob | None:
    return ExportJob.objects.select_related("study").filter(pk=job_id).first()
