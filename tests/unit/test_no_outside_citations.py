"""Nothing in the repository cites a text outside it: no code, test or doc refers to the
specification file that lives beside the checkout, nor to an issue number ("issue" and
a number, with or without "#"). Such a reference means nothing to a reader of the
repository; cite the docs page and heading (docs/science.md, "Labels"), or say the rule.

The shared corpora beside the checkout (``../shared/corpora``) are data that tests and
benches read, not a citation: their paths are allowed.

Every tracked file is read (``git ls-files``), binary ones aside.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

# Built from parts so that this file does not match itself.
SPEC = "DES" + "IGN"
CITATIONS = (
    # The specification by name: "<SPEC> §3.2", "<SPEC>.md", "<SPEC>: 64", "where <SPEC>
    # is silent". The word in capitals is used for nothing else in the repository.
    re.compile(r"\b" + SPEC + r"\b"),
    # An issue by number: the word "issue" or "issues", an optional "#", then digits.
    re.compile(r"\bissues?\s*#?\s*[0-9]+", re.IGNORECASE),
)
# Folders whose files are not the project's own text.
SKIPPED_PREFIXES = ("frontend/node_modules/",)


def citations_in(text: str) -> list[tuple[int, str]]:
    """The (line number, line) of each line of ``text`` that cites an outside text."""
    return [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if any(pattern.search(line) for pattern in CITATIONS)
    ]


def tracked_files() -> list[str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the tracked files cannot be listed")
    result = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "ls-files", "-z"],
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.skip(f"not a git checkout: {result.stderr.decode(errors='replace').strip()}")
    names = [name for name in result.stdout.decode("utf-8").split("\0") if name]
    return [name for name in names if not name.startswith(SKIPPED_PREFIXES)]


@pytest.mark.parametrize(
    "line",
    [
        f"See {SPEC} §3.2 for the order.",
        f"the specification is ../shared/{SPEC}.md",
        f"keep_k: int = 64  # ({SPEC}: 64)",
        "after issue" + " 12, the first edit creates the draft",
        "(issue" + " #12, item 5)",
        "Issue" + " 13's columns",
        "the code before issues" + " 11 and 12",
    ],
)
def test_a_citation_of_an_outside_text_is_found(line):
    assert citations_in(f"first line\n{line}\n") == [(2, line)]


@pytest.mark.parametrize(
    "line",
    [
        'CORPUS = REPO / ".." / "shared" / "corpora" / "wikitext103-valid"',
        "the shared corpora at ../shared/corpora/wikitext103-valid/wiki.valid.tokens",
        'docs/science.md, "Labels": covered by a pattern tagged both',
        "the design of the workspace; an issue with the tokenizer",
        "a tissue 3 cm wide",
    ],
)
def test_the_rule_and_the_shared_corpora_are_not_citations(line):
    assert citations_in(line) == []


def test_no_tracked_file_cites_a_text_outside_the_repository():
    found: dict[str, list[tuple[int, str]]] = {}
    for name in tracked_files():
        path = REPO_ROOT / name
        if not path.is_file():  # deleted in the working tree, or a submodule
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:  # binary: images, archives
            continue
        lines = citations_in(data.decode("utf-8", errors="replace"))
        if lines:
            found[name] = lines
    if found:
        report = "\n".join(
            f"{name}:{number}: {line[:120]}"
            for name, lines in found.items()
            for number, line in lines
        )
        pytest.fail(
            f"{len(found)} files cite the specification outside the repository or an issue "
            "number; cite the docs page and heading, or state the rule:\n" + report,
            pytrace=False,
        )
