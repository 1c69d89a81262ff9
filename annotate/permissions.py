"""Roles: admins are Django staff; annotators belong to the ``annotator`` group; curators
(who review annotations and build the gold set) are admins or members of ``curator``."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from rest_framework.permissions import BasePermission

# A request's user, signed in or not (what the selectors are asked for).
User = AbstractBaseUser | AnonymousUser

ANNOTATOR_GROUP = "annotator"
CURATOR_GROUP = "curator"
# Set by ``annotate.backends.RoleModelBackend`` on the request's user, from the same query.
ROLE_ATTRIBUTE = "in_annotator_group"
CURATOR_ATTRIBUTE = "in_curator_group"


def user_is_annotator(user) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    known = getattr(user, ROLE_ATTRIBUTE, None)
    if known is not None:
        return bool(known)
    return user.groups.filter(name=ANNOTATOR_GROUP).exists()


def user_is_curator(user) -> bool:
    """Admins, and active members of the ``curator`` group."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_staff:
        return True
    known = getattr(user, CURATOR_ATTRIBUTE, None)
    if known is not None:
        return bool(known)
    return user.groups.filter(name=CURATOR_GROUP).exists()


def user_can_manage_account(actor, account) -> bool:
    """Whether ``actor`` (an admin) may reset, link or deactivate ``account``: a superuser
    may manage anyone; other staff only accounts that are neither staff nor superusers.
    Otherwise a staff member could reset a superuser's password (one who is also in the
    annotator group) through the annotator screens, and sign in as them."""
    if actor.is_superuser:
        return True
    return not (account.is_staff or account.is_superuser)


class IsAnnotator(BasePermission):
    message = "Only annotators can do this."

    def has_permission(self, request, view) -> bool:
        return user_is_annotator(request.user)


class IsAdmin(BasePermission):
    message = "Only admins can do this."

    def has_permission(self, request, view) -> bool:
        return bool(request.user.is_authenticated and request.user.is_staff)


class IsCurator(BasePermission):
    message = "Only curators can do this."

    def has_permission(self, request, view) -> bool:
        return user_is_curator(request.user)
