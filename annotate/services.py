"""Writes of the annotation domain.

Every service is keyword-only, runs in one transaction, and every service that changes
an annotation or its patterns leaves an ``AnnotationEvent`` with the state before and
after: no annotation is ever lost, and every change can be traced (docs/reliability.md,
"What is guaranteed").

Optimistic concurrency: every write names the annotation ``version`` it
read; a write made from a stale version raises ``StaleVersion`` (the API answers 409 with
the current state) and changes nothing. Each successful write bumps the version by one.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any, Literal, Protocol

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group, User
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from .checks import Grant, check_keys_give
from .limits import MAX_PATTERNS_PER_ANNOTATION
from .models import (
    NOTE_MAX_LENGTH,
    PATTERN_DESCRIPTION_MAX_LENGTH,
    Annotation,
    AnnotationEvent,
    Assignment,
    AssignmentKey,
    Batch,
    Guideline,
    GuidelineAcknowledgement,
    Key,
    KeyFlag,
    Pattern,
    Study,
    TriggerPrefix,
)
from .permissions import ANNOTATOR_GROUP, user_can_manage_account, user_is_annotator
from .selectors import PatternView, pattern_list_for_annotation
from .usernames import username_mixes_scripts, username_normal, username_skeleton

# The 3-prefix rule (Geva et al. 2021, §3.1): a pattern must occur in at least 3 of the
# key's top trigger prefixes.
PATTERN_MIN_PREFIXES = 3

PATTERN_NEEDS_THREE_PREFIXES = "A pattern must cover at least 3 of the key's trigger prefixes."
PATTERN_PREFIX_OF_ANOTHER_KEY = "A pattern can only cover trigger prefixes of its own key."
PATTERN_DUPLICATE_PREFIXES = "A pattern cannot cover the same trigger prefix twice."
PATTERN_NEEDS_DESCRIPTION = "A pattern needs a description."
PATTERN_DESCRIPTION_TOO_LONG = "A pattern's description can be at most {n} characters."
NOTE_TOO_LONG = "A note can be at most {n} characters."
PATTERN_KIND_UNKNOWN = "A pattern's kind must be shallow, semantic or shallow+semantic."
# As many as an import takes (``annotate.limits``), so that every export imports again.
TOO_MANY_PATTERNS = "An annotation can have at most {n} patterns."
STALE_VERSION = (
    "This annotation was changed elsewhere (another tab or device) since you loaded it; "
    "here is its current state."
)
ANNOTATION_IS_SUBMITTED = "This annotation is submitted: reopen it before changing it."
KEY_NOT_ASSIGNED = "This key is not in any of your assignments."
GUIDELINES_CHANGED = "The guidelines have changed since that version: read the current one."
BATCH_NAME_TAKEN = "This study already has a batch with this name."
BATCH_NEEDS_KEYS = "A batch needs at least one key."
BATCH_KEY_OF_ANOTHER_STUDY = "Every key of a batch must belong to the batch's study."
BATCH_LAYERS_EMPTY = "The study has no keys in layer(s): {layers}."
BATCH_SAMPLE_TOO_LARGE = "Cannot sample {n} keys: only {available} keys are available."
BATCH_KEYS_UNKNOWN = "The study has no key(s): {keys}."
BATCH_KEYS_DUPLICATED = "The list names key(s) more than once: {keys}."
BATCH_ALREADY_ASSIGNED = (
    "This batch is already assigned: add annotators to it or raise its overlap instead."
)
BATCH_NOT_ASSIGNED = "This batch is not assigned yet: assign it first."
ASSIGNMENT_OVERLAP_OUT_OF_RANGE = (
    "The overlap ({overlap}) cannot be larger than the number of annotators ({n}): "
    "each key goes to {overlap} different annotators."
)
ASSIGNMENT_OVERLAP_LOWERED = (
    "The overlap can only be raised: every key of this batch already has at least {n} annotator(s)."
)
ASSIGNMENT_ALREADY_IN_BATCH = "{username} is already assigned to this batch."
ASSIGNMENT_NOTHING_TO_ADD = (
    "Nothing to add: every key already has {overlap} annotator(s). Raise the overlap to "
    "give keys to the new annotators."
)
ASSIGNMENT_ANNOTATORS_DUPLICATED = "Each annotator can be named only once."
NOT_AN_ACTIVE_ANNOTATOR = "{username} is not an active annotator."
USERNAME_TAKEN = "There is already a user named {username!r}."
USERNAME_MIXED_SCRIPTS = (
    "{username!r} mixes Latin, Cyrillic or Greek letters: write a username in one script."
)
USERNAME_CONFUSABLE = (
    "{username!r} can be mistaken for the existing account {other!r}: choose another username."
)
ACCOUNT_PROTECTED = "Only a superuser can manage the account of an admin or a superuser."
ACCOUNT_INACTIVE = "{username} is deactivated."
PASSWORD_LINK_INVALID = (
    "This link is not valid: it has expired, was already used, or a newer link replaced "
    "it. Ask your study's admin for a new one."
)
REASSIGN_NEEDED = "{username} has {n} unfinished key(s): name the annotator who takes them over."
STUDY_ARCHIVED = (
    "This study is archived (read-only): batches and assignments cannot be added to it."
)
REASSIGN_TO_SAME_ANNOTATOR = (
    "Unfinished keys cannot be reassigned to the annotator being deactivated."
)


class ServiceError(Exception):
    """A domain rule refused the write. ``message`` is meant for people (API: 400);
    ``code`` names the rule for clients that translate it (annotate.api_errors)."""

    def __init__(self, message: str, *, code: str = "rule_violation") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class KeyNotAssigned(ServiceError):
    """The key is not in one of the annotator's assignments (API: 404, no leak)."""

    def __init__(self) -> None:
        super().__init__(KEY_NOT_ASSIGNED)


class AnnotationConflict(ServiceError):
    """The write does not apply to the annotation as it is now (API: 409 + current state)."""

    def __init__(self, message: str, *, code: str, annotation: Annotation) -> None:
        super().__init__(message, code=code)
        self.annotation = annotation


class StaleVersion(AnnotationConflict):
    def __init__(self, *, annotation: Annotation) -> None:
        super().__init__(STALE_VERSION, code="stale_version", annotation=annotation)


class AnnotationSubmitted(AnnotationConflict):
    def __init__(self, *, annotation: Annotation) -> None:
        super().__init__(
            ANNOTATION_IS_SUBMITTED, code="annotation_submitted", annotation=annotation
        )


class GuidelinesChanged(ServiceError):
    """The version acknowledged is not the study's latest (API: 409 + the current)."""

    def __init__(self) -> None:
        super().__init__(GUIDELINES_CHANGED, code="guidelines_changed")


class _Keep(Enum):
    KEEP = "keep"


# For a write's ``guideline_version``: leave the annotation's as it is (a write that is
# not an annotator's through the API, a test, a seed).
KEEP = _Keep.KEEP
GuidelineStamp = int | None | Literal[_Keep.KEEP]


# --- accounts ---------------------------------------------------------------------------


@transaction.atomic
def user_create_annotator(
    *, username: str, password: str | None, is_active: bool = True
) -> AbstractUser:
    """Create (or return) an annotator account; an existing user gains the role."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username, defaults={"is_active": is_active})
    if created:
        if password is None:
            user.set_unusable_password()
        else:
            user.set_password(password)
        user.save()
    group, _ = Group.objects.get_or_create(name=ANNOTATOR_GROUP)
    user.groups.add(group)
    return user


class PasswordLinkTokens(PasswordResetTokenGenerator):
    """Tokens of one-time links to set a password (an invitation or a reset).

    Django's generator: nothing is stored, the token is an HMAC of the user's password
    hash, last login and the time it was made. So a link works once (setting the password
    changes the hash), a newer link voids the older ones (each sets a new unusable
    password), and it expires after ``PASSWORD_RESET_TIMEOUT`` seconds.
    """

    key_salt = "annotate.services.PasswordLinkTokens"


password_link_tokens = PasswordLinkTokens()


@dataclass(frozen=True)
class PasswordLink:
    user: Any
    path: str
    expires_at: datetime


def password_link_path(*, uid: str, token: str) -> str:
    # In the fragment, which browsers never send: not to the server (no access log holds
    # the token), nor in a Referer header.
    return f"/set-password#{uid}/{token}"


@transaction.atomic
def password_link_create(*, user: Any, actor: Any) -> PasswordLink:
    """A new one-time link for ``user`` to set their password, made by ``actor`` (who
    must be allowed to manage the account: ``account_check_manageable``).

    The current password stops working now (so do the user's sessions, whose hash
    follows the password, and every earlier link): a reset is for a password that is
    forgotten or may be known to someone else.
    """
    account_check_manageable(actor=actor, account=user)
    if not user.is_active:
        raise ServiceError(ACCOUNT_INACTIVE.format(username=user.get_username()))
    user.set_unusable_password()
    user.save(update_fields=["password"])
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = password_link_tokens.make_token(user)
    expires_at = timezone.now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT)
    return PasswordLink(
        user=user, path=password_link_path(uid=uid, token=token), expires_at=expires_at
    )


def username_skeletons() -> dict[str, str]:
    """The skeleton (``annotate.usernames``) of every account's username, to that username."""
    names = get_user_model().objects.order_by("username").values_list("username", flat=True)
    return {username_skeleton(name): name for name in names}


def username_validate_new(*, username: str, skeletons: dict[str, str] | None = None) -> str:
    """The name a new account would get (``username_normal``), or ``ServiceError`` when it
    cannot be one: not a valid username, already taken (in any case), written in two of
    Latin, Cyrillic and Greek, or confusable with an account's (``skeletons``:
    ``username_skeletons()`` by default; an import passes its own, to which it adds the
    names it creates)."""
    name = username_normal(username)
    User = get_user_model()
    try:
        User.username_validator(name)
    except ValidationError as exc:
        raise ServiceError(" ".join(exc.messages), code="username_invalid") from exc
    if username_mixes_scripts(name):
        raise ServiceError(
            USERNAME_MIXED_SCRIPTS.format(username=name), code="username_mixed_scripts"
        )
    if skeletons is None:
        if User.objects.filter(username__iexact=name).exists():
            raise ServiceError(USERNAME_TAKEN.format(username=name), code="username_taken")
        skeletons = username_skeletons()
    other = skeletons.get(username_skeleton(name))
    if other is not None and other.casefold() == name.casefold():
        raise ServiceError(USERNAME_TAKEN.format(username=name), code="username_taken")
    if other is not None:
        raise ServiceError(
            USERNAME_CONFUSABLE.format(username=name, other=other), code="username_confusable"
        )
    return name


@transaction.atomic
def annotator_create(*, username: str) -> PasswordLink:
    """A new, active annotator without a password, and the link that invites them to
    choose one. The name is stored in NFKC; one that is taken, mixes scripts or can be
    mistaken for an account's is refused (``username_validate_new``)."""
    name = username_validate_new(username=username)
    user = user_create_annotator(username=name, password=None)
    return password_link_create(user=user, actor=None)


def account_check_manageable(*, actor: Any, account: Any) -> None:
    """``PermissionDenied`` (403) unless ``actor`` may reset, link or deactivate
    ``account``: only a superuser manages an admin's or a superuser's account. ``actor``
    None: the command line or the system itself."""
    if actor is not None and not user_can_manage_account(actor, account):
        raise PermissionDenied(ACCOUNT_PROTECTED)


def password_link_user(*, uid: str, token: str) -> Any:
    """The active user whose valid link this is, else None."""
    try:
        pk = int(force_str(urlsafe_base64_decode(uid)))
    except (ValueError, TypeError, OverflowError):
        return None
    user = get_user_model().objects.filter(pk=pk, is_active=True).first()
    if user is None or not password_link_tokens.check_token(user, token):
        return None
    return user


@transaction.atomic
def password_set_with_link(*, uid: str, token: str, password: str) -> Any:
    """Set the password of the link's user; the link is spent."""
    user = password_link_user(uid=uid, token=token)
    if user is None:
        raise ServiceError(PASSWORD_LINK_INVALID)
    try:
        validate_password(password, user)
    except ValidationError as exc:
        raise ServiceError(" ".join(exc.messages)) from exc
    user.set_password(password)
    user.save(update_fields=["password"])
    return user


# --- studies --------------------------------------------------------------------------


CHECK_RATE_OUT_OF_RANGE = "The check rate is a share: from 0 to 1."


@transaction.atomic
def study_update(
    *, study: Study, show_value_tokens: bool | None = None, check_rate: float | None = None
) -> Study:
    """The study's settings that an admin may change after mining (the rest is mined)."""
    fields = []
    if show_value_tokens is not None:
        study.show_value_tokens = show_value_tokens
        fields.append("show_value_tokens")
    if check_rate is not None:
        if not 0.0 <= check_rate <= 1.0:
            raise ServiceError(CHECK_RATE_OUT_OF_RANGE)
        study.check_rate = check_rate
        fields.append("check_rate")
    if fields:
        study.save(update_fields=fields)
    return study


# --- batches ----------------------------------------------------------------------------


def _check_live(study_id: int) -> None:
    """An archived study (an import, read-only) takes no batch and no assignment."""
    if Study.objects.filter(pk=study_id, archived=True).exists():
        raise ServiceError(STUDY_ARCHIVED)


@transaction.atomic
def batch_create(
    *, study: Study, name: str, keys: Sequence[Key], created_by: User | None = None
) -> Batch:
    """A batch of the given keys of ``study``; the mode-specific services below choose them."""
    _check_live(study.pk)
    if Batch.objects.filter(study=study, name=name).exists():
        raise ServiceError(BATCH_NAME_TAKEN)
    if any(key.study_id != study.pk for key in keys):
        raise ServiceError(BATCH_KEY_OF_ANOTHER_STUDY)
    batch = Batch.objects.create(study=study, name=name, created_by=created_by)
    batch.keys.add(*keys)
    return batch


@transaction.atomic
def batch_create_by_layers(
    *,
    study: Study,
    name: str,
    layers: Sequence[int],
    created_by: User | None = None,
) -> Batch:
    """Every key of the study in the given layers (numbered from 1)."""
    wanted = sorted(set(layers))
    keys = list(Key.objects.filter(study=study, layer__in=wanted).order_by("layer", "index"))
    empty = sorted(set(wanted) - {key.layer for key in keys})
    if not wanted:
        raise ServiceError(BATCH_NEEDS_KEYS)
    if empty:
        raise ServiceError(BATCH_LAYERS_EMPTY.format(layers=", ".join(map(str, empty))))
    return batch_create(study=study, name=name, keys=keys, created_by=created_by)


@transaction.atomic
def batch_create_by_random_sample(
    *,
    study: Study,
    name: str,
    n: int,
    seed: int,
    layers: Sequence[int] | None = None,
    created_by: User | None = None,
) -> Batch:
    """``n`` keys drawn without replacement with ``random.Random(seed)``.

    Reproducible: the candidates are listed in (layer, index) order before sampling, so
    the same study, layers, n and seed always give the same keys.
    """
    candidates = Key.objects.filter(study=study)
    if layers:
        candidates = candidates.filter(layer__in=set(layers))
    ids = list(candidates.order_by("layer", "index").values_list("id", flat=True))
    if n < 1:
        raise ServiceError(BATCH_NEEDS_KEYS)
    if n > len(ids):
        raise ServiceError(BATCH_SAMPLE_TOO_LARGE.format(n=n, available=len(ids)))
    chosen = set(random.Random(seed).sample(ids, n))
    keys = [key for key in Key.objects.filter(id__in=chosen).order_by("layer", "index")]
    return batch_create(study=study, name=name, keys=keys, created_by=created_by)


@transaction.atomic
def batch_create_from_list(
    *,
    study: Study,
    name: str,
    keys: Sequence[tuple[int, int]],
    created_by: User | None = None,
) -> Batch:
    """The keys named as (layer, index) pairs; an unknown or repeated pair is an error."""
    if not keys:
        raise ServiceError(BATCH_NEEDS_KEYS)
    wanted = [(int(layer), int(index)) for layer, index in keys]
    repeated = sorted(pair for pair, n in Counter(wanted).items() if n > 1)
    if repeated:
        raise ServiceError(BATCH_KEYS_DUPLICATED.format(keys=_pairs(repeated)))
    found = {
        (key.layer, key.index): key
        for key in Key.objects.filter(
            study=study,
            layer__in={layer for layer, _ in wanted},
            index__in={index for _, index in wanted},
        )
    }
    unknown = [pair for pair in wanted if pair not in found]
    if unknown:
        raise ServiceError(BATCH_KEYS_UNKNOWN.format(keys=_pairs(unknown)))
    return batch_create(
        study=study, name=name, keys=[found[pair] for pair in wanted], created_by=created_by
    )


def _pairs(pairs: Sequence[tuple[int, int]], limit: int = 10) -> str:
    shown = ", ".join(f"{layer}:{index}" for layer, index in pairs[:limit])
    return shown + (f" and {len(pairs) - limit} more" if len(pairs) > limit else "")


# --- assignments ------------------------------------------------------------------------


@transaction.atomic
def assignment_create(*, batch: Batch, annotator: User) -> Assignment:
    """Give every key of ``batch`` to ``annotator``, and the check keys they draw
    (``annotate.checks``). Idempotent: a rerun adds nothing."""
    _check_live(batch.study_id)
    assignment, _ = Assignment.objects.get_or_create(batch=batch, annotator=annotator)
    held = AssignmentKey.objects.filter(assignment=assignment).values("key_id")
    key_ids = list(
        batch.keys.exclude(id__in=held).order_by("layer", "index").values_list("id", flat=True)
    )
    AssignmentKey.objects.bulk_create(
        [AssignmentKey(assignment=assignment, key_id=key_id) for key_id in key_ids],
        ignore_conflicts=True,
    )
    check_keys_give(grants=[_grant(assignment, key_ids, study_id=batch.study_id)])
    return assignment


def _grant(assignment: Assignment, key_ids: Sequence[int], *, study_id: int) -> Grant:
    return Grant(
        assignment_id=assignment.pk,
        annotator_id=assignment.annotator_id,
        study_id=study_id,
        key_ids=key_ids,
    )


@transaction.atomic
def assignment_create_with_overlap(
    *, batch: Batch, annotators: Sequence[User], overlap: int
) -> list[Assignment]:
    """Give ``batch`` to M annotators so that every key is seen by exactly ``overlap`` of them.

    The model chosen: with M annotators and overlap N (1 ≤ N ≤ M), the batch's keys in
    (layer, index) order are dealt round-robin: key j goes to annotators
    (j·N + t) mod M for t = 0..N-1. Each key gets N distinct annotators and the load is
    balanced (every annotator gets ⌊K·N/M⌋ or ⌈K·N/M⌉ keys). N = M gives every annotator
    the whole batch, which is the paper's set-up for measuring agreement.

    A batch is assigned once: assigning an already assigned batch is refused, so that the
    overlap it was made with stays true. Annotators must be distinct active annotators.
    """
    _check_live(batch.study_id)
    users = list(annotators)
    if len({user.pk for user in users}) != len(users):
        raise ServiceError(ASSIGNMENT_ANNOTATORS_DUPLICATED)
    _check_overlap(overlap, len(users))
    for user in users:
        if not user_is_annotator(user):
            raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=user.get_username()))
    # Lock the batch so that two admins assigning it at once cannot both pass the check.
    Batch.objects.select_for_update().filter(pk=batch.pk).first()
    if Assignment.objects.filter(batch=batch).exists():
        raise ServiceError(BATCH_ALREADY_ASSIGNED)
    if not batch.keys.exists():
        raise ServiceError(BATCH_NEEDS_KEYS)
    assignments = [Assignment.objects.create(batch=batch, annotator=user) for user in users]
    key_ids = list(batch.keys.order_by("layer", "index").values_list("id", flat=True))
    m = len(assignments)
    rows = [
        AssignmentKey(assignment=assignments[(j * overlap + t) % m], key_id=key_id)
        for j, key_id in enumerate(key_ids)
        for t in range(overlap)
    ]
    AssignmentKey.objects.bulk_create(rows)
    given: dict[int, list[int]] = {assignment.pk: [] for assignment in assignments}
    for row in rows:
        given[row.assignment.pk].append(row.key_id)
    check_keys_give(grants=[_grant(a, given[a.pk], study_id=batch.study_id) for a in assignments])
    return assignments


def _check_overlap(overlap: int, n: int) -> None:
    if overlap < 1 or overlap > n:
        raise ServiceError(ASSIGNMENT_OVERLAP_OUT_OF_RANGE.format(overlap=overlap, n=n))


@dataclass(frozen=True)
class AssignmentExtendResult:
    keys_added: int
    keys_short: int


@transaction.atomic
def assignment_extend(
    *, batch: Batch, annotators: Sequence[User], overlap: int
) -> AssignmentExtendResult:
    """Add ``annotators`` to an assigned batch and/or raise its overlap to ``overlap``.

    The model chosen: a key of the batch that has c annotators (everyone holding it in
    one of the batch's assignments, deactivated authors of submitted work included) gets
    ``overlap - c`` more. They are drawn from the batch's active annotators, old and
    new, who do not hold the key yet (in any batch) and have no annotation of it; of
    those, the ones holding the fewest of the batch's keys at that point go first (ties:
    the order they joined the batch, then the order given), walking the keys in (layer,
    index) order. So a third annotator added to a batch of two with overlap 2 → 3 gets
    every key, and two annotators added with 2 → 3 share the keys half and half.
    Existing keys never move: what was assigned (and perhaps annotated) stays.

    ``keys_short``: keys that could not reach ``overlap`` because too few annotators
    were free to take them (each of the others already holds the key elsewhere).
    Five queries whatever the number of keys, and one insert of the new rows.
    """
    new_users = list(annotators)
    if len({user.pk for user in new_users}) != len(new_users):
        raise ServiceError(ASSIGNMENT_ANNOTATORS_DUPLICATED)
    for user in new_users:
        if not user_is_annotator(user):
            raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=user.get_username()))
    Batch.objects.select_for_update().filter(pk=batch.pk).first()
    in_group = Group.objects.filter(name=ANNOTATOR_GROUP, user=OuterRef("annotator_id"))
    existing = list(
        Assignment.objects.filter(batch=batch)
        .annotate(annotator_active=Exists(in_group) & Q(annotator__is_active=True))
        .order_by("id")
    )
    if not existing:
        raise ServiceError(BATCH_NOT_ASSIGNED)
    present = {assignment.annotator_id for assignment in existing}
    for user in new_users:
        if user.pk in present:
            raise ServiceError(ASSIGNMENT_ALREADY_IN_BATCH.format(username=user.get_username()))
    active = [a for a in existing if a.annotator_active]
    _check_overlap(overlap, len(active) + len(new_users))

    key_ids = list(batch.keys.order_by("layer", "index").values_list("id", flat=True))
    # Check keys of the batch's assignments are not the batch's keys: they count neither
    # as holders nor in anyone's load.
    holders: dict[int, int] = Counter(
        AssignmentKey.objects.filter(assignment__batch=batch, is_check=False).values_list(
            "key_id", flat=True
        )
    )
    current = min((holders.get(key_id, 0) for key_id in key_ids), default=0)
    if overlap < current:
        raise ServiceError(ASSIGNMENT_OVERLAP_LOWERED.format(n=current))

    created = Assignment.objects.bulk_create(
        [Assignment(batch=batch, annotator=user) for user in new_users]
    )
    if not created or created[0].pk is None:  # backends that return no primary keys
        created = list(
            Assignment.objects.filter(batch=batch, annotator__in=new_users).order_by("id")
        )
    # Candidates in the order they joined; each with the batch's keys they hold now.
    candidates = [*active, *created]
    candidate_ids = [a.annotator_id for a in candidates]
    taken = set(
        AssignmentKey.objects.filter(
            assignment__annotator_id__in=candidate_ids, key__batches=batch
        ).values_list("assignment__annotator_id", "key_id")
    ) | set(
        Annotation.objects.filter(annotator_id__in=candidate_ids, key__batches=batch).values_list(
            "annotator_id", "key_id"
        )
    )
    load = Counter(
        AssignmentKey.objects.filter(assignment__in=active, is_check=False).values_list(
            "assignment_id", flat=True
        )
    )
    rank = {assignment.pk: i for i, assignment in enumerate(candidates)}
    rows: list[AssignmentKey] = []
    short = 0
    for key_id in key_ids:
        missing = overlap - holders.get(key_id, 0)
        if missing <= 0:
            continue
        free = [a for a in candidates if (a.annotator_id, key_id) not in taken]
        free.sort(key=lambda a: (load[a.pk], rank[a.pk]))
        for assignment in free[:missing]:
            rows.append(AssignmentKey(assignment=assignment, key_id=key_id))
            load[assignment.pk] += 1
        short += missing > len(free)
    if not rows and new_users:
        raise ServiceError(ASSIGNMENT_NOTHING_TO_ADD.format(overlap=overlap))
    AssignmentKey.objects.bulk_create(rows)
    given: dict[int, list[int]] = defaultdict(list)
    for row in rows:
        given[row.assignment.pk].append(row.key_id)
    check_keys_give(
        grants=[
            _grant(a, given[a.pk], study_id=batch.study_id) for a in candidates if a.pk in given
        ]
    )
    return AssignmentExtendResult(keys_added=len(rows), keys_short=short)


@dataclass(frozen=True)
class ReassignResult:
    keys_moved: int
    keys_skipped: int
    drafts_moved: int


@transaction.atomic
def annotator_deactivate_and_reassign(
    *,
    annotator: User,
    reassign_to: User | None,
    actor: User | None,
    transfer_drafts: bool = False,
) -> ReassignResult:
    """Deactivate ``annotator`` and hand their unfinished keys to ``reassign_to``.

    Unfinished = assigned and not submitted. Submitted work stays with its author and
    keeps counting. Each unfinished key moves into ``reassign_to``'s assignment of the
    same batch (created if needed); a key that ``reassign_to`` already has (or already
    annotated) is skipped, since one person cannot be two of a key's N annotators.

    By default the draft of a moved key stays with its author, for the record, and the new
    annotator starts blank: annotators are blind to each other's work, and
    handing a draft over by default showed the new person the old one's patterns.
    With ``transfer_drafts`` the draft goes along instead, so nothing
    is redone; its audit trail records the hand-over (action ``reassign``).

    ``reassign_to`` may be None only for an annotator with no unfinished key (one who
    never started, or finished everything): there is nothing to hand over.

    Check keys (``annotate.checks``) are the annotator's own: unfinished ones are
    withdrawn, never handed over, and count in neither figure of the result;
    ``reassign_to`` draws checks of their own for the keys they take.
    """
    account_check_manageable(actor=actor, account=annotator)
    if reassign_to is None:
        return _annotator_deactivate_alone(annotator=annotator)
    if annotator.pk == reassign_to.pk:
        raise ServiceError(REASSIGN_TO_SAME_ANNOTATOR)
    if not annotator.groups.filter(name=ANNOTATOR_GROUP).exists():
        raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=annotator.get_username()))
    if not user_is_annotator(reassign_to):
        raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=reassign_to.get_username()))

    annotator.is_active = False
    annotator.save(update_fields=["is_active"])

    submitted = Annotation.objects.filter(
        annotator=annotator, key_id=OuterRef("key_id"), status=Annotation.Status.SUBMITTED
    )
    unfinished = list(
        AssignmentKey.objects.filter(assignment__annotator=annotator)
        .exclude(Exists(submitted))
        .values_list(
            "id", "assignment__batch_id", "key_id", "is_check", "assignment__batch__study_id"
        )
        .order_by("id")
    )
    taken = set(
        AssignmentKey.objects.filter(assignment__annotator=reassign_to).values_list(
            "key_id", flat=True
        )
    ) | set(Annotation.objects.filter(annotator=reassign_to).values_list("key_id", flat=True))

    # Check keys are drawn per annotator: an unfinished one is withdrawn, not handed over,
    # and the new annotator draws their own for the regular keys they take.
    regular = [row for row in unfinished if not row[3]]
    targets: dict[int, Assignment] = {}
    studies: dict[int, int] = {}
    moved: list[AssignmentKey] = []
    moved_key_ids: set[int] = set()
    for _, batch_id, key_id, _, study_id in regular:
        if key_id in taken or key_id in moved_key_ids:
            continue
        if batch_id not in targets:
            targets[batch_id], _ = Assignment.objects.get_or_create(
                batch_id=batch_id, annotator=reassign_to
            )
            studies[batch_id] = study_id
        moved.append(AssignmentKey(assignment=targets[batch_id], key_id=key_id))
        moved_key_ids.add(key_id)
    AssignmentKey.objects.bulk_create(moved, ignore_conflicts=True)
    AssignmentKey.objects.filter(id__in=[row[0] for row in unfinished]).delete()
    given: dict[int, list[int]] = defaultdict(list)
    for row in moved:
        given[row.assignment.pk].append(row.key_id)
    check_keys_give(
        grants=[
            _grant(assignment, given[assignment.pk], study_id=studies[batch_id])
            for batch_id, assignment in targets.items()
        ]
    )

    drafts_moved = 0
    if transfer_drafts:
        drafts = Annotation.objects.select_for_update().filter(
            annotator=annotator, key_id__in=moved_key_ids, status=Annotation.Status.DRAFT
        )
        for draft in drafts:
            patterns = pattern_list_for_annotation(annotation_id=draft.pk)
            before = annotation_state(annotation=draft, patterns=patterns)
            draft.annotator = reassign_to
            draft.version += 1
            draft.save(update_fields=["annotator", "version", "updated_at"])
            _record(draft, actor, AnnotationEvent.Action.REASSIGN, before, patterns)
            drafts_moved += 1
    return ReassignResult(
        keys_moved=len(moved),
        keys_skipped=len(regular) - len(moved),
        drafts_moved=drafts_moved,
    )


def _annotator_deactivate_alone(*, annotator: User) -> ReassignResult:
    if not annotator.groups.filter(name=ANNOTATOR_GROUP).exists():
        raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=annotator.get_username()))
    submitted = Annotation.objects.filter(
        annotator=annotator, key_id=OuterRef("key_id"), status=Annotation.Status.SUBMITTED
    )
    unfinished = AssignmentKey.objects.filter(assignment__annotator=annotator).exclude(
        Exists(submitted)
    )
    n = unfinished.filter(is_check=False).count()
    if n:
        raise ServiceError(REASSIGN_NEEDED.format(username=annotator.get_username(), n=n))
    annotator.is_active = False
    annotator.save(update_fields=["is_active"])
    # Unfinished check keys are withdrawn, as in a hand-over: nobody takes them over.
    unfinished.filter(is_check=True).delete()
    return ReassignResult(keys_moved=0, keys_skipped=0, drafts_moved=0)


# --- annotations ------------------------------------------------------------------------


def annotation_state(
    *, annotation: Annotation, patterns: Sequence[PatternView] | None = None
) -> dict[str, Any]:
    """The annotation as JSON, as the audit trail stores it (before/after).

    From ``patterns`` (as ``pattern_list_for_annotation`` reads them) when the caller
    already holds them, else one query. The writes below read the patterns once, under
    the row lock, and derive the state after from the state before and the change they
    made: the same JSON as reading it back (``tests/unit/annotate`` checks), without
    reading it back.
    """
    if patterns is None:
        patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    return {
        "annotator": annotation.annotator.get_username(),
        "status": annotation.status,
        "note": annotation.note,
        "version": annotation.version,
        "active_seconds": annotation.active_seconds,
        "patterns": [
            {
                "id": pattern.id,
                "description": pattern.description,
                "kind": pattern.kind,
                "prefix_ranks": sorted(pattern.prefix_ranks),
                "client_id": str(pattern.client_id) if pattern.client_id else None,
            }
            for pattern in patterns
        ],
    }


def _record(
    annotation: Annotation,
    actor: User | None,
    action: str,
    before: dict[str, Any] | None,
    patterns: Sequence[PatternView] | None = None,
) -> None:
    """The audit record of a change; ``patterns``: the patterns after it, when known."""
    AnnotationEvent.objects.create(
        annotation=annotation,
        actor=actor,
        action=action,
        before=before,
        after=annotation_state(annotation=annotation, patterns=patterns),
    )


def _lock(annotation: Annotation) -> Annotation:
    # A row lock on PostgreSQL; SQLite runs write transactions one at a time (IMMEDIATE).
    # Only the annotation's row ("self"): the annotator's row is joined for the audit's
    # username, and locking it too would make a login (last_login) wait on a save.
    return (
        Annotation.objects.select_for_update(of=("self",))
        .select_related("annotator")
        .get(pk=annotation.pk)
    )


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


def _check_writable(annotation: Annotation, version: int) -> None:
    check_writable(
        annotation,
        version,
        stale=lambda: StaleVersion(annotation=annotation),
        submitted=lambda: AnnotationSubmitted(annotation=annotation),
    )


def _bump(annotation: Annotation, *fields: str, guideline_version: GuidelineStamp = KEEP) -> None:
    """Save ``fields`` with the next version; and the study's guideline version in force
    when the write names one (every annotator write through the API does)."""
    if guideline_version is not KEEP:
        annotation.guideline_version = guideline_version
        fields = (*fields, "guideline_version")
    bump(annotation, *fields)


def _key_holdings(*, key: Key, annotator: User) -> list[bool]:
    """Whether each of the annotator's rows of ``key`` (in live studies) is a check."""
    return list(
        AssignmentKey.objects.filter(
            key=key, assignment__annotator=annotator, key__study__archived=False
        ).values_list("is_check", flat=True)
    )


def annotation_get_or_create_for(
    *, key: Key, annotator: User, guideline_version: GuidelineStamp = KEEP
) -> Annotation:
    """The annotator's annotation of ``key``, created as an empty draft on first use.

    Only for a key in one of the annotator's assignments, and ``KeyNotAssigned``
    otherwise; the annotation of a key they hold only as a check key
    (``annotate.checks``) is made with ``is_check``. The reads need no transaction; the
    create and its audit record are one (``get_or_create`` inside ``atomic`` would add a
    savepoint and a second read).
    """
    annotation = Annotation.objects.filter(key=key, annotator=annotator).order_by().first()
    holdings = _key_holdings(key=key, annotator=annotator)
    if not holdings:
        raise KeyNotAssigned
    is_check = all(holdings)
    if annotation is not None:
        return annotation
    try:
        return _annotation_create(
            key=key,
            annotator=annotator,
            is_check=is_check,
            guideline_version=None if guideline_version is KEEP else guideline_version,
        )
    except IntegrityError:
        # Another request (a second tab) made it between the read and the create.
        return Annotation.objects.get(key=key, annotator=annotator)


@transaction.atomic
def _annotation_create(
    *, key: Key, annotator: User, guideline_version: int | None, is_check: bool = False
) -> Annotation:
    annotation = Annotation.objects.create(
        key=key, annotator=annotator, guideline_version=guideline_version, is_check=is_check
    )
    _record(annotation, annotator, AnnotationEvent.Action.CREATE, None, patterns=[])
    return annotation


# The most active time one annotation can record (30 days, 2,592,000 s): a client's total
# above it is refused (400), not stored.
MAX_ACTIVE_SECONDS = 30 * 24 * 3600.0
ACTIVE_SECONDS_OUT_OF_RANGE = f"Active time must be 0 to {MAX_ACTIVE_SECONDS:.0f} seconds."


def _active_total(annotation: Annotation, seconds: float | None) -> float:
    """The annotation's active time once a write that carries ``seconds`` (the
    workspace's running total; None: none sent) is made: the largest total it has been
    sent, so that a retried or reordered write cannot lower it or count twice."""
    if seconds is None:
        return annotation.active_seconds
    if not 0.0 <= seconds <= MAX_ACTIVE_SECONDS:
        raise ServiceError(ACTIVE_SECONDS_OUT_OF_RANGE)
    return max(annotation.active_seconds, seconds)


@transaction.atomic
def annotation_save(
    *,
    annotation: Annotation,
    actor: User,
    note: str,
    version: int,
    active_seconds: float | None = None,
    guideline_version: GuidelineStamp = KEEP,
) -> Annotation:
    """Save the note (autosave) and the active time it carries, as one versioned write
    with its audit record.

    A save that changes nothing (the note it has, no more active time than recorded) is
    a no-op, so a retried request that already went through answers with the current
    state instead of 409. A save of the same note with more active time is a write like
    any (the workspace sends one when the annotator leaves a draft). A submitted
    annotation's active time is final: a save that would change only that is a no-op
    too, and one that changes its note is refused (409) as before.
    """
    if len(note) > NOTE_MAX_LENGTH:
        raise ServiceError(NOTE_TOO_LONG.format(n=NOTE_MAX_LENGTH), code="note_too_long")
    annotation = _lock(annotation)
    seconds = _active_total(annotation, active_seconds)
    if annotation.note == note and (
        seconds == annotation.active_seconds or annotation.status == Annotation.Status.SUBMITTED
    ):
        return annotation
    _check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    annotation.note = note
    annotation.active_seconds = seconds
    _bump(annotation, "note", "active_seconds", guideline_version=guideline_version)
    _record(annotation, actor, AnnotationEvent.Action.SAVE, before, patterns)
    return annotation


def validated_prefixes(key_id: int, prefixes: Sequence[TriggerPrefix]) -> list[TriggerPrefix]:
    """The 3-prefix rule: ≥ 3 distinct prefixes, all of the key ``key_id`` (the key of the
    annotation, or of the gold annotation, that the pattern belongs to)."""
    if any(prefix.key_id != key_id for prefix in prefixes):
        raise ServiceError(PATTERN_PREFIX_OF_ANOTHER_KEY, code="pattern_prefix_of_another_key")
    if len({prefix.pk for prefix in prefixes}) != len(prefixes):
        raise ServiceError(PATTERN_DUPLICATE_PREFIXES, code="pattern_duplicate_prefixes")
    if len(prefixes) < PATTERN_MIN_PREFIXES:
        raise ServiceError(PATTERN_NEEDS_THREE_PREFIXES, code="pattern_needs_three_prefixes")
    return list(prefixes)


def validated_description(description: str) -> str:
    description = description.strip()
    if not description:
        raise ServiceError(PATTERN_NEEDS_DESCRIPTION, code="pattern_needs_description")
    if len(description) > PATTERN_DESCRIPTION_MAX_LENGTH:
        raise ServiceError(
            PATTERN_DESCRIPTION_TOO_LONG.format(n=PATTERN_DESCRIPTION_MAX_LENGTH),
            code="pattern_description_too_long",
        )
    return description


def validated_pattern_count(n_patterns: int) -> None:
    """Room for one more pattern beside the ``n_patterns`` an annotation (or a gold) has."""
    if n_patterns >= MAX_PATTERNS_PER_ANNOTATION:
        raise ServiceError(
            TOO_MANY_PATTERNS.format(n=MAX_PATTERNS_PER_ANNOTATION), code="too_many_patterns"
        )


def validated_kind(kind: str) -> str:
    if kind not in Pattern.Kind.values:
        raise ServiceError(PATTERN_KIND_UNKNOWN, code="pattern_kind_unknown")
    return kind


@dataclass(frozen=True)
class PatternCreateResult:
    annotation: Annotation
    pattern: Pattern
    created: bool
    # The annotation's patterns after the create, as the audit and the API show them.
    patterns: list[PatternView]


@transaction.atomic
def pattern_create(
    *,
    annotation: Annotation,
    actor: User,
    description: str,
    kind: str,
    prefixes: Sequence[TriggerPrefix],
    version: int,
    client_id: uuid.UUID | None = None,
    guideline_version: GuidelineStamp = KEEP,
) -> PatternCreateResult:
    """Add a pattern. A retried create with the same ``client_id`` returns the pattern the
    first attempt made (``created=False``) instead of a duplicate or a 409.

    Six queries whatever the number of patterns and prefixes: lock, read the patterns
    (for the retry check, the order and the audit's before/after), insert the pattern,
    insert its prefix links in one statement, bump the version, insert the audit record.
    """
    annotation = _lock(annotation)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    if client_id is not None and any(p.client_id == client_id for p in patterns):
        existing = Pattern.objects.get(annotation=annotation, client_id=client_id)
        return PatternCreateResult(
            annotation=annotation, pattern=existing, created=False, patterns=patterns
        )
    _check_writable(annotation, version)
    validated_pattern_count(len(patterns))
    description = validated_description(description)
    kind = validated_kind(kind)
    prefixes = validated_prefixes(annotation.key_id, prefixes)
    before = annotation_state(annotation=annotation, patterns=patterns)
    pattern = Pattern.objects.create(
        annotation=annotation,
        description=description,
        kind=kind,
        order=max((p.order for p in patterns), default=-1) + 1,
        client_id=client_id,
    )
    # The pattern is new: nothing to diff against, so one INSERT of its links rather than
    # the SELECT + INSERT of ``pattern.prefixes.set()``. No m2m_changed receivers exist.
    links = Pattern.prefixes.through
    links.objects.bulk_create(
        [links(pattern_id=pattern.pk, triggerprefix_id=prefix.pk) for prefix in prefixes]
    )
    _bump(annotation, guideline_version=guideline_version)
    after = [
        *patterns,
        PatternView(
            id=pattern.pk,
            description=pattern.description,
            kind=pattern.kind,
            prefix_ranks=sorted(prefix.rank for prefix in prefixes),
            order=pattern.order,
            client_id=pattern.client_id,
        ),
    ]
    _record(annotation, actor, AnnotationEvent.Action.PATTERN_CREATE, before, after)
    return PatternCreateResult(annotation=annotation, pattern=pattern, created=True, patterns=after)


@transaction.atomic
def pattern_update(
    *,
    pattern: Pattern,
    actor: User,
    version: int,
    description: str | None = None,
    kind: str | None = None,
    prefixes: Sequence[TriggerPrefix] | None = None,
    guideline_version: GuidelineStamp = KEEP,
) -> Annotation:
    """Change a pattern's description, kind and/or prefixes (``None``: leave as is)."""
    annotation = _lock(pattern.annotation)
    _check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    fields = []
    changes: dict[str, Any] = {}
    if description is not None:
        pattern.description = changes["description"] = validated_description(description)
        fields.append("description")
    if kind is not None:
        pattern.kind = changes["kind"] = validated_kind(kind)
        fields.append("kind")
    if prefixes is not None:
        valid = validated_prefixes(annotation.key_id, prefixes)
        pattern.prefixes.set(valid)
        changes["prefix_ranks"] = sorted(prefix.rank for prefix in valid)
    pattern.save(update_fields=[*fields, "updated_at"])
    _bump(annotation, guideline_version=guideline_version)
    after = [replace(p, **changes) if p.id == pattern.pk else p for p in patterns]
    _record(annotation, actor, AnnotationEvent.Action.PATTERN_UPDATE, before, after)
    return annotation


@transaction.atomic
def pattern_delete(
    *, pattern: Pattern, actor: User, version: int, guideline_version: GuidelineStamp = KEEP
) -> Annotation:
    annotation = _lock(pattern.annotation)
    _check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    deleted_id = pattern.pk
    pattern.delete()
    _bump(annotation, guideline_version=guideline_version)
    after = [p for p in patterns if p.id != deleted_id]
    _record(annotation, actor, AnnotationEvent.Action.PATTERN_DELETE, before, after)
    return annotation


@transaction.atomic
def annotation_submit(
    *,
    annotation: Annotation,
    actor: User,
    version: int,
    active_seconds: float | None = None,
    guideline_version: GuidelineStamp = KEEP,
) -> Annotation:
    """Mark the annotation submitted, with the final active time it carries (kept as in
    ``annotation_save``), in one versioned write and its audit record.

    Zero patterns is allowed: a key whose prefixes share no pattern is a legitimate finding
    (all its prefixes count as not-covered in Figure 2). Submitting a submitted annotation
    is a no-op, so a retried submit is safe; a stale one (409) records nothing, its active
    time included.
    """
    annotation = _lock(annotation)
    seconds = _active_total(annotation, active_seconds)
    if annotation.status == Annotation.Status.SUBMITTED:
        return annotation
    _check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    annotation.status = Annotation.Status.SUBMITTED
    annotation.submitted_at = timezone.now()
    annotation.active_seconds = seconds
    _bump(
        annotation,
        "status",
        "submitted_at",
        "active_seconds",
        guideline_version=guideline_version,
    )
    _record(annotation, actor, AnnotationEvent.Action.SUBMIT, before, patterns)
    return annotation


@transaction.atomic
def annotation_reopen(
    *, annotation: Annotation, actor: User, version: int, guideline_version: GuidelineStamp = KEEP
) -> Annotation:
    """Back to draft so that it can be changed. Reopening a draft is a no-op (retries)."""
    annotation = _lock(annotation)
    if annotation.status == Annotation.Status.DRAFT:
        return annotation
    if annotation.version != version:
        raise StaleVersion(annotation=annotation)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    annotation.status = Annotation.Status.DRAFT
    annotation.submitted_at = None
    _bump(annotation, "status", "submitted_at", guideline_version=guideline_version)
    _record(annotation, actor, AnnotationEvent.Action.REOPEN, before, patterns)
    return annotation


# --- guidelines -------------------------------------------------------------------------


@transaction.atomic
def guideline_publish(*, study: Study, text: str, author: User) -> Guideline:
    """A new version of the study's guidelines (the next number, from 1). The study's row
    is locked so that two admins publishing at once get two versions, not an error."""
    Study.objects.select_for_update().filter(pk=study.pk).exists()
    latest = (
        Guideline.objects.filter(study=study)
        .order_by("-version")
        .values_list("version", flat=True)
        .first()
    )
    return Guideline.objects.create(
        study=study, version=(latest or 0) + 1, text=text, created_by=author
    )


def guideline_acknowledge(*, study: Study, user: User, version: int) -> Guideline:
    """Record that ``user`` read ``version`` of the study's guidelines; idempotent. Only
    the latest version can be acknowledged (``GuidelinesChanged`` otherwise)."""
    latest = Guideline.objects.filter(study=study).order_by("-version").first()
    if latest is None or latest.version != version:
        raise GuidelinesChanged
    GuidelineAcknowledgement.objects.get_or_create(guideline=latest, user=user)
    return latest


# --- flags ------------------------------------------------------------------------------

FLAG_NOTE_NEEDED = "Say what is wrong when the reason is other."


def key_flag_checked(*, reason: str, note: str) -> str:
    """The rules of a flag, for a write and for an import alike: a known reason, a note of
    at most ``NOTE_MAX_LENGTH`` characters, and one for the reason "other". Returns the
    note as it is stored (without surrounding spaces)."""
    note = note.strip()
    if reason not in KeyFlag.Reason.values:
        raise ServiceError(f"Unknown reason {reason!r}.")
    if reason == KeyFlag.Reason.OTHER and not note:
        raise ServiceError(FLAG_NOTE_NEEDED)
    if len(note) > NOTE_MAX_LENGTH:
        raise ServiceError(NOTE_TOO_LONG.format(n=NOTE_MAX_LENGTH), code="note_too_long")
    return note


def key_flag_set(*, key: Key, annotator: User, reason: str, note: str) -> KeyFlag:
    """Flag ``key`` (a key the caller found through the annotator's own keys), or replace
    the annotator's flag on it: one flag per annotator and key."""
    note = key_flag_checked(reason=reason, note=note)
    flag, _ = KeyFlag.objects.update_or_create(
        key=key, annotator=annotator, defaults={"reason": reason, "note": note}
    )
    return flag


def key_flag_delete(*, key: Key, annotator: User) -> None:
    """Remove the annotator's flag on ``key``; none there is fine (a retried delete)."""
    KeyFlag.objects.filter(key=key, annotator=annotator).delete()
