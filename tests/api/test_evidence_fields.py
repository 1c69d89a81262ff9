"""The evidence beyond the top-k in the API (docs/evidence.md, "In the API"): what the
annotator's key screen carries, a pattern's rule, source and scores, and what the
curator's review adds.

alice annotates; cora is a curator.
"""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Annotation, GoldPattern, Pattern, SuggestionDecision
from annotate.services.patterns import PATTERN_RULE_NEEDS_SHALLOW
from tests.conftest import client_for
from tests.factories import SuggestionFactory, annotate_key, assigned_batch, key_examples

pytestmark = pytest.mark.django_db

SCORES = {
    "detection": 0.8125,
    "embedding": 0.6875,
    "shuffled_detection": 0.4375,
    "shuffled_embedding": 0.5625,
}


@pytest.fixture
def key(alice):
    _, (key,) = assigned_batch([alice])
    key.max_coefficient, key.density = 10.0, 0.125
    key.histogram = {"edges": [0.0, 5.0, 10.0], "counts": [90, 10]}
    key.save()
    key.prefixes.filter(rank=1).update(
        tokens=["prefix", " 1", " of"], token_coefficients=[0.25, -1.5, 9.75]
    )
    return key


def _open(client, key) -> dict:
    response = client.get(f"/api/keys/{key.pk}/")
    assert response.status_code == 200, response.content
    return response.json()


def _create(client, key, version, **extra):
    body = {"description": "a t-token", "kind": "shallow", "prefix_ranks": [1, 2, 3]}
    return client.post(
        f"/api/keys/{key.pk}/patterns/", {**body, "version": version, **extra}, format="json"
    )


# --- the annotator's key screen ---------------------------------------------------------


def test_the_key_screen_carries_token_coefficients_the_scale_and_the_samples(alice, key):
    examples = key_examples(key)
    data = _open(client_for(alice), key)

    first = data["prefixes"][0]
    assert (first["tokens"], first["token_coefficients"]) == (
        ["prefix", " 1", " of"],
        [0.25, -1.5, 9.75],
    )
    assert data["prefixes"][1]["tokens"] == []  # unknown: empty
    assert (data["max_coefficient"], data["density"]) == (10.0, 0.125)
    assert data["histogram"] == {"edges": [0.0, 5.0, 10.0], "counts": [90, 10]}

    samples = data["samples"]
    expected = [*examples["band"], *examples["random"]]
    assert [s["text"] for s in samples] == [e.text for e in expected]
    assert [s["band"] for s in samples[:25]] == [b for b in range(1, 6) for _ in range(5)]
    assert {s["kind"] for s in samples[:25]} == {"band"}
    assert {(s["kind"], s["band"], s["band_low"]) for s in samples[25:]} == {("random", None, None)}
    band_3 = samples[12]
    assert (band_3["band_low"], band_3["band_high"]) == (4.0, 6.0)
    assert band_3["band_low"] < band_3["coefficient"] <= band_3["band_high"]
    assert "rank" not in band_3
    assert set(band_3) == {
        "kind",
        "band",
        "band_low",
        "band_high",
        "coefficient",
        "text",
        "trigger_token",
        "next_token",
        "suffix",
        "sentence",
        "sentence_index",
        "position",
        "trigger_start",
        "trigger_end",
        "trigger_token_bytes",
        "next_token_bytes",
        "tokens",
        "token_coefficients",
    }
    assert len(band_3["tokens"]) == len(band_3["token_coefficients"]) > 0
    assert "heldout" not in data and "heldout_random" not in data


def test_the_key_screen_says_what_the_study_allows(alice, key):
    client = client_for(alice)
    assert _open(client, key)["study"] | {"id": 0} == {
        "id": 0,
        "guideline_version": None,
        "guidelines_acknowledged": False,
        "suggestions_enabled": True,
        "show_scores": False,
    }
    key.study.suggestions_enabled, key.study.show_scores = False, True
    key.study.save()
    study = _open(client, key)["study"]
    assert (study["suggestions_enabled"], study["show_scores"]) == (False, True)


def test_a_key_without_a_histogram_answers_null(alice, key):
    key.histogram = {}
    key.save()
    assert _open(client_for(alice), key)["histogram"] is None


def test_the_key_screen_costs_the_same_queries_with_or_without_samples(alice, key):
    _, (bare,) = assigned_batch([alice], study=key.study)
    key_examples(key)
    client = client_for(alice)
    counts = []
    for k in (bare, key):
        with CaptureQueriesContext(connection) as queries:
            _open(client, k)
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]


# --- a pattern's rule, source and scores ------------------------------------------------


def test_a_pattern_is_made_with_its_rule_and_answers_its_source_and_no_scores(alice, key):
    client = client_for(alice)
    response = _create(client, key, 1, rule={"type": "token", "value": "t1"})
    assert response.status_code == 201, response.content
    (pattern,) = response.json()["patterns"]
    assert pattern["rule"] == {"type": "token", "value": "t1"}
    assert pattern["source"] == "written"
    assert pattern["scores"] is None
    assert Pattern.objects.get(pk=pattern["id"]).rule == {"type": "token", "value": "t1"}
    without = _create(client, key, response.json()["version"], prefix_ranks=[4, 5, 6])
    assert without.json()["patterns"][1]["rule"] is None


@pytest.mark.parametrize(
    ("rule", "names"),
    [
        ({"type": "regex", "value": "t1"}, "rule type must be one of token, ngram, suffix"),
        ({"type": "token", "value": ""}, "non-empty string"),
        ({"type": "token", "value": "two words"}, "without spaces"),
        ({"type": "ngram", "value": "one two three four"}, "final 1–3 tokens"),
        ({"type": "token", "value": "t1", "weight": 2}, "not weight"),
        ("token:t1", "a rule is null or an object"),
    ],
)
def test_a_malformed_rule_is_a_400_naming_the_problem_and_writes_nothing(alice, key, rule, names):
    response = _create(client_for(alice), key, 1, rule=rule)
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid"
    assert body["detail"].startswith("rule: ")
    assert names in body["fields"]["rule"][0]["message"]
    assert not Annotation.objects.filter(key=key).exists()  # not even a draft


def test_only_a_pattern_with_a_shallow_side_may_carry_a_rule(alice, key):
    client = client_for(alice)
    refused = _create(client, key, 1, kind="semantic", rule={"type": "suffix", "value": "ing"})
    assert refused.status_code == 400
    assert refused.json() == {"detail": PATTERN_RULE_NEEDS_SHALLOW, "code": "rule_violation"}
    assert not Pattern.objects.exists()

    made = _create(client, key, 1, kind="shallow+semantic", rule={"type": "suffix", "value": "x"})
    assert made.status_code == 201, made.content
    state = made.json()
    url = f"/api/keys/{key.pk}/patterns/{state['patterns'][0]['id']}/"
    # A kind that the rule no longer fits is refused, unless the rule goes with it.
    refused = client.patch(url, {"kind": "semantic", "version": state["version"]}, format="json")
    assert refused.status_code == 400
    assert refused.json()["detail"] == PATTERN_RULE_NEEDS_SHALLOW
    both = {"kind": "semantic", "rule": None, "version": state["version"]}
    changed = client.patch(url, both, format="json")
    assert changed.status_code == 200, changed.content
    pattern = changed.json()["patterns"][0]
    assert (pattern["kind"], pattern["rule"]) == ("semantic", None)


def test_a_patch_changes_the_rule_only_when_it_names_one(alice, key):
    client = client_for(alice)
    state = _create(client, key, 1, rule={"type": "token", "value": "t1"}).json()
    url = f"/api/keys/{key.pk}/patterns/{state['patterns'][0]['id']}/"
    state = client.patch(url, {"description": "d", "version": state["version"]}, format="json")
    assert state.json()["patterns"][0]["rule"] == {"type": "token", "value": "t1"}
    new_rule = {"type": "ngram", "value": "1 of"}
    state = client.patch(url, {"rule": new_rule, "version": state.json()["version"]}, format="json")
    assert state.status_code == 200, state.content
    assert state.json()["patterns"][0]["rule"] == new_rule
    assert Pattern.objects.get().rule == new_rule
    bad = client.patch(
        url, {"rule": {"type": "token"}, "version": state.json()["version"]}, format="json"
    )
    assert bad.status_code == 400
    assert "rule" in bad.json()["fields"]
    assert Pattern.objects.get().rule == new_rule


def test_an_annotator_sees_their_own_scores_only_where_the_study_shows_them(alice, key):
    client = client_for(alice)
    state = _create(client, key, 1, rule={"type": "token", "value": "t1"}).json()
    Pattern.objects.update(scores=SCORES)
    paths = [f"/api/keys/{key.pk}/", f"/api/keys/{key.pk}/annotation/"]
    for path in paths:
        assert "0.8125" not in client.get(path).content.decode()
    key.study.show_scores = True
    key.study.save()
    detail = _open(client, key)
    assert detail["annotation"]["patterns"][0]["scores"] == SCORES
    assert client.get(paths[1]).json()["patterns"][0]["scores"] == SCORES
    url = f"/api/keys/{key.pk}/patterns/{state['patterns'][0]['id']}/"
    patched = client.patch(url, {"description": "t", "version": state["version"]}, format="json")
    assert patched.status_code == 200, patched.content
    # Whatever a change does to the scores (they are recomputed), they are shown as stored.
    stored = Pattern.objects.get().scores
    expected = {name: stored.get(name) for name in SCORES}
    assert patched.json()["patterns"][0]["scores"] == expected


def test_unscored_patterns_show_every_score_as_null_where_scores_are_shown(alice, key):
    key.study.show_scores = True
    key.study.save()
    response = _create(client_for(alice), key, 1)
    assert response.json()["patterns"][0]["scores"] == dict.fromkeys(SCORES)


# --- the curator's review ---------------------------------------------------------------


@pytest.fixture
def reviewed(alice, key):
    """``key`` with its examples, alice's submitted pattern (a rule, scores) and a gold
    pattern with a rule."""
    examples = key_examples(key)
    annotation = annotate_key(key, alice, [("shallow", [1, 2, 3])])
    annotation.patterns.update(rule={"type": "token", "value": "t1"}, scores=SCORES)
    return key, examples


def test_the_review_shows_every_set_the_rules_and_the_scores(cora, reviewed):
    key, examples = reviewed
    curator = client_for(cora)
    made = curator.post(
        f"/api/review/keys/{key.pk}/gold/patterns/",
        {
            "version": 0,
            "client_id": str(uuid.uuid4()),
            "description": "gold t",
            "kind": "shallow",
            "prefix_ranks": [1, 2, 3],
            "rule": {"type": "suffix", "value": "1"},
        },
        format="json",
    )
    assert made.status_code == 201, made.content
    assert made.json()["patterns"][0]["rule"] == {"type": "suffix", "value": "1"}
    GoldPattern.objects.update(scores={"detection": 0.25})

    data = curator.get(f"/api/review/keys/{key.pk}/").json()
    assert data["prefixes"][0]["token_coefficients"] == [0.25, -1.5, 9.75]
    assert [e["text"] for e in data["heldout"]] == [e.text for e in examples["heldout"]]
    assert [e["rank"] for e in data["heldout"]] == list(range(26, 51))
    assert [e["text"] for e in data["heldout_random"]] == [
        e.text for e in examples["heldout_random"]
    ]
    assert {e["rank"] for e in data["heldout_random"]} == {None}
    assert [s["text"] for s in data["samples"]] == [
        e.text for e in [*examples["band"], *examples["random"]]
    ]
    assert len(data["heldout"][0]["tokens"]) == len(data["heldout"][0]["token_coefficients"])
    (pattern,) = data["annotations"][0]["patterns"]
    assert (pattern["source"], pattern["rule"]) == ("written", {"type": "token", "value": "t1"})
    assert pattern["scores"] == SCORES
    (gold,) = data["gold"]["patterns"]
    assert gold["rule"] == {"type": "suffix", "value": "1"}
    assert gold["scores"] == {**dict.fromkeys(SCORES), "detection": 0.25}
    assert gold["source"] == "written"


def test_the_review_lists_the_suggestions_with_their_scores_and_every_decision(
    alice, bob, cora, reviewed
):
    key, _ = reviewed
    prefixes = list(key.prefixes.order_by("rank")[:3])
    cluster = SuggestionFactory(key=key, method="cluster", description="", prefixes=prefixes)
    rule = SuggestionFactory(key=key, rule={"type": "token", "value": "t2"}, prefixes=prefixes)
    rule.scores = {"detection": 0.625}
    rule.save()
    pattern = Pattern.objects.get(annotation__annotator=alice)
    SuggestionDecision.objects.create(
        suggestion=rule, annotator=alice, decision="accepted", pattern=pattern
    )
    SuggestionDecision.objects.create(suggestion=rule, annotator=bob, decision="dismissed")

    data = client_for(cora).get(f"/api/review/keys/{key.pk}/").json()
    listed = data["suggestions"]
    assert [s["id"] for s in listed] == [rule.pk, cluster.pk]  # rules first
    assert listed[0]["rule"] == {"type": "token", "value": "t2"}
    assert listed[0]["prefix_ranks"] == [1, 2, 3]
    assert listed[0]["scores"] == {**dict.fromkeys(SCORES), "detection": 0.625}
    assert [(d["annotator"], d["decision"], d["pattern_id"]) for d in listed[0]["decisions"]] == [
        ("alice", "accepted", pattern.pk),
        ("bob", "dismissed", None),
    ]
    assert listed[1]["decisions"] == []


def test_a_gold_rule_is_validated_and_changed_like_an_annotators(cora, reviewed):
    key, _ = reviewed
    curator = client_for(cora)
    body = {
        "version": 0,
        "client_id": str(uuid.uuid4()),
        "description": "gold",
        "kind": "semantic",
        "prefix_ranks": [1, 2, 3],
    }
    bad = curator.post(
        f"/api/review/keys/{key.pk}/gold/patterns/",
        {**body, "rule": {"type": "token", "value": "a b"}},
        format="json",
    )
    assert bad.status_code == 400
    assert "without spaces" in bad.json()["fields"]["rule"][0]["message"]
    refused = curator.post(
        f"/api/review/keys/{key.pk}/gold/patterns/",
        {**body, "rule": {"type": "token", "value": "t1"}},
        format="json",
    )
    assert refused.json() == {"detail": PATTERN_RULE_NEEDS_SHALLOW, "code": "rule_violation"}
    assert not GoldPattern.objects.exists()
    gold = curator.post(
        f"/api/review/keys/{key.pk}/gold/patterns/", {**body, "kind": "shallow"}, format="json"
    ).json()
    url = f"/api/review/keys/{key.pk}/gold/patterns/{gold['patterns'][0]['id']}/"
    rule = {"type": "ngram", "value": "of"}
    changed = curator.patch(url, {"rule": rule, "version": gold["version"]}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["patterns"][0]["rule"] == rule
    assert GoldPattern.objects.get().rule == rule


def test_the_review_costs_the_same_queries_for_few_or_many_examples_and_suggestions(
    alice, cora, key
):
    _, (bare,) = assigned_batch([alice], study=key.study)
    key_examples(key)
    for k in (bare, key):
        annotate_key(k, alice, [("shallow", [1, 2, 3])])
    # One suggestion and no examples against three suggestions and every example (with no
    # suggestion at all, their prefixes and decisions need no query).
    for k, n in ((bare, 1), (key, 3)):
        prefixes = list(k.prefixes.all()[:3])
        for _ in range(n):
            suggestion = SuggestionFactory(key=k, prefixes=prefixes)
            SuggestionDecision.objects.create(
                suggestion=suggestion, annotator=alice, decision="dismissed"
            )
    curator = client_for(cora)
    counts = []
    for k in (bare, key):
        with CaptureQueriesContext(connection) as queries:
            assert curator.get(f"/api/review/keys/{k.pk}/").status_code == 200
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]
