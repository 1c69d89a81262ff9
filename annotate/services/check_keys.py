"""Check keys: gold keys marked as checks, given to annotators among their own keys.

A check key is drawn when keys are given to an annotator: when an assignment is made,
when it is extended (a raised overlap, annotators added) and when unfinished keys are
handed over at a deactivation. From then on it is a key of that assignment like any
other: listed in (layer, index) order with the rest, counted in its totals, served by
next-key in that order, with the same key screen and annotation state. Only
``AssignmentKey.is_check`` (and the ``CheckServing`` record) knows, and no annotator
response carries either. The annotation made on it has ``is_check=True`` and stays out
of the pooled reports and the batch's figures.

How many: each regular key given is a slot, and a slot draws a check when a SHA-256 of
(study id, study seed, annotator id, the regular key's id), read as a share in [0, 1), is
below the study's rate. So the draw is the same however and whenever the keys are given,
differs between annotators, a higher rate draws every slot that a lower one draws, and a
grant draws for the keys it gives only (an extension or a hand-over never redraws the
keys given before). A rate changed later, or a gold marked as a check later, applies to
keys given from then on; keys already given stay as they are.

Which: the eligible check keys in an order of the annotator's own (a hash of annotator and
key), first come first, among those of a layer that the assignment's regular keys have: a
key of a layer that no other key of the assignment has would tell itself apart. A slot that
finds none there draws nothing (no check from another layer is given instead).

Eligible: a study's key whose gold is submitted and marked as a check, never given to the
annotator before, not annotated by them, not held by them in any assignment, and whose
gold they did not write (its curator) nor gave a pattern to (an adopted pattern's source).
A curator or an admin is never given a check, of any study: they can read gold in review.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Q

from ..models import (
    Annotation,
    AssignmentKey,
    CheckServing,
    GoldAnnotation,
    GoldPattern,
    Key,
    Study,
)
from ..permissions import CURATOR_GROUP

_SCALE = float(2**64)


def _share(*parts: object) -> float:
    """A uniform share in [0, 1) from ``parts`` (the first 8 bytes of their SHA-256)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE


def slot_draws_check(
    *, study_id: int, study_seed: int, annotator_id: int, slot: int, rate: float
) -> bool:
    """Whether the annotator's slot ``slot`` (the id of a regular key given to them) of
    the study draws a check key."""
    if rate <= 0.0:
        return False
    return _share("check-slot", study_id, study_seed, annotator_id, slot) < rate


def check_key_order(*, annotator_id: int, key_ids: Iterable[int]) -> list[int]:
    """``key_ids`` in the annotator's own order of check keys (ties, never seen: by id)."""
    return sorted(key_ids, key=lambda key_id: (_share("check-key", annotator_id, key_id), key_id))


@dataclass(frozen=True)
class Grant:
    """Regular keys just given to an annotator in one of their assignments."""

    assignment_id: int
    annotator_id: int
    study_id: int
    key_ids: Sequence[int]  # in the order given


def check_keys_give(*, grants: Iterable[Grant]) -> int:
    """Draw the check keys that ``grants`` bring and add them to their assignments.

    Called inside the transaction that gave the regular keys, after their rows are
    written. Returns how many check keys were given. A fixed number of queries per study
    whatever the number of keys and annotators: one for the study when its rate is 0.
    """
    by_study: dict[int, list[Grant]] = defaultdict(list)
    for grant in grants:
        if grant.key_ids:
            by_study[grant.study_id].append(grant)
    return sum(_give(study_id=study_id, grants=group) for study_id, group in by_study.items())


def _give(*, study_id: int, grants: list[Grant]) -> int:
    study = Study.objects.filter(pk=study_id, archived=False).values("seed", "check_rate").first()
    if study is None or study["check_rate"] <= 0.0:
        return 0
    candidates = {
        key_id: (layer, curator_id)
        for key_id, layer, curator_id in Key.objects.filter(
            study_id=study_id,
            gold__status=GoldAnnotation.Status.SUBMITTED,
            gold__is_check=True,
        ).values_list("id", "layer", "gold__curator_id")
    }
    if not candidates:
        return 0
    annotator_ids = sorted({grant.annotator_id for grant in grants})
    users = get_user_model().objects.filter(pk__in=annotator_ids)
    # Locked in id order: two grants to one annotator at once (two batches of a study)
    # draw one after the other, so that neither gives a check the other just gave.
    list(users.select_for_update().order_by("pk").values_list("pk", flat=True))
    barred = set(
        users.filter(Q(is_staff=True) | Q(groups__name=CURATOR_GROUP)).values_list("pk", flat=True)
    )
    grants = [grant for grant in grants if grant.annotator_id not in barred]
    if not grants:
        return 0
    wanted = {"key_id__in": list(candidates)}
    who = [grant.annotator_id for grant in grants]
    # Each part unordered: SQLite takes no ORDER BY inside a compound SELECT.
    parts = [
        AssignmentKey.objects.filter(assignment__annotator_id__in=who, **wanted).values_list(
            "assignment__annotator_id", "key_id"
        ),
        Annotation.objects.filter(annotator_id__in=who, **wanted).values_list(
            "annotator_id", "key_id"
        ),
        CheckServing.objects.filter(annotator_id__in=who, **wanted).values_list(
            "annotator_id", "key_id"
        ),
        GoldPattern.objects.filter(
            source_annotator_id__in=who, gold__key_id__in=list(candidates)
        ).values_list("source_annotator_id", "gold__key_id"),
    ]
    first, *rest = (part.order_by() for part in parts)
    seen = set(first.union(*rest))
    layers: dict[int, set[int]] = defaultdict(set)
    for assignment_id, layer in (
        AssignmentKey.objects.filter(
            assignment_id__in={grant.assignment_id for grant in grants}, is_check=False
        )
        .values_list("assignment_id", "key__layer")
        .distinct()
    ):
        layers[assignment_id].add(layer)

    rows: list[AssignmentKey] = []
    servings: list[CheckServing] = []
    for grant in grants:
        user = grant.annotator_id
        eligible = [
            key_id
            for key_id in check_key_order(annotator_id=user, key_ids=candidates)
            if candidates[key_id][0] in layers[grant.assignment_id]
            and candidates[key_id][1] != user
            and (user, key_id) not in seen
        ]
        if not eligible:
            continue
        slots: list[int] = []
        for slot in grant.key_ids:
            if slot_draws_check(
                study_id=study_id,
                study_seed=study["seed"],
                annotator_id=user,
                slot=slot,
                rate=study["check_rate"],
            ):
                slots.append(slot)
                if len(slots) == len(eligible):
                    break
        for slot, key_id in zip(slots, eligible, strict=False):
            seen.add((user, key_id))
            rows.append(
                AssignmentKey(assignment_id=grant.assignment_id, key_id=key_id, is_check=True)
            )
            servings.append(
                CheckServing(
                    annotator_id=user,
                    key_id=key_id,
                    assignment_id=grant.assignment_id,
                    drawn_by_id=slot,
                )
            )
    AssignmentKey.objects.bulk_create(rows)
    CheckServing.objects.bulk_create(servings)
    return len(rows)
