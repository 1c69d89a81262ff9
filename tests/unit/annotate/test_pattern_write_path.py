"""Every versioned pattern write, an annotator's or the gold's, goes through one path
(``annotate.services.patterns``): no other service validates a pattern, inserts one or
its prefix links itself, so that the rules, the version bump and the audit record cannot
differ between the two. (The import writes patterns in bulk, checked line by line before:
it is no versioned write.)"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SERVICES = ROOT / "annotate" / "services"
THE_PATH = SERVICES / "patterns.py"
VALIDATORS = {
    "validated_prefixes",
    "validated_description",
    "validated_kind",
    "validated_pattern_count",
}

WRITES = ("Pattern.objects.create", "Pattern.objects.bulk_create")
LINK_WRITES = (".prefixes.through", ".prefixes.set")
# A suggestion's prefix links are the suggestion's own (annotate.services.suggestions):
# no pattern is made or changed through them.
NOT_PATTERNS = ("Suggestion.", "suggestion.")


def pattern_writes_in(source: str) -> list[tuple[int, str]]:
    """The (line, what) of each call in ``source`` that writes or validates a pattern."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        text = ast.unparse(func)
        if name in VALIDATORS:
            found.append((node.lineno, name))
        elif text.endswith(WRITES) or (
            any(part in text for part in LINK_WRITES) and not text.startswith(NOT_PATTERNS)
        ):
            found.append((node.lineno, text))
    return found


@pytest.mark.parametrize(
    "source",
    [
        "description = validated_description(description)",
        "pattern = GoldPattern.objects.create(gold=gold, kind=kind)",
        "GoldPattern.prefixes.through.objects.bulk_create(links)",
        "pattern.prefixes.set(validated_prefixes(gold.key_id, prefixes))",
    ],
)
def test_a_pattern_write_of_its_own_is_found(source):
    assert pattern_writes_in(source)


def test_a_suggestions_own_prefix_links_are_not_a_pattern_write():
    assert not pattern_writes_in("Suggestion.prefixes.through.objects.filter(suggestion_id=1)")
    assert not pattern_writes_in("suggestion.prefixes.set(prefixes)")
    assert pattern_writes_in("Pattern.prefixes.through.objects.filter(pattern_id=1)")


def test_only_the_pattern_path_writes_patterns():
    found = {
        path.name: lines
        for path in sorted(SERVICES.glob("*.py"))
        if path != THE_PATH and (lines := pattern_writes_in(path.read_text(encoding="utf-8")))
    }
    assert not found, found
    assert pattern_writes_in(THE_PATH.read_text(encoding="utf-8"))
