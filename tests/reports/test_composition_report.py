"""The report's ``composition`` and ``sparsity`` (docs/composition.md) from figures stored
on the study by hand: report.json, the CSV, the API, `manage.py report`, and the job API
(who may start one, what it refuses)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from mining.models import CompositionJob
from reports.report import report_build, report_csv
from tests.conftest import client_for
from tests.factories import StudyFactory, key_with_prefixes

pytestmark = pytest.mark.django_db


def _both(a, b):
    return {"without_final_norm": a, "with_final_norm": b}


def _layer(layer, base):
    return {
        "layer": layer,
        "active_share": {"mean": base, "q1": base - 0.1, "median": base, "q3": base + 0.1},
        "active_share_tenth": {"mean": 0.2, "q1": 0.1, "median": 0.2, "q3": 0.3},
        "none_agree_share": _both(0.7, 0.75),
        "agree_stopword_share": _both(None, 0.5),
        "residual_final_share": _both(0.3, 0.35),
        "change": _both(
            {"residual": 0.6, "ffn": 0.1, "neither": 0.3},
            {"residual": 0.5, "ffn": 0.2, "neither": 0.3},
        ),
        "final_prob_mean": _both(0.05, 0.1),
    }


COMPOSITION = {
    "format": "ffkv.composition/v1",
    "n_prefixes": 2,
    "final_norm": [False, True],
    "final_norm_path": "model.norm",
    "gated": True,
    "vocab_size": 100,
    "layers": [_layer(1, 0.4), _layer(2, 0.45)],
    "prefix_set": [{"sentence": "A cat sat.", "position": 2}, {"sentence": "Dogs.", "position": 1}],
    "slice": {"prefixes": 2, "held_out": 2, "from_mined": 0, "seed": 0, "note": None},
    "job": 7,
    "computed_at": "2026-12-07T12:00:00+00:00",
}
SPARSITY = {
    "format": "ffkv.sparsity/v1",
    "n_positions": 1000,
    "layers": [
        {
            "layer": layer,
            "density": {"mean": 0.5, "q1": 0.4, "median": 0.5, "q3": 0.6},
            "gini": 0.3,
            "above_tenth_of_peak": 0.25,
        }
        for layer in (1, 2)
    ],
}


def _study(**fields):
    study = StudyFactory(n_layers=2, **fields)
    for layer in (1, 2):
        key_with_prefixes(3, study=study, layer=layer, index=0)
    return study


@pytest.fixture
def composed():
    return _study(name="composed", composition=COMPOSITION, sparsity=SPARSITY)


def test_report_json_carries_the_stored_figures_with_the_papers_captions(composed):
    report = report_build(study=composed, replicates=10)
    composition = report["composition"]
    assert composition["applies"] is True and composition["reason"] is None
    assert composition["layers"] == COMPOSITION["layers"]
    assert composition["prefix_set"] == COMPOSITION["prefix_set"]
    assert composition["final_norm"] == [False, True]
    assert "16-layer" in composition["paper"]["model"]
    assert "Figure 8" in composition["paper"]["none_agree_share"]
    assert report["sparsity"]["layers"] == SPARSITY["layers"]
    # The report's layer filter cuts both.
    only = report_build(study=composed, flt=_layers(2), replicates=10)
    assert [row["layer"] for row in only["composition"]["layers"]] == [2]
    assert [row["layer"] for row in only["sparsity"]["layers"]] == [2]


def _layers(*layers):
    from reports.selectors.report_filter import ReportFilter

    return ReportFilter(layers=layers)


def test_an_encoder_or_a_study_not_composed_yet_says_why(composed):
    encoder = _study(name="encoder", is_causal=False, sparsity=SPARSITY)
    report = report_build(study=encoder, replicates=10)
    assert report["composition"]["applies"] is False
    assert report["composition"]["reason"] == (
        "The study's model is an encoder: it predicts no next token, so only sparsity applies."
    )
    assert report["composition"]["layers"] == []
    assert len(report["sparsity"]["layers"]) == 2
    fresh = report_build(study=_study(name="fresh"), replicates=10)
    assert fresh["composition"]["reason"].startswith("Not computed yet")
    assert fresh["sparsity"]["layers"] == []


def test_the_csv_has_a_row_per_figure_reading_and_layer(composed):
    rows = list(
        csv.DictReader(io.StringIO(report_csv(report_build(study=composed, replicates=10))))
    )
    mine = [r for r in rows if r["section"] in ("composition", "sparsity")]
    got = {(r["section"], r["view"], r["layer"], r["metric"]): r["value"] for r in mine}
    assert got[("composition", "with_final_norm", "2", "none_agree_share")] == "0.75"
    assert got[("composition", "without_final_norm", "1", "change_ffn")] == "0.1"
    assert got[("composition", "", "1", "active_share_q3")] == "0.5"
    assert got[("composition", "without_final_norm", "1", "agree_stopword_share")] == ""
    assert got[("sparsity", "", "2", "gini")] == "0.3"
    assert {r["n"] for r in mine if r["section"] == "composition"} == {"2"}
    assert {r["n"] for r in mine if r["section"] == "sparsity"} == {"1000"}
    # per layer: 8 quartile rows, 3 readings' figures and final_prob_mean twice, 3 changes twice
    assert sum(r["section"] == "composition" for r in mine) == 2 * (8 + 2 * 4 + 2 * 3)


def test_the_api_and_the_report_command_give_the_same_sections(composed, carol, tmp_path, capsys):
    body = client_for(carol).get(f"/api/admin/studies/{composed.pk}/report/").json()
    assert body["composition"]["layers"] == COMPOSITION["layers"]
    assert body["composition"]["slice"] == COMPOSITION["slice"]
    assert body["sparsity"]["layers"] == SPARSITY["layers"]
    call_command("report", study="composed", out=str(tmp_path))
    written = json.loads((tmp_path / "report.json").read_text())
    assert written["composition"]["layers"] == COMPOSITION["layers"]
    assert "composition," in (tmp_path / "report.csv").read_text()
    printed = capsys.readouterr().out
    assert "§5 composition over 2 prefixes (through the final norm" in printed
    # layer 2: active 45%, none agree 75%, residual=final 35%, kept/ffn/neither with the norm
    assert "      2   45.0%       75.0%           35.0%  50.0%/20.0%/30.0%  0.1" in printed
    assert "Sparsity (mining pass)" in printed


def test_only_admins_start_a_job_and_bad_requests_are_refused_with_reasons(composed, alice, carol):
    url = f"/api/admin/studies/{composed.pk}/composition/"
    assert client_for(alice).get(url).status_code == 403
    assert client_for(alice).post(url, {"prefixes": 10}, format="json").status_code == 403
    curator = client_for(carol)
    status = curator.get(url).json()
    assert status == {"job": None, "default_prefixes": 4000, "max_prefixes": 50000}
    too_many = curator.post(url, {"prefixes": 50001}, format="json")
    assert too_many.status_code == 400 and "prefixes" in too_many.json()["fields"]
    # An imported study has no model or corpus store here.
    refused = curator.post(url, {"prefixes": 10}, format="json")
    assert refused.status_code == 400
    assert refused.json()["code"] == "composition_refused"
    assert "was not mined here" in refused.json()["detail"]
    assert not CompositionJob.objects.exists()
    assert curator.get("/api/admin/studies/999999/composition/").status_code == 404
