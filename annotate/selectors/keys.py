"""Reads of the annotator's keys: their assignments, the keys of one, the next key, a key
with its prefixes and the annotator's own work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from django.db.models import (
    BooleanField,
    CharField,
    Count,
    Exists,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from ..models import (
    Annotation,
    Assignment,
    AssignmentKey,
    Guideline,
    GuidelineAcknowledgement,
    Key,
    KeyExample,
    KeyFlag,
    Pattern,
    Study,
    TriggerPrefix,
)
from ..permissions import User


def _assigned_to(user: User) -> QuerySet[AssignmentKey]:
    # An archived study (an import, read-only) is out of every annotator's sight.
    return AssignmentKey.objects.filter(
        assignment__annotator_id=user.pk, key__study__archived=False
    )


def assignment_list_for_annotator(*, user: User) -> QuerySet[Assignment]:
    """The user's assignments (of studies that are not archived) with their number of
    keys and how many they submitted, check keys (``annotate.services.check_keys``) counted
    as any key.

    One query whatever the number of assignments (two subqueries, no N+1).
    """
    submitted = (
        AssignmentKey.objects.filter(
            assignment=OuterRef("pk"),
            key__annotations__annotator=OuterRef("annotator"),
            key__annotations__status=Annotation.Status.SUBMITTED,
        )
        .order_by()
        .values("assignment")
        .annotate(n=Count("id"))
        .values("n")
    )
    total = (
        AssignmentKey.objects.filter(assignment=OuterRef("pk"))
        .order_by()
        .values("assignment")
        .annotate(n=Count("id"))
        .values("n")
    )
    return (
        Assignment.objects.filter(annotator_id=user.pk, batch__study__archived=False)
        .select_related("batch__study")
        .annotate(
            keys_total=Coalesce(Subquery(total, output_field=IntegerField()), Value(0)),
            keys_submitted=Coalesce(Subquery(submitted, output_field=IntegerField()), Value(0)),
        )
        .order_by("created_at", "id")
    )


def assignment_get_for_annotator(*, assignment_id: int, user: User) -> Assignment | None:
    return Assignment.objects.filter(
        pk=assignment_id, annotator_id=user.pk, batch__study__archived=False
    ).first()


def key_list_for_assignment(*, assignment: Assignment) -> QuerySet[Key]:
    """The assignment's keys, its check keys among them, in (layer, index) order with the
    annotator's own status (None: not opened, draft, submitted), version and number of
    patterns. One query."""
    mine = Annotation.objects.filter(key=OuterRef("pk"), annotator_id=assignment.annotator_id)
    n_patterns = (
        Pattern.objects.filter(
            annotation__key=OuterRef("pk"), annotation__annotator_id=assignment.annotator_id
        )
        .order_by()
        .values("annotation")
        .annotate(n=Count("id"))
        .values("n")
    )
    return (
        Key.objects.filter(
            Exists(AssignmentKey.objects.filter(assignment=assignment, key=OuterRef("pk")))
        )
        .annotate(
            my_status=Subquery(mine.values("status")[:1]),
            my_version=Subquery(mine.values("version")[:1], output_field=IntegerField()),
            my_patterns=Coalesce(Subquery(n_patterns, output_field=IntegerField()), Value(0)),
        )
        .order_by("layer", "index")
    )


def key_count_for_assignment(*, assignment: Assignment) -> int:
    """How many keys the assignment has (one per row: a key is in it at most once)."""
    return AssignmentKey.objects.filter(assignment=assignment).count()


@dataclass(frozen=True)
class NextKey:
    key_id: int
    assignment_id: int


def key_next_for_annotator(*, user: User, assignment_id: int | None = None) -> NextKey | None:
    """The annotator's next unfinished (not submitted) key: assignments oldest first, then
    keys in (layer, index) order, check keys among them as any key. Deterministic, one
    query."""
    submitted = Annotation.objects.filter(
        key_id=OuterRef("key_id"), annotator_id=user.pk, status=Annotation.Status.SUBMITTED
    )
    rows = _assigned_to(user).exclude(Exists(submitted))
    if assignment_id is not None:
        rows = rows.filter(assignment_id=assignment_id)
    row = (
        rows.order_by("assignment__created_at", "assignment_id", "key__layer", "key__index")
        .values_list("key_id", "assignment_id")
        .first()
    )
    if row is None:
        return None
    return NextKey(key_id=row[0], assignment_id=row[1])


def _assigned_key(*, key_id: int, user: User) -> QuerySet[Key]:
    # A join rather than Exists(): the ORM takes ~1 ms of CPU more to build the subquery
    # (measured), on every annotator request. A key in two of the user's assignments
    # comes twice; the callers take the first row. A check key (``annotate.services.check_keys``) is
    # a key of an assignment like any.
    return Key.objects.filter(
        _key_is_users(cast(int, user.pk)), pk=key_id, study__archived=False
    ).order_by()


# The per-key facts of the annotator's requests, as raw scalar SQL on the query of keys
# (standard SQL: PostgreSQL and SQLite). The ORM's Subquery/Exists cost ~1 ms of CPU each
# to build on every request (measured with bench/api_load.py: four of them on the key's
# read and two on every write took p95 from 77 to 110 ms at 20 annotators on 2 cores);
# these cost none and run as the same one query.
_KEY = Key._meta.db_table
_ASSIGNMENT = Assignment._meta.db_table
_ASSIGNMENT_KEY = AssignmentKey._meta.db_table
_GUIDELINE = Guideline._meta.db_table
_GUIDELINE_READ = GuidelineAcknowledgement._meta.db_table
_KEY_FLAG = KeyFlag._meta.db_table
_STUDY = Study._meta.db_table


def _shows_scores() -> RawSQL:
    """The key's study shows annotators the scores of their own patterns
    (``Study.show_scores``; docs/evidence.md, "Study settings")."""
    return RawSQL(
        f"(SELECT s.show_scores FROM {_STUDY} s WHERE s.id = {_KEY}.study_id)",
        (),
        output_field=BooleanField(),
    )


def _key_is_users(user_id: int) -> RawSQL:
    """The key is in one of the user's assignments (its check keys included)."""
    return RawSQL(
        f"EXISTS (SELECT 1 FROM {_ASSIGNMENT_KEY} ak"
        f" INNER JOIN {_ASSIGNMENT} a ON a.id = ak.assignment_id"
        f" WHERE ak.key_id = {_KEY}.id AND a.annotator_id = %s)",
        (user_id,),
        output_field=BooleanField(),
    )


def _my_assignment(user_id: int, preferred: int | None) -> RawSQL:
    """The user's own assignment that the key is worked in: ``preferred`` where it is one
    of theirs holding the key, else the first of theirs holding it (a check key is a key
    of an assignment like any); null where none. Someone else's assignment is never it."""
    return RawSQL(
        f"(SELECT a.id FROM {_ASSIGNMENT_KEY} ak"
        f" INNER JOIN {_ASSIGNMENT} a ON a.id = ak.assignment_id"
        f" WHERE ak.key_id = {_KEY}.id AND a.annotator_id = %s"
        f" ORDER BY CASE WHEN a.id = %s THEN 0 ELSE 1 END, a.id LIMIT 1)",
        (user_id, preferred or 0),
        output_field=IntegerField(),
    )


def _guideline_annotations(user: User) -> dict[str, RawSQL]:
    """On a query of keys: ``guideline_latest``, the latest version of the key's study's
    guidelines (None: it has none), and ``guideline_read``, the latest version of them
    that ``user`` acknowledged (None: none). Two scalar subqueries, no query of their own."""
    return {
        "guideline_latest": RawSQL(
            f"(SELECT MAX(g.version) FROM {_GUIDELINE} g WHERE g.study_id = {_KEY}.study_id)",
            (),
            output_field=IntegerField(),
        ),
        "guideline_read": RawSQL(
            f"(SELECT MAX(g.version) FROM {_GUIDELINE} g"
            f" INNER JOIN {_GUIDELINE_READ} r ON r.guideline_id = g.id"
            f" WHERE g.study_id = {_KEY}.study_id AND r.user_id = %s)",
            (cast(int, user.pk),),
            output_field=IntegerField(),
        ),
    }


def key_get_for_write(*, key_id: int, user: User) -> Key | None:
    """As ``key_get_for_annotator``, for a write: the key also carries ``guideline_latest``
    and ``guideline_read`` (``_guideline_annotations``). One query."""
    return (
        _assigned_key(key_id=key_id, user=user)
        .only("id", "study_id", "layer", "index")
        .annotate(show_scores=_shows_scores(), **_guideline_annotations(user))
        .first()
    )


def key_get_for_annotator(*, key_id: int, user: User) -> Key | None:
    """The key, only if it is in one of the user's assignments; None otherwise, whether or
    not the key exists. It carries ``show_scores`` (its study's setting: whether the
    user's patterns show their scores). One query."""
    return (
        _assigned_key(key_id=key_id, user=user)
        .only("id", "study_id", "layer", "index")
        .annotate(show_scores=_shows_scores())
        .first()
    )


def prefix_list_for_key(*, key: Key) -> list[TriggerPrefix]:
    """The key's prefixes in rank order, with only what a write names them by (``id``,
    ``key_id``, ``rank``). One query."""
    return list(
        TriggerPrefix.objects.filter(key_id=key.pk).only("id", "key_id", "rank").order_by("rank")
    )


# What the annotator's screen shows of a trigger prefix (the API's ``TriggerPrefix``).
KEY_DETAIL_PREFIX_FIELDS = (
    "rank",
    "coefficient",
    "text",
    "trigger_token",
    "next_token",
    "suffix",
    "sentence",
    "sentence_index",
    "position",
    "trigger_start",
    "trigger_end",
    "trigger_token_bytes",
    "next_token_bytes",
    # docs/evidence.md, "Per-token coefficients".
    "tokens",
    "token_coefficients",
)

# What it shows of a sample below the top (a ``KeyExample`` of a visible kind): a
# prefix's fields without ``rank``, and its kind and band.
KEY_SAMPLE_FIELDS = (
    "kind",
    "band",
    "band_low",
    "band_high",
    *(name for name in KEY_DETAIL_PREFIX_FIELDS if name != "rank"),
)


def sample_list_for_key(
    *, key_id: int, kinds: Sequence[str] = KeyExample.VISIBLE_KINDS
) -> list[dict[str, Any]]:
    """The key's stored examples of ``kinds`` (by default only those an annotator may
    see: ``band`` and ``random``, never the held-out ones), as plain dicts with ``rank``
    and ``KEY_SAMPLE_FIELDS``: by kind, bands 1 … 5, then in draw order. One query."""
    return list(
        KeyExample.objects.filter(key_id=key_id, kind__in=list(kinds))
        .order_by("kind", "band", "order")
        .values("rank", *KEY_SAMPLE_FIELDS)
    )


@dataclass(frozen=True)
class KeyDetail:
    key: Key  # with its study; only what the annotator's screen shows is loaded
    prefixes: list[dict[str, Any]]  # KEY_DETAIL_PREFIX_FIELDS of each prefix, rank order
    samples: list[dict[str, Any]]  # KEY_SAMPLE_FIELDS of each visible sample, in order
    flag: dict[str, str] | None  # the user's own flag on the key: {reason, note}


def key_detail_for_annotator(
    *, key_id: int, user: User, assignment_id: int | None = None
) -> KeyDetail | None:
    """The key as the annotator's screen shows it: its study, its prefixes in rank
    order and its visible samples (``sample_list_for_key``: never a held-out example) as
    plain dicts, and ``my_assignment_id`` (``_my_assignment``: ``assignment_id`` where it
    is one of the user's holding the key). None unless the key is in one of the user's
    assignments, whether or not it exists. Three queries.

    Plain dicts rather than model instances: this is the annotator's most frequent read
    (docs/benchmarks.md budgets it), and 25 prefixes through model instances and DRF fields cost
    more CPU than the two queries themselves.
    """
    # One flag per annotator and key (a unique constraint): both are scalar.
    mine = f"FROM {_KEY_FLAG} f WHERE f.key_id = {_KEY}.id AND f.annotator_id = %s"
    key = (
        _assigned_key(key_id=key_id, user=user)
        .select_related("study")
        .annotate(
            my_flag_reason=RawSQL(f"(SELECT f.reason {mine})", (user.pk,), CharField()),
            my_flag_note=RawSQL(f"(SELECT f.note {mine})", (user.pk,), TextField()),
            my_assignment_id=_my_assignment(cast(int, user.pk), assignment_id),
        )
        .only(
            "id",
            "layer",
            "index",
            "value_top_tokens",
            "max_coefficient",
            "density",
            "histogram",
            "study__name",
            "study__is_causal",
            "study__show_value_tokens",
            "study__suggestions_enabled",
            "study__show_scores",
        )
        .annotate(**_guideline_annotations(user))
        .first()
    )
    if key is None:
        return None
    prefixes = list(
        TriggerPrefix.objects.filter(key_id=key_id)
        .order_by("rank")
        .values(*KEY_DETAIL_PREFIX_FIELDS)
    )
    samples = [
        {name: sample[name] for name in KEY_SAMPLE_FIELDS}
        for sample in sample_list_for_key(key_id=key_id)
    ]
    reason = getattr(key, "my_flag_reason", None)
    flag = None if reason is None else {"reason": reason, "note": key.my_flag_note}
    return KeyDetail(key=key, prefixes=prefixes, samples=samples, flag=flag)
