"""The report's ``pattern_scores`` (docs/evidence.md, "In the report") on patterns whose
scores are set by hand.

Layer 1: key A and key B; layer 2: key C. Each pattern's stored scores are
(detection, embedding, shuffled_detection, shuffled_embedding):

- A, alice, written: (0.8, 0.7, 0.5, 0.4); A, bob, written: (null, 0.6, null, 0.5);
  A, alice, accepted suggestion: (0.9, 0.75, 0.45, 0.5)
- B, alice, written: (0.6, 0.9, 0.55, 0.6); B, bob, written: not scored yet ({})
- C, bob, written: (null, 0.65, null, null) (alone in its layer: no baseline)
- left out: bob's draft pattern on key D (layer 2), and alice's pattern on a check
  annotation of C.
"""

from __future__ import annotations

import csv
import io

import pytest
from django.core.management import call_command

from annotate.models import Pattern
from reports.report import report_build, report_csv
from tests.conftest import client_for
from tests.factories import PatternFactory, StudyFactory, annotate_key, key_with_prefixes

pytestmark = pytest.mark.django_db

NULL = None


def _scores(det, emb, sdet, semb):
    return {
        "detection": det,
        "embedding": emb,
        "shuffled_detection": sdet,
        "shuffled_embedding": semb,
    }


@pytest.fixture
def scored_study(alice, bob):
    study = StudyFactory(name="scored", n_layers=2)
    a = key_with_prefixes(5, study=study, layer=1, index=0)
    b = key_with_prefixes(5, study=study, layer=1, index=1)
    c = key_with_prefixes(5, study=study, layer=2, index=0)

    def pattern(annotation, scores, source="written"):
        return PatternFactory(
            annotation=annotation,
            kind="shallow",
            source=source,
            scores=scores,
            prefixes=list(annotation.key.prefixes.all()[:3]),
        )

    a_alice, a_bob = annotate_key(a, alice), annotate_key(a, bob)
    pattern(a_alice, _scores(0.8, 0.7, 0.5, 0.4))
    pattern(a_bob, _scores(NULL, 0.6, NULL, 0.5))
    pattern(a_alice, _scores(0.9, 0.75, 0.45, 0.5), source=Pattern.Source.SUGGESTION)
    b_alice, b_bob = annotate_key(b, alice), annotate_key(b, bob)
    pattern(b_alice, _scores(0.6, 0.9, 0.55, 0.6))
    pattern(b_bob, {})
    pattern(annotate_key(c, bob), _scores(NULL, 0.65, NULL, NULL))
    draft_key = key_with_prefixes(5, study=study, layer=2, index=1)
    pattern(annotate_key(draft_key, bob, status="draft"), _scores(0.1, 0.1, 0.1, 0.1))
    check = annotate_key(c, alice)
    check.is_check = True
    check.save(update_fields=["is_check"])
    pattern(check, _scores(0.2, 0.2, 0.2, 0.2))
    return study


def test_pattern_scores_are_the_means_over_patterns_per_layer_and_overall(scored_study):
    ps = report_build(study=scored_study)["pattern_scores"]
    layer1, layer2 = ps["layers"]
    assert (layer1["layer"], layer2["layer"]) == (1, 2)
    # Layer 1, written: A alice, A bob, B alice (B bob is not scored).
    assert layer1["written"]["n"] == 3
    assert layer1["written"]["detection"]["mean"] == pytest.approx((0.8 + 0.6) / 2)
    assert layer1["written"]["embedding"]["mean"] == pytest.approx((0.7 + 0.6 + 0.9) / 3)
    assert layer1["suggestion"]["n"] == 1
    assert layer1["suggestion"]["detection"]["mean"] == pytest.approx(0.9)
    assert layer1["suggestion"]["embedding"]["mean"] == pytest.approx(0.75)
    # Shuffled: every scored pattern of layer 1, written and suggestion.
    assert layer1["shuffled"]["n"] == 4
    assert layer1["shuffled"]["detection"]["mean"] == pytest.approx((0.5 + 0.45 + 0.55) / 3)
    assert layer1["shuffled"]["embedding"]["mean"] == pytest.approx((0.4 + 0.5 + 0.5 + 0.6) / 4)
    # Layer 2: bob's one pattern on C; the draft and the check are left out.
    assert layer2["written"]["n"] == 1
    assert layer2["written"]["detection"] == {"mean": None, "low": None, "high": None}
    assert layer2["written"]["embedding"]["mean"] == pytest.approx(0.65)
    assert layer2["suggestion"] == {
        "n": 0,
        "detection": {"mean": None, "low": None, "high": None},
        "embedding": {"mean": None, "low": None, "high": None},
    }
    assert layer2["shuffled"]["n"] == 0
    overall = ps["overall"]
    assert "layer" not in overall
    assert overall["written"]["n"] == 4
    assert overall["written"]["embedding"]["mean"] == pytest.approx((0.7 + 0.6 + 0.9 + 0.65) / 4)
    assert overall["shuffled"]["n"] == 4
    assert ps["definition"].startswith("Each pattern is tested on examples")


def test_the_intervals_resample_keys_within_each_layer(scored_study):
    ps = report_build(study=scored_study)["pattern_scores"]
    layer1, layer2 = ps["layers"]
    # Layer 1 has two keys: a resample is A twice, A and B, or B twice. The extremes, each
    # a quarter of 1,000 replicates, are the 2.5th and 97.5th percentiles: the mean over
    # A's patterns alone and over B's alone.
    written_emb = layer1["written"]["embedding"]
    assert written_emb["low"] == pytest.approx((0.7 + 0.6) / 2)
    assert written_emb["high"] == pytest.approx(0.9)
    shuffled_emb = layer1["shuffled"]["embedding"]
    assert shuffled_emb["low"] == pytest.approx((0.4 + 0.5 + 0.5) / 3)
    assert shuffled_emb["high"] == pytest.approx(0.6)
    # The suggestion is only on A: a resample without A has none (left out), so the
    # interval is A's value.
    assert layer1["suggestion"]["embedding"]["low"] == pytest.approx(0.75)
    assert layer1["suggestion"]["embedding"]["high"] == pytest.approx(0.75)
    # One key in layer 2: every resample is that key.
    assert layer2["written"]["embedding"]["low"] == pytest.approx(0.65)
    assert layer2["written"]["embedding"]["high"] == pytest.approx(0.65)
    overall = ps["overall"]["written"]["embedding"]
    assert overall["low"] <= overall["mean"] <= overall["high"]


def test_pattern_scores_follow_the_report_filter(scored_study, alice):
    from reports.selectors.report_filter import ReportFilter

    ps = report_build(study=scored_study, flt=ReportFilter(annotators=("alice",)))
    written = ps["pattern_scores"]["overall"]["written"]
    assert written["n"] == 2  # A and B; her check pattern is never counted
    assert written["embedding"]["mean"] == pytest.approx((0.7 + 0.9) / 2)


def test_the_csv_and_the_api_carry_the_pattern_scores(scored_study, carol):
    report = report_build(study=scored_study)
    rows = [
        r
        for r in csv.DictReader(io.StringIO(report_csv(report)))
        if r["section"] == "pattern_scores"
    ]
    # 3 layers rows (two layers and all) × 3 groups × 2 scores.
    assert len(rows) == 18
    row = next(
        r for r in rows if (r["view"], r["layer"], r["metric"]) == ("written", "1", "embedding")
    )
    assert float(row["value"]) == pytest.approx((0.7 + 0.6 + 0.9) / 3)
    assert float(row["low"]) == pytest.approx(0.65)
    assert row["n"] == "3"
    empty = next(
        r for r in rows if (r["view"], r["layer"], r["metric"]) == ("suggestion", "2", "detection")
    )
    assert (empty["value"], empty["low"], empty["n"]) == ("", "", "0")
    body = client_for(carol).get(f"/api/admin/studies/{scored_study.pk}/report/").json()
    assert body["pattern_scores"] == report["pattern_scores"]


def test_the_report_command_prints_the_scores(scored_study, tmp_path, capsys):
    call_command("report", "--study", scored_study.name, "--out", str(tmp_path))
    out = capsys.readouterr().out
    assert "written: n = 4, detection 0.700 [" in out
    assert "suggestion: n = 1" in out
    assert "shuffled: n = 4" in out
