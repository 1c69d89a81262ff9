"""The HTTP API: one view per operation (validate → one service or selector → serialize).

``auth``: sign-in; ``annotator``: an annotator's own keys and annotations; ``admin``:
staff-only studies, batches, assignments and progress.
"""

from .auth import INVALID_CREDENTIALS, LoginApi, LogoutApi, MeApi, user_payload

__all__ = ["INVALID_CREDENTIALS", "LoginApi", "LogoutApi", "MeApi", "user_payload"]
