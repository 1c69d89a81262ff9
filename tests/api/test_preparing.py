"""What an annotator sees of mining: the runs under way whose study will be given to
them, with the study's name and how far along, never another run nor its set-up."""

from __future__ import annotations

from unittest import mock

import pytest

from mining.apis import UNKNOWN_USERNAMES
from mining.models import MiningRun, MiningShard
from mining.services import ASSIGN_NOT_ANNOTATOR
from tests.conftest import client_for
from tests.errors import field_errors

pytestmark = pytest.mark.django_db

PARAMS = {"model": "builtin:minilm", "corpus": "builtin:wiki-vital", "max_sentences": 100}


def _run(name: str, status: str, *annotators, **fields) -> MiningRun:
    run = MiningRun.objects.create(study_name=name, params=PARAMS, status=status, **fields)
    run.assign_to.set(annotators)
    return run


def test_alice_follows_the_runs_that_will_give_her_keys_and_nothing_else(
    alice, bob, carol, django_assert_num_queries
):
    mine = _run("for alice and bob", "mining", alice, bob, sentences_total=100, tokens_total=900)
    MiningShard.objects.create(
        run=mine,
        index=0,
        start=0,
        end=100,
        status="running",
        sentences_done=40,
        tokens_done=300,
        tokens_per_second=100.0,
    )
    queued = _run("queued for alice", "queued", alice)
    _run("bob's alone", "mining", bob)
    _run("nobody's", "mining")
    _run("done for alice", "done", alice)
    _run("failed for alice", "failed", alice)
    _run("cancelled for alice", "cancelled", alice)
    _run("cancelling for alice", "mining", alice, cancel_requested=True)

    client = client_for(alice)
    with django_assert_num_queries(3):  # session, user with its role, the runs
        response = client.get("/api/preparing/")
    assert response.status_code == 200
    assert response.json() == [
        {
            "id": mine.pk,
            "study_name": "for alice and bob",
            "status": "mining",
            "progress": {
                "sentences_done": 40,
                "sentences_total": 100,
                "tokens_done": 300,
                "tokens_total": 900,
                "eta_seconds": 6.0,
            },
        },
        {
            "id": queued.pk,
            "study_name": "queued for alice",
            "status": "queued",
            "progress": {
                "sentences_done": 0,
                "sentences_total": 0,
                "tokens_done": 0,
                "tokens_total": 0,
                "eta_seconds": None,
            },
        },
    ]
    assert [run["study_name"] for run in client_for(bob).get("/api/preparing/").json()] == [
        "for alice and bob",
        "bob's alone",
    ]


def test_only_annotators_may_ask(carol, mallory, api_client):
    _run("something", "mining")
    for client in (client_for(carol), client_for(mallory), api_client):
        assert client.get("/api/preparing/").status_code == 403


@pytest.fixture
def queued():
    with mock.patch("mining.tasks.prepare_run.delay") as delay:
        yield delay


BODY = {"study_name": "s1", "model": "builtin:minilm", "corpus": "builtin:wiki-vital"}


def test_carol_starts_a_run_whose_study_goes_to_the_annotators_she_names(carol, alice, bob, queued):
    response = client_for(carol).post(
        "/api/admin/mining-runs/", {**BODY, "assign_to": ["bob", "alice", "bob"]}, format="json"
    )
    assert response.status_code == 201, response.content
    run = MiningRun.objects.get()
    assert sorted(run.assign_to.values_list("username", flat=True)) == ["alice", "bob"]
    assert "assign_to" not in run.params  # not a mining parameter
    assert [r["id"] for r in client_for(alice).get("/api/preparing/").json()] == [run.pk]


def test_a_run_for_an_unknown_account_or_a_non_annotator_is_refused(carol, mallory, queued):
    client = client_for(carol)
    response = client.post(
        "/api/admin/mining-runs/", {**BODY, "assign_to": ["nobody"]}, format="json"
    )
    assert response.status_code == 400
    assert field_errors(response)["assign_to"] == [UNKNOWN_USERNAMES.format(names="'nobody'")]
    response = client.post(
        "/api/admin/mining-runs/", {**BODY, "assign_to": ["mallory"]}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "mining_refused"
    assert response.json()["detail"] == ASSIGN_NOT_ANNOTATOR.format(username="mallory")
    assert not MiningRun.objects.exists()
    queued.assert_not_called()
