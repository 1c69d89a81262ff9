"""Gold (curated) as a report source, check annotations left out of the pooled report,
each annotator against gold and on checks, and the annotator table — all computed by
hand on the hand-built study (tests/reports/conftest.py) with gold added:

Layer 1, key A: gold shallow {1,2} + semantic {3,4,5} → S S M M M (submitted).
Layer 1, key C: gold shallow {1,2,3} → S S S NC NC (submitted, a check key); alice's
check annotation shallow {1,2,3} + semantic {4,5} → S S S M M; bob's check: nothing →
NC ×5. Layer 2, key B: gold semantic {1,2,3}, a draft: not counted.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Annotation, GoldAnnotation, GoldPattern, Key, KeyFlag
from annotate.permissions import CURATOR_GROUP
from reports.annotators import DEFINITIONS as TABLE_DEFINITIONS
from reports.annotators import annotator_table
from reports.report import DEFINITIONS, report_build, report_csv
from reports.selectors.report_filter import ReportFilter
from reports.stats.gold import agreement_with
from tests.conftest import client_for
from tests.factories import StudyFactory, UserFactory, annotate_key, key_with_prefixes

pytestmark = pytest.mark.django_db

S, M, SS, NC = "shallow", "semantic", "shallow_semantic", "not_covered"


def add_gold(key: Key, patterns, status: str = "submitted", is_check: bool = False):
    gold = GoldAnnotation.objects.create(key=key, status=status, is_check=is_check)
    by_rank = {p.rank: p for p in key.prefixes.all()}
    for order, (kind, ranks) in enumerate(patterns):
        pattern = GoldPattern.objects.create(
            gold=gold, kind=kind, order=order, description=f"gold {order}"
        )
        pattern.prefixes.set([by_rank[r] for r in ranks])
    return gold


@pytest.fixture
def gold_study(hand_study, alice, bob):
    key_a = Key.objects.get(study=hand_study, layer=1)
    key_b = Key.objects.get(study=hand_study, layer=2)
    key_c = key_with_prefixes(5, study=hand_study, layer=1, index=9, value_top_token_ids=[1])
    add_gold(key_a, [("shallow", [1, 2]), ("semantic", [3, 4, 5])])
    add_gold(key_b, [("semantic", [1, 2, 3])], status="draft")
    add_gold(key_c, [("shallow", [1, 2, 3])], is_check=True)
    for check in (
        annotate_key(key_c, alice, [("shallow", [1, 2, 3]), ("semantic", [4, 5])]),
        annotate_key(key_c, bob, []),
    ):
        check.is_check = True
        check.save()
    return hand_study


def shares(row):
    return {k: pytest.approx(v) if v is not None else None for k, v in row["shares"].items()}


# --- check annotations are left out of every existing computation -----------------------


def test_check_annotations_are_left_out_of_the_pooled_report(gold_study):
    report = report_build(study=gold_study, replicates=20)
    fig = report["figure2"]
    layer1 = fig["pooled"]["layers"][0]
    # Only key A's two annotations (the hand counts): the checks on key C are not there.
    assert layer1["n"] == 10
    assert shares(layer1) == {S: 0.2, M: 0.2, SS: 0.4, NC: 0.2}
    assert fig["per_annotator"][0]["layers"][0]["n"] == 5
    assert fig["majority"]["layers"][0]["n"] == 5
    assert report["coverage"]["layers"][0]["n_annotations"] == 2
    assert report["coverage"]["layers"][0]["covered"] == 8
    labels = report["agreement"]["labels"]["layers"][0]
    assert labels["raw_agreement"]["n_units"] == 5
    assert labels["raw_agreement"]["value"] == pytest.approx(0.2)
    (pair,) = report["pattern_jaccard"]["pairs"]
    assert pair["layers"][0]["n_keys"] == 1


# --- gold as a source ---------------------------------------------------------------------


def test_gold_figure2_and_coverage_per_layer(gold_study):
    report = report_build(study=gold_study, replicates=20)
    gold = report["figure2"]["gold"]
    layer1, layer2 = gold["layers"]
    # Keys A and C: S S M M M + S S S NC NC.
    assert layer1["layer"] == 1 and layer1["n"] == 10
    assert shares(layer1) == {S: 0.5, M: 0.3, SS: 0.0, NC: 0.2}
    # Key B's gold is a draft: layer 2 has no gold.
    assert layer2["layer"] == 2 and layer2["n"] == 0
    assert layer2["shares"] == {S: None, M: None, SS: None, NC: None}
    cov = report["coverage"]["gold"]
    assert cov["layers"][0]["share_covered"] == pytest.approx(0.8)
    assert cov["layers"][0]["n_annotations"] == 2
    assert cov["layers"][0]["mean_patterns_per_key"] == pytest.approx(1.5)
    assert cov["layers"][1]["n_annotations"] == 0
    assert cov["overall"]["share_covered"] == pytest.approx(0.8)


def test_gold_figure2_follows_the_gold_not_the_annotators(gold_study):
    before = report_build(study=gold_study, replicates=20)["figure2"]
    gold = GoldAnnotation.objects.get(key__layer=1, key__index=7)
    GoldPattern.objects.filter(gold=gold).update(kind="shallow+semantic")
    after = report_build(study=gold_study, replicates=20)["figure2"]
    assert after["pooled"] == before["pooled"]
    # Key A is now SS ×5, key C still S S S NC NC.
    assert shares(after["gold"]["layers"][0]) == {S: 0.3, M: 0.0, SS: 0.5, NC: 0.2}


def test_value_agreement_on_the_curated_keys(gold_study):
    va = report_build(study=gold_study, replicates=20)["value_agreement_gold"]
    layer1, layer2 = va["layers"]
    # Key A: the value's argmax 1001 is its rank-1 next token; key C's argmax 1 is its
    # rank-1 trigger token.
    assert layer1["n_keys"] == 2
    assert (layer1["next_token"]["matches"], layer1["next_token"]["n"]) == (1, 2)
    assert (layer1["trigger_token"]["matches"], layer1["trigger_token"]["n"]) == (1, 2)
    assert layer2["n_keys"] == 0


# --- each annotator against gold, and on checks -------------------------------------------


def test_cohen_kappa_with_gold_on_a_textbook_table():
    # Wikipedia's example: 50 units, yes/yes 20, yes/no 5, no/yes 10, no/no 15: κ = 0.4.
    a = np.array([0] * 20 + [0] * 5 + [1] * 10 + [1] * 15)
    b = np.array([0] * 20 + [1] * 5 + [0] * 10 + [1] * 15)
    result = agreement_with(a, b)
    assert result["kappa"] == pytest.approx(0.4)
    assert result["raw_agreement"] == pytest.approx(0.7)
    assert result["n_units"] == 50


def test_each_annotators_kappa_with_gold_is_the_hand_count(gold_study):
    rows = {r["annotator"]: r for r in report_build(study=gold_study)["agreement_with_gold"]}
    # alice S S SS M M vs gold S S M M M on key A (key B's gold is a draft; her check on
    # key C does not count): p_o = 0.8, p_e = 0.4·0.4 + 0.4·0.6 = 0.4, κ = 0.4/0.6.
    assert rows["alice"]["raw_agreement"] == pytest.approx(0.8)
    assert rows["alice"]["kappa"] == pytest.approx(2 / 3)
    assert rows["alice"]["n_units"] == 5
    # bob SS SS SS NC NC: no agreement, p_e = 0: κ = 0.
    assert rows["bob"]["raw_agreement"] == 0.0 and rows["bob"]["kappa"] == pytest.approx(0.0)


def test_accuracy_on_checks_is_the_hand_count(gold_study):
    rows = {r["annotator"]: r for r in report_build(study=gold_study)["check_accuracy"]}
    # alice S S S M M vs gold S S S NC NC: 0.6, p_e = 0.6·0.6 = 0.36, κ = 0.24/0.64.
    assert rows["alice"]["n_checks"] == 1
    assert rows["alice"]["raw_agreement"] == pytest.approx(0.6)
    assert rows["alice"]["kappa"] == pytest.approx(0.375)
    # bob NC ×5: 0.4, κ 0.
    assert rows["bob"]["raw_agreement"] == pytest.approx(0.4)
    assert rows["bob"]["kappa"] == pytest.approx(0.0)


def test_gold_as_a_coder_changes_alpha_and_is_named(gold_study):
    without = report_build(study=gold_study, replicates=20)["agreement"]
    with_gold = report_build(study=gold_study, flt=ReportFilter(gold_as_coder=True), replicates=20)[
        "agreement"
    ]
    assert without["gold_as_coder"] is False and with_gold["gold_as_coder"] is True
    assert with_gold["coders"] == ["alice", "bob", with_gold["gold_coder"]]
    # Layer 1, key A: alice, bob and gold rate its 5 prefixes (key C's gold is alone).
    codes = {"shallow": 0, "semantic": 1, "shallow+semantic": 2, "not-covered": 3}
    alice = ["shallow"] * 2 + ["shallow+semantic"] + ["semantic"] * 2
    bob = ["shallow+semantic"] * 3 + ["not-covered"] * 2
    gold = ["shallow"] * 2 + ["semantic"] * 3
    data = np.array([[codes[x] for x in row] for row in (alice, bob, gold)], dtype=float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    value = with_gold["labels"]["layers"][0]["krippendorff_alpha"]["value"]
    assert value == pytest.approx(expected)
    assert value != pytest.approx(without["labels"]["layers"][0]["krippendorff_alpha"]["value"])
    assert "gold_as_coder" in DEFINITIONS


def test_the_report_csv_carries_gold(gold_study):
    rows = list(csv.DictReader(io.StringIO(report_csv(report_build(study=gold_study)))))
    gold_s = [r for r in rows if r["section"] == "figure2" and r["view"] == "gold"]
    assert {(r["layer"], r["metric"]): float(r["value"] or "nan") for r in gold_s}[
        ("1", "shallow")
    ] == pytest.approx(0.5)
    assert any(r["section"] == "coverage" and r["view"] == "gold" for r in rows)
    kappa = [r for r in rows if r["section"] == "agreement_with_gold" and r["annotator"] == "alice"]
    assert {r["metric"] for r in kappa} == {"cohen_kappa", "raw_agreement"}
    assert any(r["section"] == "check_accuracy" for r in rows)


def test_the_report_with_gold_costs_the_same_queries_for_more_keys(db):
    def study_with(n_keys):
        study = StudyFactory(vocab_size=10)
        people = [UserFactory(username=f"coder{i}") for i in range(2)]
        for k in range(n_keys):
            key = key_with_prefixes(6, study=study, layer=1 + k % 2, index=k)
            add_gold(key, [("semantic", [1, 2, 3])])
            for person in people:
                annotate_key(key, person, [("shallow", [1, 2, 3])])
        return study

    counts = []
    for study in (study_with(2), study_with(7)):
        with CaptureQueriesContext(connection) as ctx:
            report_build(study=study, replicates=20)
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1] <= 10


# --- the annotator table ----------------------------------------------------------------


@pytest.fixture
def timed_study(gold_study, alice, bob):
    Annotation.objects.filter(annotator=alice, key__layer=1, is_check=False).update(
        active_seconds=30
    )
    Annotation.objects.filter(annotator=alice, key__layer=2).update(active_seconds=90)
    Annotation.objects.filter(annotator=bob, key__layer=1, is_check=False).update(active_seconds=6)
    Annotation.objects.filter(annotator=bob, key__layer=2).update(active_seconds=500)  # draft
    Annotation.objects.filter(is_check=True).update(active_seconds=1)
    KeyFlag.objects.create(
        key=Key.objects.get(study=gold_study, index=7), annotator=alice, reason="unclear"
    )
    return gold_study


def test_the_annotator_table_is_the_hand_count(timed_study):
    table = annotator_table(study=timed_study)
    rows = {r["username"]: r for r in table["annotators"]}
    alice, bob = rows["alice"], rows["bob"]
    assert (alice["keys_done"], bob["keys_done"]) == (2, 1)
    assert alice["median_active_seconds"] == pytest.approx(60.0)
    assert bob["median_active_seconds"] == pytest.approx(6.0)
    assert alice["patterns_per_key"] == pytest.approx(1.0) and bob["patterns_per_key"] == 1.0
    assert alice["coverage"] == pytest.approx(0.5) and bob["coverage"] == pytest.approx(0.6)
    data = np.array([[0, 0, 2, 1, 1], [2, 2, 2, 3, 3]], dtype=float)
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert alice["alpha_with_others"] == pytest.approx(alpha)
    assert bob["alpha_with_others"] == pytest.approx(alpha)
    assert alice["kappa_with_gold"] == pytest.approx(2 / 3)
    assert alice["raw_agreement_with_gold"] == pytest.approx(0.8)
    assert (alice["checks_n"], alice["check_accuracy"]) == (1, pytest.approx(0.6))
    assert (bob["checks_n"], bob["check_accuracy"]) == (1, pytest.approx(0.4))
    assert (alice["flags"], bob["flags"]) == (1, 0)
    assert (alice["gold_keys"], bob["gold_keys"]) == (1, 1)
    # The study's median active time is 30 s (30, 90, 6): bob's 6 s is under a third, and
    # his κ with gold under 0.4, but on one submitted key and one key with gold: too
    # little evidence for a flag (tests/reports/test_annotators.py has the minimums).
    assert table["study_median_active_seconds"] == pytest.approx(30.0)
    assert bob["kappa_with_gold"] < 0.4
    assert bob["quality_flags"] == []
    assert alice["quality_flags"] == []
    assert {"fast", "low_gold_agreement", "few_patterns", "alpha_with_others"} <= set(
        table["definitions"]
    )


def test_the_annotator_table_costs_the_same_queries_for_more_annotators(timed_study):
    with CaptureQueriesContext(connection) as small:
        annotator_table(study=timed_study)
    key = Key.objects.get(study=timed_study, index=7)
    for i in range(4):
        annotate_key(key, UserFactory(username=f"extra{i}"), [("shallow", [1, 2, 3])])
    with CaptureQueriesContext(connection) as large:
        table = annotator_table(study=timed_study)
    assert len(table["annotators"]) == 6
    assert len(small.captured_queries) == len(large.captured_queries) <= 14


def test_the_annotator_table_api_and_csv(timed_study, carol):
    client = client_for(carol)
    response = client.get(f"/api/admin/studies/{timed_study.pk}/annotators/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert [r["username"] for r in body["annotators"]] == ["alice", "bob"]
    assert body["annotators"][1]["quality_flags"] == []
    assert body["annotators"][1]["gold_keys"] == 1
    response = client.get(f"/api/admin/studies/{timed_study.pk}/annotators.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8"))))
    assert rows[1]["username"] == "bob" and rows[1]["quality_flags"] == ""
    assert rows[1]["gold_keys"] == "1"
    assert float(rows[0]["kappa_with_gold"]) == pytest.approx(2 / 3)
    assert client.get("/api/admin/studies/999/annotators/").status_code == 404


def test_the_annotator_csv_neutralises_formula_usernames(formula_study, carol):
    start, study = formula_study
    response = client_for(carol).get(f"/api/admin/studies/{study.pk}/annotators.csv")
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8"))))
    assert {r[0] for r in rows[1:]} == {f"'{start}eve", f"'{start}zed"}


@pytest.mark.parametrize("persona", ["anonymous", "alice", "mallory", "curator"])
def test_only_admins_reach_the_annotator_table(gold_study, persona, request, api_client):
    if persona == "anonymous":
        client = api_client
    elif persona == "curator":
        curator = UserFactory(username="cora")
        curator.groups.add(Group.objects.get_or_create(name=CURATOR_GROUP)[0])
        client = client_for(curator)
    else:
        client = client_for(request.getfixturevalue(persona))
    for url in ("annotators/", "annotators.csv"):
        response = client.get(f"/api/admin/studies/{gold_study.pk}/{url}")
        assert response.status_code == 403, (url, response.content)
        assert "detail" in response.json()


def test_the_report_api_takes_gold_as_coder(gold_study, carol):
    client = client_for(carol)
    body = client.get(
        f"/api/admin/studies/{gold_study.pk}/report/", {"gold_as_coder": "true"}
    ).json()
    assert body["agreement"]["gold_as_coder"] is True
    assert body["figure2"]["gold"]["layers"][0]["n"] == 10
    assert {r["annotator"] for r in body["agreement_with_gold"]} == {"alice", "bob"}
    bad = client.get(f"/api/admin/studies/{gold_study.pk}/report/", {"gold_as_coder": "maybe"})
    assert bad.status_code == 400


def test_the_annotator_table_page_shows_the_same_definitions_in_english_and_chinese():
    i18n = Path(__file__).resolve().parents[2] / "frontend" / "src" / "i18n"
    english = json.loads((i18n / "en.json").read_text(encoding="utf-8"))["annotatorTable"]
    chinese = json.loads((i18n / "zh-CN.json").read_text(encoding="utf-8"))["annotatorTable"]
    assert english["definitionTexts"] == TABLE_DEFINITIONS
    assert set(chinese["definitionTexts"]) == set(TABLE_DEFINITIONS)


def test_the_report_command_counts_gold_as_a_coder_when_asked(gold_study, tmp_path):
    from django.core.management import call_command

    call_command("report", "--study", str(gold_study.pk), "--out", str(tmp_path / "a"))
    call_command(
        "report", "--study", str(gold_study.pk), "--out", str(tmp_path / "b"), "--gold-as-coder"
    )
    plain = json.loads((tmp_path / "a" / "report.json").read_text())
    coded = json.loads((tmp_path / "b" / "report.json").read_text())
    assert plain["agreement"]["gold_as_coder"] is False
    assert coded["agreement"]["gold_as_coder"] is True
    assert coded["agreement"]["coders"][-1] == "(gold)"
