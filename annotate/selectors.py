"""Reads of the annotation domain.

Every selector that an API request calls costs a fixed number of queries, whatever the
number of keys, prefixes, patterns or annotators (``tests/api`` counts them).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import (
    BooleanField,
    CharField,
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Prefetch,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from .labels import LABEL_NOT_COVERED, prefix_labels
from .models import (
    Annotation,
    Assignment,
    AssignmentKey,
    Batch,
    GoldAnnotation,
    Guideline,
    GuidelineAcknowledgement,
    Key,
    KeyFlag,
    Pattern,
    Study,
    TriggerPrefix,
)
from .permissions import ANNOTATOR_GROUP
from .usernames import username_normal

User = AbstractBaseUser | AnonymousUser

# --- annotations ------------------------------------------------------------------------


@dataclass(frozen=True)
class PatternView:
    id: int
    description: str
    kind: str
    prefix_ranks: list[int]
    order: int
    client_id: Any


@dataclass(frozen=True)
class PrefixLabel:
    rank: int
    label: str


@dataclass(frozen=True)
class AnnotationView:
    """One annotation as the API shows it to its author: patterns and derived labels.
    ``id`` None: not started (``ANNOTATION_NEW``), no row yet."""

    id: int | None
    key_id: int
    status: str
    note: str
    version: int
    submitted_at: Any
    updated_at: Any
    patterns: list[PatternView]
    labels: list[PrefixLabel]
    active_seconds: float = 0.0


PATTERN_VIEW_FIELDS = ("id", "description", "kind", "order", "client_id")

PatternViewT = TypeVar("PatternViewT", bound=PatternView)


def fold_pattern_rows(
    rows: Iterable[Sequence[Any]],
    view: Callable[..., PatternViewT] = PatternView,  # type: ignore[assignment]
    extra: Sequence[str] = (),
) -> list[PatternViewT]:
    """Fold pattern rows into views, one a pattern in the rows' order, each with its
    covered ranks sorted.

    A row is ``PATTERN_VIEW_FIELDS``, then one column for each name in ``extra`` (passed
    to ``view`` by that name), then the covered prefix's rank (None: covers none): the
    patterns LEFT JOINed to their prefixes, a row per (pattern, prefix).
    """
    patterns: dict[Any, PatternViewT] = {}
    for row in rows:
        pk = row[0]
        pattern = patterns.get(pk)
        if pattern is None:
            _, description, kind, order, client_id, *more, _rank = row
            pattern = patterns[pk] = view(
                id=pk,
                description=description,
                kind=kind,
                prefix_ranks=[],
                order=order,
                client_id=client_id,
                **dict(zip(extra, more, strict=True)),
            )
        rank = row[-1]
        if rank is not None:
            pattern.prefix_ranks.append(rank)
    for pattern in patterns.values():
        pattern.prefix_ranks.sort()
    return list(patterns.values())


def pattern_list_for_annotation(*, annotation_id: int) -> list[PatternView]:
    """The annotation's patterns in (order, id) order, each with its covered ranks sorted.

    One query: the patterns LEFT JOINed to their prefixes, a row per (pattern, prefix).
    The services build the audit trail's before/after from it, the API its answers.
    """
    rows = (
        Pattern.objects.filter(annotation_id=annotation_id)
        .order_by("order", "id")
        .values_list(*PATTERN_VIEW_FIELDS, "prefixes__rank")
    )
    return fold_pattern_rows(rows)


def annotation_view(
    *,
    annotation: Annotation,
    ranks: Sequence[int] | None = None,
    patterns: Sequence[PatternView] | None = None,
) -> AnnotationView:
    """The annotation with its patterns and the label of every prefix of its key.

    At most two queries (the patterns with their ranks unless ``patterns`` is given, the
    key's ranks unless ``ranks`` is given) whatever the number of patterns and prefixes.
    """
    if ranks is None:
        ranks = list(
            TriggerPrefix.objects.filter(key_id=annotation.key_id)
            .order_by("rank")
            .values_list("rank", flat=True)
        )
    if patterns is None:
        patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    labels = prefix_labels(ranks=ranks, patterns=patterns)
    return AnnotationView(
        id=annotation.pk,
        key_id=annotation.key_id,
        status=annotation.status,
        note=annotation.note,
        version=annotation.version,
        submitted_at=annotation.submitted_at,
        updated_at=annotation.updated_at,
        patterns=list(patterns),
        labels=[PrefixLabel(rank=r, label=label) for r, label in zip(ranks, labels, strict=True)],
        active_seconds=annotation.active_seconds,
    )


# The status of an annotation nobody has started: the key was opened, maybe, but nothing
# was written, so there is no row, and it counts as not started everywhere.
ANNOTATION_NEW = "new"
# Where an annotator stands on a key: nothing written yet, a draft, or submitted (the
# API's one enum for it, KeyWorkStatusEnum).
KEY_WORK_STATUSES = (ANNOTATION_NEW, "draft", "submitted")


def annotation_view_new(*, key_id: int, ranks: Sequence[int]) -> AnnotationView:
    """What a key's annotation is before its annotator's first write: no patterns, no
    note, every prefix not covered, and the version the first write names (the row's
    default, made by that write)."""
    return AnnotationView(
        id=None,
        key_id=key_id,
        status=ANNOTATION_NEW,
        note="",
        version=Annotation._meta.get_field("version").default,
        submitted_at=None,
        updated_at=None,
        patterns=[],
        labels=[PrefixLabel(rank=rank, label=LABEL_NOT_COVERED) for rank in ranks],
    )


def annotation_get_for_annotator(*, key: Key, user: User) -> Annotation | None:
    """The user's own annotation of ``key`` (never another annotator's). One query."""
    try:
        return Annotation.objects.get(key_id=key.pk, annotator_id=user.pk)
    except Annotation.DoesNotExist:
        return None


def pattern_get_for_annotator(*, key: Key, pattern_id: int, user: User) -> Pattern | None:
    """A pattern of the user's own annotation of ``key``; None for anyone else's."""
    return (
        Pattern.objects.filter(pk=pattern_id, annotation__key=key, annotation__annotator_id=user.pk)
        .select_related("annotation")
        .first()
    )


# --- the annotator's keys ---------------------------------------------------------------


def _assigned_to(user: User) -> QuerySet[AssignmentKey]:
    # An archived study (an import, read-only) is out of every annotator's sight.
    return AssignmentKey.objects.filter(
        assignment__annotator_id=user.pk, key__study__archived=False
    )


def assignment_list_for_annotator(*, user: User) -> QuerySet[Assignment]:
    """The user's assignments (of studies that are not archived) with their number of
    keys and how many they submitted, check keys (``annotate.checks``) counted as any key.

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
    # comes twice; the callers take the first row. A check key (``annotate.checks``) is
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
        .annotate(**_guideline_annotations(user))
        .first()
    )


def key_get_for_annotator(*, key_id: int, user: User) -> Key | None:
    """The key, only if it is in one of the user's assignments; None otherwise, whether or
    not the key exists. One query."""
    return _assigned_key(key_id=key_id, user=user).only("id", "study_id", "layer", "index").first()


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
)


@dataclass(frozen=True)
class KeyDetail:
    key: Key  # with its study; only what the annotator's screen shows is loaded
    prefixes: list[dict[str, Any]]  # KEY_DETAIL_PREFIX_FIELDS of each prefix, rank order
    flag: dict[str, str] | None  # the user's own flag on the key: {reason, note}


def key_detail_for_annotator(
    *, key_id: int, user: User, assignment_id: int | None = None
) -> KeyDetail | None:
    """The key as the annotator's screen shows it: its study, its prefixes in rank
    order as plain dicts, and ``my_assignment_id`` (``_my_assignment``: ``assignment_id``
    where it is one of the user's holding the key). None unless the key is in one of the
    user's assignments, whether or not it exists. Two queries.

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
            "study__name",
            "study__is_causal",
            "study__show_value_tokens",
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
    reason = getattr(key, "my_flag_reason", None)
    flag = None if reason is None else {"reason": reason, "note": key.my_flag_note}
    return KeyDetail(key=key, prefixes=prefixes, flag=flag)


# --- guidelines -------------------------------------------------------------------------


def guideline_latest(*, study_id: int) -> Guideline | None:
    """The study's guidelines as they are now (their latest version); None: it has none."""
    return Guideline.objects.filter(study_id=study_id).order_by("-version").first()


def guideline_read_version(*, study_id: int, user: User) -> int | None:
    """The latest version of the study's guidelines that ``user`` acknowledged."""
    return (
        GuidelineAcknowledgement.objects.filter(
            user_id=cast(int, user.pk), guideline__study_id=study_id
        )
        .order_by("-guideline__version")
        .values_list("guideline__version", flat=True)
        .first()
    )


def guideline_list_for_study(*, study: Study) -> QuerySet[Guideline]:
    """Every version, newest first, with its author and how many acknowledged it. One
    query."""
    return (
        Guideline.objects.filter(study=study)
        .select_related("created_by")
        .annotate(acknowledged_by=Count("acknowledgements"))
        .order_by("-version")
    )


def study_visible_to_annotator(*, study_id: int, user: User) -> bool:
    """Whether ``user`` has a key of the (live) study in one of their assignments."""
    return _assigned_to(user).filter(key__study_id=study_id).exists()


# --- admin ------------------------------------------------------------------------------


def study_list() -> QuerySet[Study]:
    return Study.objects.annotate(key_count=Count("keys")).order_by("-created_at", "-id")


def study_get(*, study_id: int) -> Study | None:
    return Study.objects.annotate(key_count=Count("keys")).filter(pk=study_id).first()


def study_layers(*, study: Study) -> list[dict[str, int]]:
    """Per layer (from 1): how many sampled keys the study has."""
    rows = (
        Key.objects.filter(study=study)
        .order_by()
        .values("layer")
        .annotate(key_count=Count("id"))
        .order_by("layer")
    )
    return [{"layer": row["layer"], "key_count": row["key_count"]} for row in rows]


def study_check_key_count(*, study: Study) -> int:
    """How many of the study's keys are served as checks: submitted gold marked a check."""
    return GoldAnnotation.objects.filter(
        key__study=study, status=GoldAnnotation.Status.SUBMITTED, is_check=True
    ).count()


def _batches() -> QuerySet[Batch]:
    return Batch.objects.annotate(key_count=Count("keys", distinct=True)).prefetch_related(
        Prefetch(
            "assignments", queryset=Assignment.objects.select_related("annotator").order_by("id")
        )
    )


def batch_list_for_study(*, study: Study) -> QuerySet[Batch]:
    """The study's batches with their key count and annotators. Two queries."""
    return _batches().filter(study=study).order_by("created_at", "id")


def batch_get(*, batch_id: int) -> Batch | None:
    return _batches().filter(pk=batch_id).select_related("study").first()


def _status_counts(statuses: Iterable[str | None]) -> dict[str, int]:
    counts = Counter(statuses)
    return {
        "submitted": counts[Annotation.Status.SUBMITTED],
        "draft": counts[Annotation.Status.DRAFT],
        "new": counts[None],
    }


def batch_progress(*, batch: Batch) -> dict[str, Any]:
    """Progress of a batch per annotator and per layer. Three queries.

    A unit of work is one (annotator, key) pair of the batch's assignments; each is new
    (not opened), draft or submitted. Check keys of its assignments (``annotate.checks``)
    are not the batch's keys and count in none of its figures.
    """
    pairs = list(
        AssignmentKey.objects.filter(assignment__batch=batch, is_check=False).values_list(
            "assignment__annotator_id", "key_id", "key__layer"
        )
    )
    status = {
        (annotator_id, key_id): s
        for annotator_id, key_id, s in Annotation.objects.filter(
            key__batches=batch, annotator_id__in={a for a, _, _ in pairs}
        ).values_list("annotator_id", "key_id", "status")
    }
    users = {
        row["annotator_id"]: row
        for row in Assignment.objects.filter(batch=batch).values(
            "annotator_id", "annotator__username", "annotator__is_active"
        )
    }
    by_annotator: dict[int, list[str | None]] = defaultdict(list)
    by_layer: dict[int, list[str | None]] = defaultdict(list)
    per_key: Counter[int] = Counter()
    every: list[str | None] = []
    for annotator_id, key_id, layer in pairs:
        s = status.get((annotator_id, key_id))
        every.append(s)
        by_annotator[annotator_id].append(s)
        by_layer[layer].append(s)
        per_key[key_id] += 1
    per_annotator = [
        {
            "annotator_id": annotator_id,
            "username": row["annotator__username"],
            "is_active": row["annotator__is_active"],
            "keys_assigned": len(by_annotator[annotator_id]),
            **_status_counts(by_annotator[annotator_id]),
        }
        for annotator_id, row in sorted(users.items(), key=lambda kv: kv[1]["annotator__username"])
    ]
    per_layer = [
        {"layer": layer, "keys_assigned": len(rows), **_status_counts(rows)}
        for layer, rows in sorted(by_layer.items())
    ]
    return {
        "batch_id": batch.pk,
        "keys_total": batch.keys.count(),
        "annotators_per_key_min": min(per_key.values(), default=0),
        "annotators_per_key_max": max(per_key.values(), default=0),
        "total": {"keys_assigned": len(pairs), **_status_counts(every)},
        "per_annotator": per_annotator,
        "per_layer": per_layer,
    }


def _manageable_by(users: QuerySet[Any], actor: Any) -> QuerySet[Any]:
    """``users`` that ``actor`` may manage (``annotate.permissions.user_can_manage_account``):
    all of them for a superuser (or no actor: the command line), else those that are
    neither staff nor superusers."""
    if actor is None or actor.is_superuser:
        return users
    return users.filter(is_staff=False, is_superuser=False)


def annotator_list(*, actor: Any = None) -> QuerySet[Any]:
    """Every annotator (active or not) that ``actor`` may manage, with their assigned and
    submitted key counts in live studies: check keys (``annotate.checks``) and the work
    of archived (imported, read-only) studies counted in neither."""
    assigned = (
        AssignmentKey.objects.filter(
            assignment__annotator=OuterRef("pk"),
            is_check=False,
            assignment__batch__study__archived=False,
        )
        .order_by()
        .values("assignment__annotator")
        .annotate(n=Count("id"))
        .values("n")
    )
    submitted = (
        Annotation.objects.filter(
            annotator=OuterRef("pk"),
            status=Annotation.Status.SUBMITTED,
            is_check=False,
            key__study__archived=False,
        )
        .order_by()
        .values("annotator")
        .annotate(n=Count("id"))
        .values("n")
    )
    users = get_user_model().objects.filter(groups__name=ANNOTATOR_GROUP)
    return (
        _manageable_by(users, actor)
        .annotate(
            keys_assigned=Coalesce(Subquery(assigned, output_field=IntegerField()), Value(0)),
            keys_submitted=Coalesce(Subquery(submitted, output_field=IntegerField()), Value(0)),
        )
        .order_by("username")
    )


def annotator_get(*, user_id: int, actor: Any = None) -> Any:
    """The annotator ``user_id`` if ``actor`` may manage them, else None."""
    return annotator_list(actor=actor).filter(pk=user_id).first()


def user_find(*, ref: int | str, actor: Any = None) -> Any:
    """A user by id (int) or username (str) among those ``actor`` may manage; None when
    there is none. A username is looked up as sign-in reads it (NFKC)."""
    users = _manageable_by(get_user_model().objects.all(), actor)
    if isinstance(ref, int):
        return users.filter(pk=ref).first()
    return users.filter(username=username_normal(ref)).first()


def batch_key_count(*, batch: Batch) -> int:
    return Key.objects.filter(batches=batch).count()


def batch_key_page(*, batch: Batch, offset: int, limit: int) -> list[dict[str, Any]]:
    """A page of the batch's keys in (layer, index) order, each with its annotators and
    their status (new: not opened; draft; submitted). Two queries per page, whatever its
    size and the number of annotators: the page's keys, then every (annotator, key) pair
    of the batch's assignments on those keys with the annotation's status beside it. A
    check key given in one of its assignments is not one of the batch's annotators of that
    key, even where the key is also a batch key (``annotate.checks``)."""
    keys = list(
        Key.objects.filter(batches=batch)
        .order_by("layer", "index")
        .values("id", "layer", "index")[offset : offset + limit]
    )
    status = Annotation.objects.filter(
        key_id=OuterRef("key_id"), annotator_id=OuterRef("assignment__annotator_id")
    ).values("status")[:1]
    pairs = (
        AssignmentKey.objects.filter(
            assignment__batch=batch, key_id__in=[k["id"] for k in keys], is_check=False
        )
        .annotate(status=Subquery(status))
        .order_by("assignment__annotator__username", "assignment_id")
        .values_list(
            "key_id", "assignment__annotator_id", "assignment__annotator__username", "status"
        )
    )
    by_key: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for key_id, annotator_id, username, s in pairs:
        by_key[key_id].append(
            {"annotator_id": annotator_id, "username": username, "status": s or "new"}
        )
    return [
        {"key_id": k["id"], "layer": k["layer"], "index": k["index"], "annotators": by_key[k["id"]]}
        for k in keys
    ]
