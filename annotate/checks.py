"""Check keys: gold keys marked as checks, served unannounced in an annotator's queue.

Which of an annotator's queue slots serves a check is a pure function of (study id, study
seed, annotator id, slot, rate): a SHA-256 of the first four read as a share in [0, 1),
compared with the rate. So the draw is the same on every call (next-key asked twice at
the same slot answers the same), differs between annotators, and a higher rate draws
every slot that a lower one draws. Which check key a drawn slot serves: the first of the
eligible ones in an order of the annotator's own (a hash of annotator and key).

Slot n of an annotator in a study is the number of their submitted annotations in it,
regular and check: it moves on with each submit. A check is served only between
regular keys (while the annotator has a regular key left), at most once per annotator
and key (``CheckServing``), never on a key the annotator has annotated or has in one
of their own assignments. It is reported under the assignment being worked and looks
like any key (no field tells it apart); its annotation is made with ``is_check=True``
and is left out of every progress count (``annotate.selectors``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from .models import Annotation, AssignmentKey, CheckServing, GoldAnnotation, Key

_SCALE = float(2**64)


def _share(*parts: object) -> float:
    """A uniform share in [0, 1) from ``parts`` (the first 8 bytes of their SHA-256)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE


def slot_draws_check(
    *, study_id: int, study_seed: int, annotator_id: int, slot: int, rate: float
) -> bool:
    """Whether the annotator's queue slot ``slot`` of the study serves a check key."""
    if rate <= 0.0:
        return False
    return _share("check-slot", study_id, study_seed, annotator_id, slot) < rate


def check_key_order(*, annotator_id: int, key_ids: Iterable[int]) -> list[int]:
    """``key_ids`` in the annotator's own order of check keys (ties, never seen: by id)."""
    return sorted(key_ids, key=lambda key_id: (_share("check-key", annotator_id, key_id), key_id))


def check_served_unsubmitted(*, user_id: int, study_id: int) -> CheckServing | None:
    """The annotator's served check key of the study not yet submitted, if any."""
    submitted = Annotation.objects.filter(
        key_id=OuterRef("key_id"), annotator_id=user_id, status=Annotation.Status.SUBMITTED
    )
    return (
        CheckServing.objects.filter(annotator_id=user_id, key__study_id=study_id)
        .exclude(Exists(submitted))
        .order_by("served_at", "id")
        .first()
    )


def check_keys_eligible(*, study_id: int, user_id: int) -> list[int]:
    """Ids of the study's submitted gold check keys that the annotator may be served:
    never served to them, not annotated by them, not in one of their assignments. One
    query."""
    return list(
        Key.objects.filter(
            study_id=study_id,
            gold__status=GoldAnnotation.Status.SUBMITTED,
            gold__is_check=True,
        )
        .exclude(Exists(CheckServing.objects.filter(annotator_id=user_id, key=OuterRef("pk"))))
        .exclude(Exists(Annotation.objects.filter(annotator_id=user_id, key=OuterRef("pk"))))
        .exclude(
            Exists(
                AssignmentKey.objects.filter(assignment__annotator_id=user_id, key=OuterRef("pk"))
            )
        )
        .values_list("pk", flat=True)
    )


def check_slot(*, study_id: int, user_id: int) -> int:
    """The annotator's current slot in the study: their submitted annotations in it."""
    return Annotation.objects.filter(
        annotator_id=user_id, key__study_id=study_id, status=Annotation.Status.SUBMITTED
    ).count()


def check_serve(
    *,
    study_id: int,
    study_seed: int,
    rate: float,
    user_id: int,
    assignment_id: int,
) -> int | None:
    """The check key the annotator is to work on next in the study, or None: one served
    to them and not yet submitted (resumed); else the one their current slot draws,
    served now (recorded); None when the slot draws none or no check key is eligible.
    Asked twice, it answers the same (the second call resumes what the first served)."""
    if rate <= 0.0:
        return None
    served = check_served_unsubmitted(user_id=user_id, study_id=study_id)
    if served is not None:
        return served.key_id
    slot = check_slot(study_id=study_id, user_id=user_id)
    if not slot_draws_check(
        study_id=study_id, study_seed=study_seed, annotator_id=user_id, slot=slot, rate=rate
    ):
        return None
    eligible = check_keys_eligible(study_id=study_id, user_id=user_id)
    if not eligible:
        return None
    key_id = check_key_order(annotator_id=user_id, key_ids=eligible)[0]
    try:
        with transaction.atomic():
            CheckServing.objects.get_or_create(
                annotator_id=user_id,
                key_id=key_id,
                defaults={"assignment_id": assignment_id, "slot": slot},
            )
    except IntegrityError:
        # A second request served it between the read and the insert: it is served.
        pass
    return key_id
