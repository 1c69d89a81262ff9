"""Reads of accounts: the annotators an admin manages, a user by id or name."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import (
    Count,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from ..models import (
    Annotation,
    AssignmentKey,
)
from ..permissions import ANNOTATOR_GROUP
from ..usernames import username_normal


def _manageable_by(users: QuerySet[Any], actor: Any) -> QuerySet[Any]:
    """``users`` that ``actor`` may manage (``annotate.permissions.user_can_manage_account``):
    all of them for a superuser (or no actor: the command line), else those that are
    neither staff nor superusers."""
    if actor is None or actor.is_superuser:
        return users
    return users.filter(is_staff=False, is_superuser=False)


def annotator_list(*, actor: Any = None) -> QuerySet[Any]:
    """Every annotator (active or not) that ``actor`` may manage, with their assigned and
    submitted key counts in live studies: check keys (``annotate.services.check_keys``) and the work
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
