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
        "value_agreement_every_key",
        "perturbation",
        # Held-out scores (none scored in the hand study: n 0, empty cells).
        "pattern_scores",
        # Gold (none in the hand study): each annotator's agreement with it is null, and
        # §4 over the curated keys counts no key.
        "agreement_with_gold",
        "value_agreement_gold",
    }
    printed = capsys.readouterr().out
    assert "covered 53.3%" in printed
    assert "§4 over every key: not available (the mining pass did not count every key" in printed
    # Key A's argmax is its next token (layer 1), key B's its trigger token (layer 2).
    assert "§4 over the sampled keys (2 keys, 0 unknown next): (a) 50.00% [" in printed
    # The same report gives the same SVG, byte for byte.
    again = tmp_path / "again"
    call_command("report", "--study", str(hand_study.pk), "--out", str(again))
    assert (again / "figure2.svg").read_bytes() == (out / "figure2.svg").read_bytes()


def test_the_report_command_prints_value_agreement_over_every_key(hand_study, tmp_path, capsys):
    hand_study.value_agreement = {
        "format": "ffkv.value-agreement/v1",
        "vocab_size": 49152,
        "variants": ["without_final_norm"],
        "final_norm": None,
        "layers": [
            {
                "layer": 1,
                "n_keys": 1536,
                "next_end": 12,
                "next_unknown": 3,
                "next_token": {"without_final_norm": 5},
                "trigger_token": {"without_final_norm": 1},
            }
        ],
    }
    hand_study.save()
    call_command("report", "--study", "hand study", "--out", str(tmp_path))
    out = capsys.readouterr().out
    assert "§4 over every key (1536 keys, 3 with an unknown next token left out of (a)" in out
    assert "(a) next token, without final norm: 0.33% [" in out and "(5/1533)" in out
    assert "(b) trigger, without final norm: 0.07% [0.01%, 0.37%] (1/1536)" in out
    hand_study.is_causal = False
    hand_study.save()
    call_command("report", "--study", "hand study", "--out", str(tmp_path))
    assert "§4 over every key: does not apply (encoders have no next token)" in (
        capsys.readouterr().out
    )


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
