"""`manage.py report`: the four files, readable, and clear errors."""

from __future__ import annotations

import csv
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

pytestmark = pytest.mark.django_db


def test_the_report_command_writes_figure2_and_the_tables(hand_study, tmp_path, capsys):
    out = tmp_path / "report"
    call_command("report", "--study", "hand study", "--out", str(out))
    assert sorted(p.name for p in out.iterdir()) == [
        "figure2.png",
        "figure2.svg",
        "report.csv",
        "report.json",
    ]
    assert (out / "figure2.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (out / "figure2.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for label in ("shallow", "semantic", "shallow+semantic", "not-covered"):
        assert label in svg
    report = json.loads((out / "report.json").read_text())
    assert report["coverage"]["overall"]["share_covered"] == pytest.approx(8 / 15)
    rows = list(csv.DictReader((out / "report.csv").open()))
    assert {r["section"] for r in rows} == {
        "figure2",
        "coverage",
        "agreement",
        "pattern_jaccard",
        "value_agreement",
        "perturbation",
    }
    assert "covered 53.3%" in capsys.readouterr().out
    # The same report gives the same SVG, byte for byte.
    again = tmp_path / "again"
    call_command("report", "--study", str(hand_study.pk), "--out", str(again))
    assert (again / "figure2.svg").read_bytes() == (out / "figure2.svg").read_bytes()


def test_the_report_command_filters_and_refuses_bad_arguments(hand_study, tmp_path):
    out = tmp_path / "r"
    call_command(
        "report", "--study", "hand study", "--out", str(out), "--layers", "1", "--include-drafts"
    )
    report = json.loads((out / "report.json").read_text())
    assert report["filters"] == {"annotators": None, "layers": [1], "submitted_only": False}
    with pytest.raises(CommandError, match="--layers takes layers"):
        call_command("report", "--study", "hand study", "--out", str(out), "--layers", "x")
    with pytest.raises(CommandError, match="'zed' annotated no key"):
        call_command("report", "--study", "hand study", "--out", str(out), "--annotators", "zed")
    with pytest.raises(CommandError, match="There is no study"):
        call_command("report", "--study", "missing", "--out", str(out))
