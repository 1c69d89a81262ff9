"""Writes of the annotation domain, one module per sub-domain (as ``annotate.apis``).

Every service is keyword-only and runs in one transaction. ``ServiceError`` is what a
domain rule raises when it refuses a write (the API answers 400 with its ``code``).
"""

from __future__ import annotations


class ServiceError(Exception):
    """A domain rule refused the write. ``message`` is meant for people (API: 400);
    ``code`` names the rule for clients that translate it (annotate.api_errors)."""

    def __init__(self, message: str, *, code: str = "rule_violation") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
