"""The machine's suggestions through the annotator's API (docs/evidence.md, "In the
API"): the list with the caller's own decisions, accept (it becomes their pattern),
dismiss, blindness to other annotators and to the LLM's before submitting, scores only
where the study shows them, the study setting that turns it all off, and 404s."""

from __future__ import annotations

import uuid

import pytest

from annotate.models import AnnotationEvent, Pattern, Suggestion, SuggestionDecision
from annotate.services.patterns import PATTERN_NEEDS_DESCRIPTION
from annotate.services.suggestions import SUGGESTION_NOT_ACCEPTABLE, SUGGESTIONS_OFF
from tests.conftest import client_for
from tests.factories import SuggestionFactory, assigned_batch

pytestmark = pytest.mark.django_db

SCORES = {
    "detection": 0.75,
    "embedding": 0.6,
    "shuffled_detection": 0.5,
    "shuffled_embedding": 0.48,
}


@pytest.fixture
def world(alice, bob):
    """One key assigned to alice and bob, with a rule, a cluster and an LLM suggestion."""
    _, (key,) = assigned_batch([alice, bob])
    by_rank = {p.rank: p for p in key.prefixes.all()}
    rule = SuggestionFactory(
        key=key,
        method="rule",
        order=0,
        description='trigger token "t1"',
        rule={"type": "token", "value": "t1"},
        prefixes=[by_rank[r] for r in (1, 2, 3)],
        scores=SCORES,
    )
    cluster = SuggestionFactory(
        key=key,
        method="cluster",
        order=0,
        description="",
        kind="semantic",
        rule=None,
        prefixes=[by_rank[r] for r in (4, 5, 6, 7)],
        scores=SCORES,
    )
    llm = SuggestionFactory(
        key=key,
        method="llm",
        order=0,
        description="an LLM's view",
        kind="semantic",
        rule=None,
        scores=SCORES,
    )
    return {"key": key, "rule": rule, "cluster": cluster, "llm": llm}


def _list(client, key) -> dict:
    response = client.get(f"/api/keys/{key.pk}/suggestions/")
    assert response.status_code == 200, response.content
    return response.json()


def _version(client, key) -> int:
    return client.get(f"/api/keys/{key.pk}/annotation/").json()["version"]


def _accept(client, key, suggestion, **body):
    body.setdefault("version", _version(client, key))
    return client.post(
        f"/api/keys/{key.pk}/suggestions/{suggestion.pk}/accept/", body, format="json"
    )


def _dismiss(client, key, suggestion):
    return client.post(f"/api/keys/{key.pk}/suggestions/{suggestion.pk}/dismiss/")


def test_the_list_gives_the_rule_and_cluster_suggestions_with_no_decision(world, alice):
    listing = _list(client_for(alice), world["key"])
    assert listing["enabled"] is True
    assert listing["suggestions"] == [
        {
            "id": world["rule"].pk,
            "method": "rule",
            "kind": "shallow",
            "description": 'trigger token "t1"',
            "rule": {"type": "token", "value": "t1"},
            "prefix_ranks": [1, 2, 3],
            "decision": None,
            "pattern_id": None,
        },
        {
            "id": world["cluster"].pk,
            "method": "cluster",
            "kind": "semantic",
            "description": "",
            "rule": None,
            "prefix_ranks": [4, 5, 6, 7],
            "decision": None,
            "pattern_id": None,
        },
    ]


def test_scores_are_listed_only_where_the_study_shows_them(world, alice):
    client = client_for(alice)
    assert all("scores" not in s for s in _list(client, world["key"])["suggestions"])
    world["key"].study.__class__.objects.filter(pk=world["key"].study_id).update(show_scores=True)
    listed = _list(client, world["key"])["suggestions"]
    assert [s["scores"] for s in listed] == [SCORES, SCORES]


def test_accepting_makes_it_the_callers_pattern_with_its_source_and_rule(world, alice):
    client = client_for(alice)
    key, rule = world["key"], world["rule"]
    response = _accept(client, key, rule)
    assert response.status_code == 201, response.content
    (pattern_data,) = response.json()["patterns"]
    assert pattern_data["description"] == 'trigger token "t1"'
    assert pattern_data["prefix_ranks"] == [1, 2, 3]
    assert pattern_data["source"] == "suggestion"
    assert pattern_data["rule"] == {"type": "token", "value": "t1"}
    pattern = Pattern.objects.get(pk=pattern_data["id"])
    assert (pattern.source, pattern.suggestion_id, pattern.kind) == (
        "suggestion",
        rule.pk,
        "shallow",
    )
    assert pattern.annotation.annotator == alice
    decision = SuggestionDecision.objects.get(suggestion=rule, annotator=alice)
    assert (decision.decision, decision.pattern_id) == ("accepted", pattern.pk)
    listed = _list(client, key)["suggestions"][0]
    assert (listed["decision"], listed["pattern_id"]) == ("accepted", pattern.pk)
    # The audit trail has the create, as for any pattern.
    assert AnnotationEvent.objects.filter(
        annotation=pattern.annotation, action="pattern_create"
    ).exists()


def test_accepting_twice_makes_one_pattern(world, alice):
    client = client_for(alice)
    key, rule = world["key"], world["rule"]
    assert _accept(client, key, rule).status_code == 201
    again = _accept(client, key, rule)
    assert again.status_code == 200
    assert len(again.json()["patterns"]) == 1
    assert Pattern.objects.filter(annotation__annotator=alice).count() == 1


def test_a_retried_accept_with_its_client_id_makes_no_duplicate(world, alice):
    client = client_for(alice)
    key, rule = world["key"], world["rule"]
    client_id = str(uuid.uuid4())
    version = _version(client, key)
    first = _accept(client, key, rule, version=version, client_id=client_id)
    retry = _accept(client, key, rule, version=version, client_id=client_id)
    assert (first.status_code, retry.status_code) == (201, 200)
    assert Pattern.objects.filter(annotation__annotator=alice).count() == 1


def test_an_accept_from_a_stale_version_is_a_conflict_and_writes_nothing(world, alice):
    client = client_for(alice)
    key = world["key"]
    client.put(f"/api/keys/{key.pk}/annotation/", {"note": "n", "version": 0}, format="json")
    response = _accept(client, key, world["rule"], version=0)
    assert response.status_code == 409
    assert response.json()["code"] == "stale_version"
    assert not Pattern.objects.exists()
    assert not SuggestionDecision.objects.exists()


def test_a_cluster_needs_a_description_to_be_accepted(world, alice):
    client = client_for(alice)
    key, cluster = world["key"], world["cluster"]
    refused = _accept(client, key, cluster)
    assert refused.status_code == 400
    assert refused.json() == {
        "detail": PATTERN_NEEDS_DESCRIPTION,
        "code": "pattern_needs_description",
    }
    assert not SuggestionDecision.objects.exists()
    accepted = _accept(client, key, cluster, description="kitchen words")
    assert accepted.status_code == 201
    (pattern,) = accepted.json()["patterns"]
    assert (pattern["description"], pattern["prefix_ranks"]) == ("kitchen words", [4, 5, 6, 7])
    assert (pattern["kind"], pattern["source"], pattern["rule"]) == ("semantic", "suggestion", None)


def test_an_edited_accepted_pattern_stays_a_suggestion(world, alice):
    client = client_for(alice)
    key = world["key"]
    pattern = _accept(client, key, world["rule"]).json()["patterns"][0]
    response = client.patch(
        f"/api/keys/{key.pk}/patterns/{pattern['id']}/",
        {
            "description": "my own words",
            "prefix_ranks": [1, 2, 3, 4],
            "version": _version(client, key),
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    (edited,) = response.json()["patterns"]
    assert (edited["description"], edited["source"]) == ("my own words", "suggestion")
    assert Pattern.objects.get(pk=pattern["id"]).suggestion_id == world["rule"].pk


def test_after_deleting_the_pattern_accepting_makes_it_again(world, alice):
    client = client_for(alice)
    key, rule = world["key"], world["rule"]
    pattern = _accept(client, key, rule).json()["patterns"][0]
    deleted = client.delete(
        f"/api/keys/{key.pk}/patterns/{pattern['id']}/?version={_version(client, key)}"
    )
    assert deleted.status_code == 200
    assert _list(client, key)["suggestions"][0]["pattern_id"] is None
    again = _accept(client, key, rule)
    assert again.status_code == 201
    assert len(again.json()["patterns"]) == 1


def test_dismissing_records_the_callers_decision_once(world, alice):
    client = client_for(alice)
    key, rule = world["key"], world["rule"]
    response = _dismiss(client, key, rule)
    assert response.status_code == 200
    assert (response.json()["id"], response.json()["decision"]) == (rule.pk, "dismissed")
    assert _dismiss(client, key, rule).status_code == 200
    assert SuggestionDecision.objects.filter(suggestion=rule, annotator=alice).count() == 1
    assert not Pattern.objects.exists()


def test_another_annotators_decisions_never_reach_the_caller(world, alice, bob):
    key = world["key"]
    _accept(client_for(alice), key, world["rule"])
    _dismiss(client_for(alice), key, world["cluster"])
    bobs = _list(client_for(bob), key)["suggestions"]
    assert [(s["decision"], s["pattern_id"]) for s in bobs] == [(None, None), (None, None)]
    # And bob's accept makes bob's own pattern, beside alice's.
    assert _accept(client_for(bob), key, world["rule"]).status_code == 201
    assert sorted(Pattern.objects.values_list("annotation__annotator__username", flat=True)) == [
        "alice",
        "bob",
    ]


def test_the_llm_suggestion_is_listed_only_after_the_caller_submits(world, alice, bob):
    client = client_for(alice)
    key, llm = world["key"], world["llm"]
    assert llm.pk not in [s["id"] for s in _list(client, key)["suggestions"]]
    assert _dismiss(client, key, llm).status_code == 404  # as if it did not exist
    submitted = client.post(
        f"/api/keys/{key.pk}/submit/", {"version": _version(client, key)}, format="json"
    )
    assert submitted.status_code == 200, submitted.content
    listed = _list(client, key)["suggestions"]
    assert [s["method"] for s in listed] == ["rule", "cluster", "llm"]
    assert listed[2]["description"] == "an LLM's view"
    # Still after a reopen: alice has seen it. Bob, who has not submitted, has not.
    client.post(f"/api/keys/{key.pk}/reopen/", {"version": _version(client, key)}, format="json")
    assert "llm" in [s["method"] for s in _list(client, key)["suggestions"]]
    assert "llm" not in [s["method"] for s in _list(client_for(bob), key)["suggestions"]]


def test_the_llm_suggestion_cannot_be_accepted(world, alice):
    client = client_for(alice)
    key = world["key"]
    client.post(f"/api/keys/{key.pk}/submit/", {"version": _version(client, key)}, format="json")
    client.post(f"/api/keys/{key.pk}/reopen/", {"version": _version(client, key)}, format="json")
    refused = _accept(client, key, world["llm"], description="x")
    assert refused.status_code == 400
    assert refused.json()["detail"] == SUGGESTION_NOT_ACCEPTABLE
    assert not Pattern.objects.exists()


def test_a_study_with_suggestions_off_lists_nothing_and_accepts_nothing(world, alice):
    key = world["key"]
    key.study.__class__.objects.filter(pk=key.study_id).update(
        suggestions_enabled=False, show_scores=True
    )
    client = client_for(alice)
    assert _list(client, key) == {"enabled": False}
    refused = _accept(client, key, world["rule"])
    assert refused.status_code == 400
    assert refused.json() == {"detail": SUGGESTIONS_OFF, "code": "rule_violation"}
    assert _dismiss(client, key, world["rule"]).status_code == 400
    assert not Pattern.objects.exists() and not SuggestionDecision.objects.exists()


def test_an_annotator_not_assigned_the_key_gets_the_keys_404(world, mallory):
    from tests.conftest import annotator_user

    dave = annotator_user("dave")
    key, rule = world["key"], world["rule"]
    for user in (dave,):
        client = client_for(user)
        expected = client.get(f"/api/keys/{key.pk}/")
        assert expected.status_code == 404
        for response in (
            client.get(f"/api/keys/{key.pk}/suggestions/"),
            client.post(f"/api/keys/{key.pk}/suggestions/{rule.pk}/accept/", {"version": 0}),
            _dismiss(client, key, rule),
        ):
            assert response.status_code == 404
            assert response.json() == expected.json()
    # Someone without the annotator role is refused before any lookup.
    assert client_for(mallory).get(f"/api/keys/{key.pk}/suggestions/").status_code == 403
    assert not SuggestionDecision.objects.exists()


def test_a_suggestion_of_another_key_is_a_404(world, alice):
    _, (other,) = assigned_batch([alice])
    foreign = SuggestionFactory(key=other, prefixes=list(other.prefixes.all()[:3]))
    client = client_for(alice)
    key = world["key"]
    assert _accept(client, key, foreign).status_code == 404
    assert _dismiss(client, key, foreign).status_code == 404
    for missing in (999999, 2**64):
        assert client.post(f"/api/keys/{key.pk}/suggestions/{missing}/dismiss/").status_code == 404
        assert client.get(f"/api/keys/{2**64}/suggestions/").status_code == 404


def test_the_list_takes_the_same_few_queries_for_many_suggestions(
    world, alice, django_assert_max_num_queries
):
    key = world["key"]
    by_rank = {p.rank: p for p in key.prefixes.all()}
    for order in range(1, 30):
        SuggestionFactory(
            key=key, method="rule", order=order, prefixes=[by_rank[r] for r in (1, 2, 3, 4)]
        )
    client = client_for(alice)
    with django_assert_max_num_queries(8):
        listing = _list(client, key)
    assert len(listing["suggestions"]) == 31


def test_suggestions_are_never_in_the_list_of_a_study_an_admin_turned_off_later(world, alice):
    # The admin's study settings carry the switch (docs/evidence.md, "Study settings").
    from tests.factories import UserFactory

    carol = UserFactory(username="carol", is_staff=True, is_superuser=True)
    key = world["key"]
    response = client_for(carol).patch(
        f"/api/admin/studies/{key.study_id}/",
        {"suggestions_enabled": False, "show_scores": True},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert (response.json()["suggestions_enabled"], response.json()["show_scores"]) == (False, True)
    assert _list(client_for(alice), key) == {"enabled": False}


def test_suggestion_rows_are_untouched_by_reads(world, alice):
    before = list(Suggestion.objects.order_by("pk").values())
    _list(client_for(alice), world["key"])
    assert list(Suggestion.objects.order_by("pk").values()) == before
