"""Writes of an annotator's flags on a key."""

from __future__ import annotations

from django.contrib.auth.models import User

from ..models import (
    NOTE_MAX_LENGTH,
    Key,
    KeyFlag,
)
from . import ServiceError
from .annotations import NOTE_TOO_LONG

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
