"""A study loaded into ``reports.stats.arrays.StudyArrays`` for the report: a few queries
of integer columns (COPY on PostgreSQL), the patterns' covered ranks as bit masks."""

from __future__ import annotations

import itertools
import json
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass
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

from annotate.labels import kind_bit_sql
from annotate.models import (
    GoldAnnotation,
    GoldPattern,
    Key,
    Pattern,
    Study,
    TriggerPrefix,
)

from ..stats.arrays import GOLD_CODER, AnnotationSet, StudyArrays, empty_int
from ..stats.labels import masks_from_ranks, n_words
from ..stats.perturbation import PERTURBATIONS
from .report_filter import ReportFilter, _annotations, _keys


def _positions(ids: np.ndarray, sorted_ids: np.ndarray) -> np.ndarray:
    """Positions of ``ids`` in the ascending ``sorted_ids`` (every id is there)."""
    return np.searchsorted(sorted_ids, ids)


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
SELECT p.id, p.{owner}, {kind_bit}
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
            kind_bit=kind_bit_sql("p.kind"),
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
