"""The authentication backend: Django's, plus the annotator role in the same query."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from .permissions import ANNOTATOR_GROUP, CURATOR_ATTRIBUTE, CURATOR_GROUP, ROLE_ATTRIBUTE


def _in_group(name: str) -> RawSQL:
    # Raw rather than Exists(Group.objects.filter(user=OuterRef("pk"))): the ORM takes
    # ~1 ms of CPU to resolve that subquery on every request, the raw EXISTS ~0.1 ms
    # (measured; both are one query with the user's row). Standard SQL: PostgreSQL and SQLite.
    user_table = get_user_model()._meta.db_table
    links = Group.user_set.through._meta.db_table
    groups = Group._meta.db_table
    return RawSQL(
        f"EXISTS (SELECT 1 FROM {links} INNER JOIN {groups} ON {groups}.id = {links}.group_id"
        f" WHERE {links}.user_id = {user_table}.id AND {groups}.name = %s)",
        (name,),
        output_field=BooleanField(),
    )


class RoleModelBackend(ModelBackend):
    """``ModelBackend`` whose per-request user lookup also answers "is an annotator?" and
    "is a curator?".

    Every annotator request asks it (``IsAnnotator``); read with the user's row it costs
    no query of its own (the annotation API's budget: docs/benchmarks.md, "Latest
    figures").
    """

    def get_user(self, user_id: Any) -> Any:
        user = (
            get_user_model()
            ._default_manager.annotate(
                **{
                    ROLE_ATTRIBUTE: _in_group(ANNOTATOR_GROUP),
                    CURATOR_ATTRIBUTE: _in_group(CURATOR_GROUP),
                }
            )
            .filter(pk=user_id)
            .first()
        )
        return user if user is not None and self.user_can_authenticate(user) else None
