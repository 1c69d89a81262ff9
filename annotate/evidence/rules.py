"""A shallow pattern's rule and where it fires (docs/evidence.md, "Rules").

A rule is ``{"type": "token" | "ngram" | "suffix", "value": str}``:

- ``token``: the example's trigger token, without its leading space, equals ``value``;
- ``ngram``: the example's text, trailing spaces removed, ends with ``value`` (the final
  1–3 tokens of the prefix);
- ``suffix``: the last whitespace-separated word of the text ends with ``value``.

Matching is case-insensitive when ``value`` is all lowercase, case-sensitive otherwise.
Pure Python: the web processes validate rules with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

RULE_TYPES = ("token", "ngram", "suffix")
MAX_RULE_VALUE = 100  # characters
MAX_NGRAM_WORDS = 3


class RuleError(ValueError):
    """A rule that is not well formed; the message names the problem."""


def validate_rule(rule: Any) -> dict[str, str] | None:
    """The rule as stored (``None`` for none), or ``RuleError`` naming what is wrong."""
    if rule is None:
        return None
    if not isinstance(rule, Mapping):
        raise RuleError('a rule is null or an object {"type": ..., "value": ...}')
    extra = sorted(set(rule) - {"type", "value"})
    if extra:
        raise RuleError(f"a rule has only the fields type and value, not {', '.join(extra)}")
    kind, value = rule.get("type"), rule.get("value")
    if kind not in RULE_TYPES:
        raise RuleError(f"rule type must be one of {', '.join(RULE_TYPES)}, not {kind!r}")
    if not isinstance(value, str) or not value.strip():
        raise RuleError("a rule's value must be a non-empty string")
    if len(value) > MAX_RULE_VALUE:
        raise RuleError(f"a rule's value is at most {MAX_RULE_VALUE} characters")
    if kind in ("token", "suffix") and any(c.isspace() for c in value.strip()):
        raise RuleError(f"a {kind} rule's value is one word, without spaces inside")
    if kind == "ngram" and len(value.split()) > MAX_NGRAM_WORDS:
        raise RuleError(f"an ngram rule's value is the prefix's final 1–{MAX_NGRAM_WORDS} tokens")
    return {"type": str(kind), "value": value}


def _fold(value: str) -> tuple[str, bool]:
    """(value, case_sensitive): all-lowercase values match any case."""
    return value, value != value.lower()


def rule_matches(rule: Mapping[str, str], text: str, trigger_token: str) -> bool:
    """Whether the (valid) rule fires on one example: its prefix ``text`` and its
    ``trigger_token`` as decoded."""
    value, sensitive = _fold(rule["value"])
    kind = rule["type"]
    if kind == "token":
        subject = trigger_token.lstrip()
        if sensitive:
            return subject == value
        return subject.lower() == value
    if kind == "ngram":
        subject = text.rstrip()
        needle = value
    else:  # suffix
        words = text.split()
        subject = words[-1] if words else ""
        needle = value.strip()
    if not sensitive:
        subject = subject.lower()
    return subject.endswith(needle)


def rule_hits(rule: Mapping[str, str], examples: Iterable[tuple[str, str]]) -> list[bool]:
    """``rule_matches`` over (text, trigger_token) pairs."""
    return [rule_matches(rule, text, trigger) for text, trigger in examples]
