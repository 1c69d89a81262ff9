"""A line's ``annotations``, their ``patterns`` and ``labels`` (each what the patterns
give), the key's ``gold`` and its ``flags``."""

from __future__ import annotations

import itertools
from collections.abc import Set as AbstractSet
from typing import Any

from annotate.evidence.rules import RuleError, validate_rule
from annotate.labels import LABELS, label_for_kinds
from annotate.limits import MAX_ANNOTATORS_PER_KEY, MAX_PATTERNS_PER_ANNOTATION
from annotate.models import Annotation, GoldPattern, KeyFlag, Pattern
from annotate.services import ServiceError
from annotate.services.flags import key_flag_checked
from annotate.services.patterns import PATTERN_MIN_PREFIXES

from ..contract.records import (
    FLAG,
    GOLD,
    GOLD_PATTERN,
    MAX_INT,
    SCORE_NAMES,
)
from .fields import (
    _FLAG_OPTIONAL,
    _GOLD_ADDITIVE,
    _GOLD_PATTERN_ADDITIVE,
    _MAX_DESCRIPTION,
    _MAX_FLAG_NOTE,
    _MAX_NOTE,
    _VERSION,
    _bool,
    _float,
    _int,
    _LineError,
    _list,
    _object,
    _str,
    _time,
    _times,
    _username_of,
)
from .messages import (
    FLAG_REASON_UNKNOWN,
    FLAG_TWICE,
    KIND_UNKNOWN,
    LABEL_COUNT,
    LABEL_MISMATCH,
    LABEL_UNKNOWN,
    NOT_INT,
    NOT_INT_OR_NULL,
    NOT_NEGATIVE_NUMBER,
    NOT_TIME_OR_NULL,
    PATTERN_RANK_REPEATED,
    PATTERN_RANK_UNKNOWN,
    PATTERN_TOO_FEW,
    RULE_ON_SEMANTIC,
    SCORE_NOT_UNIT,
    SOURCE_ANNOTATOR_NOT_HERE,
    SOURCE_OF_WRITTEN,
    SOURCE_PATTERN_NEEDS_ANNOTATOR,
    SOURCE_PATTERN_OUT_OF_RANGE,
    SOURCE_UNKNOWN,
    STATUS_UNKNOWN,
    TOO_MANY_FLAGS,
    TOO_MANY_PATTERNS,
)


def _annotation_additive(ann: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """The annotation's additive fields that the line has, checked, into ``out``."""
    if "note" in ann:
        out["note"] = _str(ann["note"], f"{path}.note", _MAX_NOTE)
    if "version" in ann:
        out["version"] = _int(ann["version"], f"{path}.version", *_VERSION)
    _times(ann, out, path)
    if "submitted_at" in ann:
        value = ann["submitted_at"]
        if value is not None and not isinstance(value, str):
            raise _LineError(f"{path}.submitted_at", NOT_TIME_OR_NULL)
        out["submitted_at"] = None if value is None else _time(value, f"{path}.submitted_at")


def _annotation_more(ann: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """The annotation's additive active time, guideline version and check flag."""
    if "active_seconds" in ann:
        seconds = _float(ann["active_seconds"], f"{path}.active_seconds")
        if seconds < 0:
            raise _LineError(f"{path}.active_seconds", NOT_NEGATIVE_NUMBER)
        out["active_seconds"] = seconds
    if "guideline_version" in ann:
        value = ann["guideline_version"]
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INT
        ):
            raise _LineError(f"{path}.guideline_version", NOT_INT_OR_NULL)
        out["guideline_version"] = value
    if "check" in ann:
        out["check"] = _bool(ann["check"], f"{path}.check")


def _patterns(
    raw: Any,
    path: str,
    seen_ranks: set[int],
    required: AbstractSet[str],
    optional: AbstractSet[str],
) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], dict[int, set[str]]]:
    """An annotation's ``patterns``: each (as the file has it, normalised with its
    times), and the kinds that cover each rank."""
    out = []
    kinds: dict[int, set[str]] = {}
    raw_patterns = _list(raw, path)
    if len(raw_patterns) > MAX_PATTERNS_PER_ANNOTATION:
        raise _LineError(path, TOO_MANY_PATTERNS.format(n=len(raw_patterns)))
    for q, raw_pattern in enumerate(raw_patterns):
        ppath = f"{path}[{q}]"
        pattern = _object(raw_pattern, ppath, required, optional)
        description = _str(
            pattern["description"], f"{ppath}.description", _MAX_DESCRIPTION, non_empty=True
        ).strip()
        kind = pattern["kind"]
        if kind not in Pattern.Kind.values:
            raise _LineError(f"{ppath}.kind", KIND_UNKNOWN)
        covered = [
            _int(r, f"{ppath}.prefix_ranks[{i}]", 1, MAX_INT)
            for i, r in enumerate(_list(pattern["prefix_ranks"], f"{ppath}.prefix_ranks"))
        ]
        if len(set(covered)) != len(covered):
            raise _LineError(f"{ppath}.prefix_ranks", PATTERN_RANK_REPEATED)
        unknown = [r for r in covered if r not in seen_ranks]
        if unknown:
            raise _LineError(f"{ppath}.prefix_ranks", PATTERN_RANK_UNKNOWN.format(rank=unknown[0]))
        if len(covered) < PATTERN_MIN_PREFIXES:
            raise _LineError(f"{ppath}.prefix_ranks", PATTERN_TOO_FEW)
        for r in covered:
            kinds.setdefault(r, set()).add(kind)
        normal = {"description": description, "kind": kind, "prefix_ranks": sorted(covered)}
        _times(pattern, normal, ppath)
        _evidence(pattern, normal, ppath)
        out.append((pattern, normal))
    return out, kinds


def _evidence(pattern: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """A pattern's ``rule`` (null, or one ``validate_rule`` takes, on a pattern with a
    shallow side: as the pattern editor takes it) and ``scores`` ({} or the four held-out
    scores, each from 0 to 1 or null), where the line has them."""
    if "rule" in pattern:
        try:
            rule = validate_rule(pattern["rule"])
        except RuleError as exc:
            raise _LineError(f"{path}.rule", str(exc)) from None
        if rule is not None and out["kind"] == Pattern.Kind.SEMANTIC:
            raise _LineError(f"{path}.rule", RULE_ON_SEMANTIC)
        out["rule"] = rule
    if "scores" in pattern:
        scores = _object(pattern["scores"], f"{path}.scores", set(), set(SCORE_NAMES))
        for name, value in scores.items():
            if value is not None and (
                type(value) not in (int, float) or not 0 <= value <= 1  # NaN fails too
            ):
                raise _LineError(f"{path}.scores.{name}", SCORE_NOT_UNIT)
        out["scores"] = {
            name: None if scores[name] is None else float(scores[name])
            for name in SCORE_NAMES
            if name in scores
        }


# The label of every set of kinds that can cover a prefix (``label_for_kinds``), looked
# up once per prefix and annotation instead of computed.
_LABEL_OF_KINDS = {
    frozenset(kinds): label_for_kinds(kinds)
    for n in range(len(Pattern.Kind.values) + 1)
    for kinds in itertools.combinations(Pattern.Kind.values, n)
}
_NOT_COVERED = label_for_kinds(())


def _labels(raw: Any, path: str, ranks: list[int], kinds: dict[int, set[str]]) -> None:
    """An annotation's ``labels``: one per prefix, each what its patterns make it."""
    labels = _list(raw, path)
    for i, label in enumerate(labels):
        if label not in LABELS:
            raise _LineError(f"{path}[{i}]", LABEL_UNKNOWN.format(label=label))
    if len(labels) != len(ranks):
        raise _LineError(path, LABEL_COUNT.format(n=len(ranks), m=len(labels)))
    for i, (rank, label) in enumerate(zip(ranks, labels, strict=True)):
        covering = kinds.get(rank)
        expected = _NOT_COVERED if covering is None else _LABEL_OF_KINDS[frozenset(covering)]
        if label != expected:
            raise _LineError(f"{path}[{i}]", LABEL_MISMATCH.format(label=label, expected=expected))


def _gold(
    raw: Any, seen_ranks: set[int], ranks: list[int], annotations: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The line's ``gold``: null, or the key's curated annotation, checked like an
    annotation; its ``annotator`` is its curator (or null), and each pattern's source is
    "written" (no source_annotator, no source_pattern) or "adopted" (source_annotator a
    username or null; source_pattern null or the 0-based place of the adopted pattern in
    source_annotator's ``patterns`` on this line)."""
    if raw is None:
        return None
    path = "gold"
    gold = _object(raw, path, GOLD.required, _GOLD_ADDITIVE)
    curator = gold["annotator"]
    out: dict[str, Any] = {
        "annotator": None if curator is None else _username_of(curator, f"{path}.annotator")
    }
    if gold["status"] not in Annotation.Status.values:
        raise _LineError(f"{path}.status", STATUS_UNKNOWN)
    out["status"] = gold["status"]
    patterns, kinds = _patterns(
        gold["patterns"],
        f"{path}.patterns",
        seen_ranks,
        GOLD_PATTERN.required,
        _GOLD_PATTERN_ADDITIVE,
    )
    n_patterns = {a["annotator"]: len(a["patterns"]) for a in annotations}
    for q, (pattern, normal) in enumerate(patterns):
        ppath = f"{path}.patterns[{q}]"
        source = pattern.get("source", GoldPattern.Source.WRITTEN)
        if source not in GoldPattern.Source.values:
            raise _LineError(f"{ppath}.source", SOURCE_UNKNOWN)
        by, place = pattern.get("source_annotator"), pattern.get("source_pattern")
        if source == GoldPattern.Source.WRITTEN:
            for name in ("source_annotator", "source_pattern"):
                if pattern.get(name) is not None:
                    raise _LineError(f"{ppath}.{name}", SOURCE_OF_WRITTEN)
        if by is not None:
            by = _username_of(by, f"{ppath}.source_annotator")
        if place is not None:
            if isinstance(place, bool) or not isinstance(place, int):
                raise _LineError(f"{ppath}.source_pattern", NOT_INT)
            if by is None:
                raise _LineError(f"{ppath}.source_pattern", SOURCE_PATTERN_NEEDS_ANNOTATOR)
            if by not in n_patterns:
                raise _LineError(
                    f"{ppath}.source_annotator", SOURCE_ANNOTATOR_NOT_HERE.format(name=by)
                )
            n = n_patterns[by]
            if not 0 <= place < n:
                raise _LineError(
                    f"{ppath}.source_pattern",
                    SOURCE_PATTERN_OUT_OF_RANGE.format(name=by, n=n, last=n - 1),
                )
        normal.update(source=source, source_annotator=by, source_pattern=place)
    out["patterns"] = [normal for _, normal in patterns]
    _labels(gold["labels"], f"{path}.labels", ranks, kinds)
    _annotation_additive(gold, out, path)
    if "is_check" in gold:
        out["is_check"] = _bool(gold["is_check"], f"{path}.is_check")
    return out


def _flags(raw: Any) -> list[dict[str, Any]]:
    """The line's ``flags`` (additive): the annotators' flags on the key, each a known
    ``reason``, the ``annotator``'s username (one flag each), and optionally a ``note``
    (checked as a flag's note is written: ``annotate.services.flags.key_flag_checked``) and
    ``created_at``; by username, as the export writes them."""
    flags = _list(raw, "flags")
    if len(flags) > MAX_ANNOTATORS_PER_KEY:
        raise _LineError("flags", TOO_MANY_FLAGS.format(n=len(flags)))
    out = []
    seen: set[str] = set()
    for f, value in enumerate(flags):
        path = f"flags[{f}]"
        flag = _object(value, path, FLAG.required, _FLAG_OPTIONAL)
        name = _username_of(flag["annotator"], f"{path}.annotator")
        if name in seen:
            raise _LineError(f"{path}.annotator", FLAG_TWICE.format(name=name))
        seen.add(name)
        if flag["reason"] not in KeyFlag.Reason.values:
            raise _LineError(f"{path}.reason", FLAG_REASON_UNKNOWN)
        note = _str(flag.get("note", ""), f"{path}.note", _MAX_FLAG_NOTE)
        try:
            note = key_flag_checked(reason=flag["reason"], note=note)
        except ServiceError as exc:
            raise _LineError(f"{path}.note", exc.message) from None
        normal = {"reason": flag["reason"], "note": note, "annotator": name}
        if "created_at" in flag:
            normal["created_at"] = _time(flag["created_at"], f"{path}.created_at")
        out.append(normal)
    return sorted(out, key=lambda x: x["annotator"])
