"""``make test``'s ``--dist loadgroup`` keeps the tests of one ``xdist_group`` in one
process: the SmolLM2 tests (tests/conftest.py, SMOLLM2_GROUP) share one load of the model
only there. pytest 9.2.0 stores a node's id where pytest-xdist 3.8.0 no longer renames it,
and the groups were spread over the processes like any other test (docs/benchmarks.md,
"Test suite time")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Outside the project's configuration: no Django, no cache in the temporary folder.
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:django", "-p", "no:cacheprovider"]
GROUPED = 6
LOOSE = 6

TESTS = f"""
import os
from pathlib import Path

import pytest

OUT = Path(__file__).parent / "workers"


def _record(name):
    (OUT / name).write_text(os.environ["PYTEST_XDIST_WORKER"])


@pytest.mark.xdist_group("model")
@pytest.mark.parametrize("i", range({GROUPED}))
def test_grouped(i):
    _record(f"grouped-{{i}}")


@pytest.mark.parametrize("i", range({LOOSE}))
def test_loose(i):
    _record(f"loose-{{i}}")
"""


def test_the_tests_of_one_group_run_in_one_process(tmp_path: Path):
    (tmp_path / "workers").mkdir()
    (tmp_path / "test_groups.py").write_text(TESTS)
    result = subprocess.run(
        [*PYTEST, "-n", "2", "--dist", "loadgroup", "-q", "test_groups.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    ran = {path.name: path.read_text() for path in (tmp_path / "workers").iterdir()}
    assert len(ran) == GROUPED + LOOSE
    grouped = {worker for name, worker in ran.items() if name.startswith("grouped-")}
    assert len(grouped) == 1, f"the group ran in {sorted(grouped)}"
    # Both processes had work: the group is not the only thing that kept them apart.
    assert set(ran.values()) == {"gw0", "gw1"}
