"""Writes of accounts: annotators, their one-time password links, new usernames."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from ..permissions import ANNOTATOR_GROUP, user_can_manage_account
from ..usernames import username_mixes_scripts, username_normal, username_skeleton
from . import ServiceError

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
