"""The label rule has one home, ``annotate.labels``: no other module of ``annotate`` or
``reports`` spells a label or a kind, codes them as numbers, or maps one to the other.

A second encoding drifts: the review queue once coded shallow+semantic as 3 and the
reports as 4, each with its own copy of the rule. The scan reads every module's syntax
tree (migrations aside: they freeze the values of their day), so it sees literals, not
words in prose.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from annotate.labels import KINDS, LABEL_KEYS, LABELS

ROOT = Path(__file__).resolve().parents[3]
HOME = ROOT / "annotate" / "labels.py"
SCANNED = ("annotate", "reports")
# The names of the label codes and of the kinds' bits, as the core spells them.
CODE_NAMES = {"SHALLOW", "SEMANTIC", "SHALLOW_SEMANTIC", "NOT_COVERED"}
VOCABULARY = set(LABELS) | set(KINDS) | set(LABEL_KEYS)
# A SQL CASE over a kind or a label (an error message may quote them: it codes nothing).
SQL_LITERALS = tuple(f"when '{word}'" for word in sorted(VOCABULARY))


def _mentions_vocabulary(node: ast.AST) -> bool:
    """A dict key naming a kind or a label: ``"shallow"``, ``Pattern.Kind.SHALLOW.value``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in VOCABULARY
    text = ast.unparse(node).upper()
    return any(name in text for name in ("SHALLOW", "SEMANTIC", "NOT_COVERED"))


def encodings_in(source: str) -> list[tuple[int, str]]:
    """The (line, what) of each literal in ``source`` that encodes a label or a kind."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in VOCABULARY:
                found.append((node.lineno, f"the string {node.value!r}"))
            elif any(literal in node.value.lower() for literal in SQL_LITERALS):
                found.append((node.lineno, "a kind or a label as a SQL literal"))
        elif isinstance(node, ast.Dict):
            pairs = zip(node.keys, node.values, strict=True)
            if any(
                key is not None
                and _mentions_vocabulary(key)
                and isinstance(value, ast.Constant)
                and type(value.value) is int
                for key, value in pairs
            ):
                found.append((node.lineno, "a dict of kinds or labels to numbers"))
        elif isinstance(node, ast.List | ast.Tuple):
            names = {e.id for e in node.elts if isinstance(e, ast.Name)}
            if len(names & CODE_NAMES) >= 2 and not isinstance(node.ctx, ast.Store):
                found.append((node.lineno, "a table of label codes"))
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
                if names & CODE_NAMES:
                    found.append((statement.lineno, "label codes defined"))
    return found


def scanned_modules() -> list[Path]:
    return sorted(
        path
        for folder in SCANNED
        for path in (ROOT / folder).rglob("*.py")
        if "migrations" not in path.parts and path != HOME
    )


@pytest.mark.parametrize(
    "source",
    [
        # The review queue's own bits.
        "KIND_BITS = {\n    Pattern.Kind.SHALLOW.value: 1,\n    Pattern.Kind.SEMANTIC.value: 2,\n"
        "    Pattern.Kind.SHALLOW_SEMANTIC.value: 3,\n}",
        # The reports' bits and codes.
        'KIND_BITS = {"shallow": 1, "semantic": 2, "shallow+semantic": 4}',
        "SHALLOW, SEMANTIC, SHALLOW_SEMANTIC, NOT_COVERED = range(4)",
        "TABLE = np.array([NOT_COVERED, SHALLOW, SEMANTIC, SHALLOW_SEMANTIC])",
        'CODE = {"not-covered": 0, "shallow": 1}',
        # The workspace's own label strings.
        'LABEL_NOT_COVERED = "not-covered"',
        "if kind == 'shallow+semantic':\n    pass",
        # A SQL encoding.
        "SQL = \"SELECT CASE p.kind WHEN 'shallow' THEN 1 ELSE 4 END\"",
    ],
)
def test_a_second_encoding_is_found(source):
    assert encodings_in(source)


@pytest.mark.parametrize(
    "source",
    [
        "from annotate.labels import KIND_BITS, LABELS, NOT_COVERED",
        "covered = grid != NOT_COVERED",
        "labels = dict(zip(LABEL_KEYS, LABELS, strict=True))",
        '"""A label is shallow, semantic or shallow+semantic from its patterns."""',
        'HELP = "a pattern of kind shallow+semantic, or not-covered when none"',
        "KINDS = [choice for choice, _ in Pattern.Kind.choices]",
        "KIND_UNKNOWN = \"must be 'shallow', 'semantic' or 'shallow+semantic'\"",
    ],
)
def test_using_the_core_is_no_encoding(source):
    assert encodings_in(source) == []


def test_the_scan_reads_the_modules_that_use_labels():
    names = {path.relative_to(ROOT).as_posix() for path in scanned_modules()}
    assert {"annotate/selectors/annotations.py", "reports/stats/labels.py"} <= names
    assert "reports/selectors/study_arrays.py" in names
    assert "annotate/labels.py" not in names


def test_no_module_but_annotate_labels_encodes_labels_or_kinds():
    found = {
        path.relative_to(ROOT).as_posix(): lines
        for path in scanned_modules()
        if (lines := encodings_in(path.read_text(encoding="utf-8")))
    }
    assert not found, (
        "labels and kinds are encoded in annotate.labels only; import them from there:\n"
        + "\n".join(f"{name}:{n}: {what}" for name, lines in found.items() for n, what in lines)
    )
