"""Writes of the annotation domain."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.db import transaction

from .models import Assignment, Batch, Key, Study
from .permissions import ANNOTATOR_GROUP


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


@transaction.atomic
def batch_create(*, study: Study, name: str, keys: list[Key], created_by=None) -> Batch:
    batch = Batch.objects.create(study=study, name=name, created_by=created_by)
    batch.keys.add(*keys)
    return batch


@transaction.atomic
def assignment_create(*, batch: Batch, annotator) -> Assignment:
    assignment, _ = Assignment.objects.get_or_create(batch=batch, annotator=annotator)
    return assignment
