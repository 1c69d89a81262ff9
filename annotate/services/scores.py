"""The held-out scores of patterns, gold patterns and suggestions (docs/evidence.md,
"Scores"): computed by a Celery job (``SCORE_TASK``, ``annotate.tasks``) after mining,
after an import and after a pattern changes, and by ``manage.py score``.

``scores_compute`` reads what it scores in a few queries whatever the number of rows,
embeds each distinct text once (descriptions, the held-out examples' texts, and the
prefixes of a target without a description, whose centroid stands for it), scores with
``annotate.evidence.scores`` and writes each table in one statement per thousand rows.
A row that changed while the job ran (its ``updated_at`` moved) is not written: the
change cleared its scores and queued a job of its own.

The job runs on the default queue ``celery``, on CPU: MiniLM embeds the demo's 60 keys
in seconds there, and the ``gpu`` workers (one process per device) stay free for mining
(docs/evidence.md, "When scores are computed").
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from celery import current_app
from django.db import transaction
from django.db.models import Model, QuerySet

from annotate.models import GoldPattern, Key, KeyExample, Pattern, Study, Suggestion

SCORE_TASK = "annotate.score_patterns"
WRITE_BATCH = 1000
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Table:
    """Where one kind of target lives: its model, the path from it to its key, and its
    link table's column naming it."""

    model: type[Pattern] | type[GoldPattern] | type[Suggestion]
    key_path: str  # from the row to its key's id
    link_column: str
    stamped: bool  # has ``updated_at``


_TABLES = {
    "patterns": _Table(Pattern, "annotation__key_id", "pattern_id", True),
    "gold_patterns": _Table(GoldPattern, "gold__key_id", "goldpattern_id", True),
    "suggestions": _Table(Suggestion, "key_id", "suggestion_id", False),
}


@dataclass
class _Targets:
    """The rows to score, of every table, in one order."""

    table: list[str]
    ids: list[int]
    key_ids: list[int]
    descriptions: list[str]
    rules: list[dict[str, str] | None]
    stamps: list[Any]


def _study_filter(table: _Table, study_id: int) -> dict[str, int]:
    return {f"{table.key_path.removesuffix('_id')}__study_id": study_id}


def _load_targets(
    study_id: int, wanted: dict[str, Sequence[int] | None], missing_only: bool
) -> _Targets:
    found = _Targets([], [], [], [], [], [])
    for name, ids in wanted.items():
        table = _TABLES[name]
        rows: QuerySet[Any] = table.model.objects.filter(**_study_filter(table, study_id))
        if ids is not None:
            rows = rows.filter(pk__in=list(ids))
        if missing_only:
            rows = rows.filter(scores={})
        stamp = "updated_at" if table.stamped else "id"
        for pk, key_id, description, rule, stamp_value in rows.order_by("pk").values_list(
            "pk", table.key_path, "description", "rule", stamp
        ):
            found.table.append(name)
            found.ids.append(pk)
            found.key_ids.append(key_id)
            found.descriptions.append(description.strip())
            found.rules.append(rule if isinstance(rule, dict) else None)
            found.stamps.append(stamp_value if table.stamped else None)
    return found


def _prefix_texts(targets: _Targets, without: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """For the targets ``without`` a description: (target position per prefix, the
    prefix's text), one query per table."""
    positions: list[int] = []
    texts: list[str] = []
    for name, table in _TABLES.items():
        place = {
            targets.ids[t]: t for t in without.tolist() if targets.table[t] == name
        }  # id → position
        if not place:
            continue
        link: Any = table.model.prefixes.through
        for owner, text in link.objects.filter(
            **{f"{table.link_column}__in": list(place)}
        ).values_list(table.link_column, "triggerprefix__text"):
            positions.append(place[owner])
            texts.append(text)
    return np.asarray(positions, dtype=np.int64), texts


def _embedder(texts: Iterable[str]) -> tuple[dict[str, int], np.ndarray]:
    """Each distinct text embedded once: (text → row, [n, D] unit rows)."""
    from annotate.evidence.embedding import embed

    distinct = sorted(set(texts))
    return {text: row for row, text in enumerate(distinct)}, embed(distinct)


def scores_compute(
    *,
    study_id: int,
    pattern_ids: Sequence[int] | None = None,
    gold_pattern_ids: Sequence[int] | None = None,
    suggestion_ids: Sequence[int] | None = None,
    missing_only: bool = True,
) -> dict[str, int]:
    """Score the study's annotators' patterns, gold patterns and suggestions and store
    their ``scores`` (docs/evidence.md, "Scores"); the number written per table.

    With no ids, every row of the three tables; with ids for some tables, those rows only
    (a table given no ids is left alone). ``missing_only``: only rows not scored yet."""
    from annotate.evidence.scores import (
        SCORE_FIELDS,
        HeldOut,
        group_centroids,
        score_dicts,
        shuffled_partners,
    )

    study = Study.objects.get(pk=study_id)
    given: dict[str, Sequence[int] | None] = {
        "patterns": pattern_ids,
        "gold_patterns": gold_pattern_ids,
        "suggestions": suggestion_ids,
    }
    wanted: dict[str, Sequence[int] | None]
    if any(ids is not None for ids in given.values()):
        wanted = {name: ids for name, ids in given.items() if ids is not None}
    else:
        wanted = dict.fromkeys(_TABLES)
    written = dict.fromkeys(_TABLES, 0)
    if not KeyExample.objects.filter(
        key__study_id=study.pk, kind__in=KeyExample.HELD_OUT_KINDS
    ).exists():
        # No held-out examples anywhere in the study: every score is undefined (null),
        # whatever the row. One UPDATE a table: an import of a large older study queues
        # this job for all of its patterns (690,000 in the API bench's; one UPDATE of
        # them takes 8 s in PostgreSQL), rather than reading each row and writing it back.
        undefined = dict.fromkeys(SCORE_FIELDS)
        for name, ids in wanted.items():
            table = _TABLES[name]
            query: QuerySet[Any] = table.model.objects.filter(**_study_filter(table, study.pk))
            if ids is not None:
                query = query.filter(pk__in=list(ids))
            if missing_only:
                query = query.filter(scores={})
            written[name] = query.update(scores=undefined)
        return written
    targets = _load_targets(study.pk, wanted, missing_only)
    if not targets.ids:
        return written

    key_rows = np.asarray(
        list(Key.objects.filter(study=study).order_by("id").values_list("id", "layer", "index")),
        dtype=np.int64,
    ).reshape(-1, 3)
    key_ids = key_rows[:, 0]
    partner = shuffled_partners(key_rows[:, 1], key_rows[:, 2], study.seed)
    own_key = np.searchsorted(key_ids, np.asarray(targets.key_ids, dtype=np.int64))
    needed = np.unique(np.concatenate([own_key, partner[own_key]]))
    needed = needed[needed >= 0]
    examples = list(
        KeyExample.objects.filter(
            key_id__in=key_ids[needed].tolist(), kind__in=KeyExample.HELD_OUT_KINDS
        ).values_list("key_id", "kind", "text", "trigger_token")
    )
    if not examples:
        # No held-out examples on either key of any target: every score is undefined
        # (null), and the embedder is not loaded for nothing (every pattern save of a
        # study without them, an import of an older file, queues this job).
        nulls = [dict.fromkeys(SCORE_FIELDS) for _ in targets.ids]
        for name in wanted:
            written[name] = _write(name, targets, nulls)
        return written
    without = np.flatnonzero([not d for d in targets.descriptions])
    centroid_of, prefix_texts = _prefix_texts(targets, without)

    ex_texts = [text for _, _, text, _ in examples]
    row_of, vectors = _embedder([*ex_texts, *(d for d in targets.descriptions if d), *prefix_texts])
    dim = vectors.shape[1]

    def rows(texts: Sequence[str]) -> np.ndarray:
        return np.asarray([row_of[t] for t in texts], dtype=np.int64)

    held = HeldOut(
        key=np.searchsorted(key_ids, np.asarray([e[0] for e in examples], dtype=np.int64)),
        positive=np.asarray([e[1] == KeyExample.Kind.HELDOUT for e in examples], dtype=bool),
        vectors=vectors[rows(ex_texts)].reshape(-1, dim),
        texts=ex_texts,
        triggers=[e[3] for e in examples],
        n_keys=len(key_ids),
    )
    queries = np.zeros((len(targets.ids), dim), dtype=np.float32)
    described = np.flatnonzero([bool(d) for d in targets.descriptions])
    queries[described] = vectors[rows([targets.descriptions[t] for t in described.tolist()])]
    if len(centroid_of):
        queries[without] = group_centroids(vectors[rows(prefix_texts)], centroid_of, len(queries))[
            without
        ]
    scores = score_dicts(targets.rules, queries, own_key, partner, held)
    for name in wanted:
        written[name] = _write(name, targets, scores)
    return written


@transaction.atomic
def _write(name: str, targets: _Targets, scores: list[dict[str, float | None]]) -> int:
    """Store the scores of table ``name``'s targets that did not change meanwhile: their
    rows locked and their ``updated_at`` read again, then one UPDATE per batch."""
    table = _TABLES[name]
    mine = [t for t, owner in enumerate(targets.table) if owner == name]
    if not mine:
        return 0
    ids = [targets.ids[t] for t in mine]
    manager: Any = table.model.objects
    locked = manager.select_for_update().filter(pk__in=ids).order_by("pk")
    if table.stamped:
        now = dict(locked.values_list("pk", "updated_at"))
    else:
        now = dict.fromkeys(locked.values_list("pk", flat=True))
    rows: list[Model] = [
        table.model(pk=targets.ids[t], scores=scores[t])
        for t in mine
        if targets.ids[t] in now and now[targets.ids[t]] == targets.stamps[t]
    ]
    manager.bulk_update(rows, ["scores"], batch_size=WRITE_BATCH)
    return len(rows)


def scores_missing_count(*, study: Study) -> dict[str, int]:
    """Per table, the study's rows not scored yet."""
    return {
        name: table.model.objects.filter(**_study_filter(table, study.pk), scores={}).count()
        for name, table in _TABLES.items()
    }


def scores_studies_of(
    *,
    pattern_ids: Sequence[int] | None = None,
    gold_pattern_ids: Sequence[int] | None = None,
    suggestion_ids: Sequence[int] | None = None,
) -> list[int]:
    """The studies the given rows belong to (for a job queued with ids alone)."""
    studies: set[int] = set()
    for name, ids in (
        ("patterns", pattern_ids),
        ("gold_patterns", gold_pattern_ids),
        ("suggestions", suggestion_ids),
    ):
        if ids:
            table = _TABLES[name]
            path = next(iter(_study_filter(table, 0)))
            rows = table.model.objects.filter(pk__in=list(ids))
            studies.update(rows.values_list(path, flat=True))
    return sorted(studies)


# --- queueing the job -------------------------------------------------------------------


def scores_queue(
    *,
    study_id: int | None = None,
    pattern_ids: Sequence[int] | None = None,
    gold_pattern_ids: Sequence[int] | None = None,
    suggestion_ids: Sequence[int] | None = None,
    missing_only: bool = True,
) -> None:
    """Send the scoring job once the caller's transaction commits (at once outside one).
    ``study_id`` None: the studies of the given rows. A broker that cannot be reached is
    logged, not raised: the write that asked for scores stands, and ``manage.py score``
    computes what is missing."""
    kwargs = {
        "study_id": study_id,
        "pattern_ids": list(pattern_ids) if pattern_ids is not None else None,
        "gold_pattern_ids": list(gold_pattern_ids) if gold_pattern_ids is not None else None,
        "suggestion_ids": list(suggestion_ids) if suggestion_ids is not None else None,
        "missing_only": missing_only,
    }
    transaction.on_commit(functools.partial(_send, kwargs))


def _send(kwargs: dict[str, Any]) -> None:
    try:
        current_app.send_task(SCORE_TASK, kwargs=kwargs, retry=False)
    except Exception:  # the broker's errors vary by transport
        log.warning("could not queue the scoring job %s", kwargs, exc_info=True)


def scores_clear_and_queue(pattern: Pattern | GoldPattern) -> None:
    """A pattern changed (or was made): queue its scoring on commit. Its ``scores`` must be
    cleared by the caller's save (``scores_cleared``), so that nothing stale is shown.

    The job scores every row of the pattern's study that is missing its scores, this one
    among them (``missing_only``): twenty annotators saving patterns send a job a save,
    and the first job to run takes all that are pending, so that the rest find nothing
    to do instead of each embedding its key's examples again behind an export."""
    if isinstance(pattern, GoldPattern):
        scores_queue(gold_pattern_ids=[pattern.pk], missing_only=True)
    else:
        scores_queue(pattern_ids=[pattern.pk], missing_only=True)


def scores_cleared(pattern: Pattern | GoldPattern) -> list[str]:
    """Clear a pattern's scores in memory; the fields its save must write."""
    pattern.scores = {}
    return ["scores"]
