"""The suggestion job (annotate.services.suggestions) on a hand-built study: what it
stores, that a rerun duplicates nothing and keeps what annotators decided on, that the
new suggestions are scored, the LLM explainer against a local server, and the Celery task
by its name."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from celery import current_app
from django.db import transaction

from annotate.evidence.llm import LlmConfig
from annotate.evidence.suggest import PrefixText, rule_proposals
from annotate.models import Key, Suggestion, SuggestionDecision, TriggerPrefix
from annotate.services.suggestions import (
    SUGGEST_LLM_TASK,
    SUGGEST_TASK,
    suggestions_create_for_study,
    suggestions_describe_with_llm,
    suggestions_queue,
)
from tests.factories import KeyFactory, StudyFactory, UserFactory, key_examples
from tests.integration.conftest import postgres, redis_broker, start_worker  # noqa: F401
from tests.integration.processes import poll

pytestmark = pytest.mark.django_db

# (text, trigger token, tokens) of one hand-built key: " of" ends 3, "-ing" ends 4,
# " York" ends 4 (3 in "New York"), and three sentences on cooking.
KEY_PREFIXES = [
    ["The", " history", " of"],
    ["A", " map", " of"],
    ["In", " the", " middle", " of"],
    ["She", " was", " walking"],
    ["He", " kept", " talking"],
    ["They", " were", " singing"],
    ["Add", " the", " chopped", " onions", " to", " the", " frying", " pan"],
    ["The", " soup", " was", " seasoned", " with", " garlic", " and", " pepper"],
    ["He", " cooked", " pasta", " with", " tomato", " sauce", " for", " dinner"],
    ["He", " went", " swimming"],
    ["Visit", " New", " York"],
    ["Moved", " to", " New", " York"],
    ["Born", " in", " New", " York"],
    ["The", " Duke", " of", " York"],
]


def hand_built_key(study, index: int = 0) -> Key:
    key = KeyFactory(study=study, layer=1, index=index)
    TriggerPrefix.objects.bulk_create(
        [
            TriggerPrefix(
                key=key,
                rank=rank,
                coefficient=float(100 - rank),
                text="".join(tokens),
                trigger_token=tokens[-1],
                trigger_token_id=rank,
                next_token=" next",
                next_token_id=1000 + rank,
                sentence="".join(tokens) + " next.",
                sentence_index=rank,
                position=len(tokens) - 1,
                tokens=tokens,
                token_coefficients=[0.0] * len(tokens),
            )
            for rank, tokens in enumerate(KEY_PREFIXES, 1)
        ]
    )
    return key


def _stored(key: Key) -> list[tuple[str, Any, tuple[int, ...]]]:
    return sorted(
        (
            s.method,
            json.dumps(s.rule, sort_keys=True),
            tuple(sorted(s.prefixes.values_list("rank", flat=True))),
        )
        for s in Suggestion.objects.filter(key=key)
    )


def test_the_job_stores_the_rules_of_a_hand_built_key_with_exactly_their_prefixes():
    key = hand_built_key(StudyFactory())
    run = suggestions_create_for_study(study=key.study, score=False)
    rules = Suggestion.objects.filter(key=key, method="rule").order_by("order")
    assert [
        (
            s.rule,
            s.description,
            s.kind,
            tuple(s.prefixes.order_by("rank").values_list("rank", flat=True)),
        )
        for s in rules
    ] == [
        ({"type": "token", "value": "york"}, 'trigger token "york"', "shallow", (11, 12, 13, 14)),
        ({"type": "suffix", "value": "ing"}, 'last word ends in "-ing"', "shallow", (4, 5, 6, 10)),
        ({"type": "token", "value": "of"}, 'trigger token "of"', "shallow", (1, 2, 3)),
    ]
    assert [s.order for s in rules] == [0, 1, 2]
    # Clusters: semantic groups of at least 3 prefixes, no description.
    clusters = list(Suggestion.objects.filter(key=key, method="cluster"))
    assert clusters, "the cooking sentences (or the York ones) form a group"
    for cluster in clusters:
        assert cluster.kind == "semantic" and cluster.description == "" and cluster.rule is None
        assert cluster.prefixes.count() >= 3
    assert sorted(run.created) == sorted(
        Suggestion.objects.filter(key=key).values_list("pk", flat=True)
    )


def test_the_stored_rules_are_what_the_generator_proposes():
    key = hand_built_key(StudyFactory())
    suggestions_create_for_study(study=key.study, score=False)
    prefixes = [
        PrefixText(rank=p.rank, text=p.text, trigger_token=p.trigger_token, tokens=p.tokens)
        for p in key.prefixes.order_by("rank")
    ]
    expected = sorted(
        ("rule", json.dumps(p.rule, sort_keys=True), p.ranks) for p in rule_proposals(prefixes)
    )
    assert [s for s in _stored(key) if s[0] == "rule"] == expected


def test_running_it_again_duplicates_nothing():
    study = StudyFactory()
    keys = [hand_built_key(study, index) for index in range(3)]
    first = suggestions_create_for_study(study=study, score=False)
    before = {key.pk: _stored(key) for key in keys}
    ids = sorted(Suggestion.objects.filter(key__study=study).values_list("pk", flat=True))
    again = suggestions_create_for_study(study=study, score=False)
    assert again.created == [] and again.removed == 0
    assert again.kept == len(first.created) == len(ids)
    assert sorted(Suggestion.objects.filter(key__study=study).values_list("pk", flat=True)) == ids
    assert {key.pk: _stored(key) for key in keys} == before


def test_a_rerun_keeps_what_annotators_decided_on_and_drops_only_the_rest():
    key = hand_built_key(StudyFactory())
    suggestions_create_for_study(study=key.study, score=False)
    of = Suggestion.objects.get(key=key, rule={"type": "token", "value": "of"})
    ing = Suggestion.objects.get(key=key, rule={"type": "suffix", "value": "ing"})
    alice = UserFactory(username="alice")
    SuggestionDecision.objects.create(suggestion=of, annotator=alice, decision="dismissed")
    # The prefixes change (a re-import, say): no prefix ends in " of" or "-ing" any more.
    for rank in (1, 2, 3, 4, 5, 6, 10):
        TriggerPrefix.objects.filter(key=key, rank=rank).update(
            text=f"Nothing shared {rank}x", trigger_token=f"{rank}x", tokens=[]
        )
    run = suggestions_create_for_study(study=key.study, score=False)
    assert Suggestion.objects.filter(pk=of.pk).exists()  # decided on: kept
    assert not Suggestion.objects.filter(pk=ing.pk).exists()  # nobody decided: dropped
    assert run.removed >= 1
    assert SuggestionDecision.objects.get(suggestion=of).decision == "dismissed"
    rules = list(Suggestion.objects.filter(key=key, method="rule").values_list("order", flat=True))
    assert len(rules) == len(set(rules))


def test_the_new_suggestions_are_scored_on_the_held_out_examples():
    key = hand_built_key(StudyFactory())
    key_examples(key)
    other = hand_built_key(key.study, index=1)  # the shuffled baseline's key
    key_examples(other)
    run = suggestions_create_for_study(study=key.study)
    assert run.scored == len(run.created) > 0
    for suggestion in Suggestion.objects.filter(key=key):
        assert set(suggestion.scores) == {
            "detection",
            "embedding",
            "shuffled_detection",
            "shuffled_embedding",
        }
        assert 0.0 <= suggestion.scores["embedding"] <= 1.0
        if suggestion.method == "rule":
            assert suggestion.scores["detection"] is not None
        else:
            assert suggestion.scores["detection"] is None


def test_a_study_without_keys_or_prefixes_makes_nothing():
    study = StudyFactory()
    KeyFactory(study=study)
    run = suggestions_create_for_study(study=study, score=False)
    assert run.created == [] and Suggestion.objects.count() == 0


# --- the LLM explainer, against a local server speaking the protocol -------------------


@pytest.fixture
def llm_server() -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"status": 200, "content": "cities and prepositions", "seen": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            state["seen"] += 1
            body = json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": state["content"]}}]}
            ).encode()
            if state["status"] != 200:
                body = b"internal error"
            self.send_response(state["status"])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state["config"] = LlmConfig(
        base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="m", timeout_s=10
    )
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_llm_explainer_writes_one_description_per_key_once(llm_server):
    study = StudyFactory()
    keys = [hand_built_key(study, index) for index in range(2)]
    run = suggestions_describe_with_llm(study=study, config=llm_server["config"], score=False)
    assert run.error is None and len(run.created) == 2
    for key in keys:
        (llm,) = Suggestion.objects.filter(key=key, method="llm")
        assert (llm.description, llm.kind, llm.rule) == (
            "cities and prepositions",
            "semantic",
            None,
        )
        assert llm.prefixes.count() == 0
    again = suggestions_describe_with_llm(study=study, config=llm_server["config"], score=False)
    assert again.created == [] and llm_server["seen"] == 2
    assert Suggestion.objects.filter(method="llm").count() == 2


def test_an_llm_failure_writes_nothing_and_says_why(llm_server):
    study = StudyFactory()
    hand_built_key(study)
    llm_server["status"] = 500
    run = suggestions_describe_with_llm(study=study, config=llm_server["config"], score=False)
    assert run.created == []
    assert "HTTP 500" in (run.error or "")
    assert not Suggestion.objects.filter(method="llm").exists()


def test_the_llm_explainer_is_off_without_an_endpoint(settings):
    settings.LLM_BASE_URL = ""
    study = StudyFactory()
    hand_built_key(study)
    run = suggestions_describe_with_llm(study=study)
    assert run.created == [] and run.error is None
    assert not Suggestion.objects.exists()


# --- the Celery task ----------------------------------------------------------------------


def test_the_tasks_are_registered_under_their_stable_names():
    import annotate.tasks  # noqa: F401  (the worker's autodiscovery imports it)

    assert current_app.tasks[SUGGEST_TASK].name == "annotate.suggest_study"
    assert current_app.tasks[SUGGEST_LLM_TASK].name == "annotate.suggest_study_llm"


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_the_job_queued_when_the_study_commits(start_worker):  # noqa: F811
    # A worker process on the default queue, over Redis: the message names the task and
    # carries JSON only; the study is committed before the message goes out.
    worker = start_worker(queues=["celery"])
    with transaction.atomic():
        key = hand_built_key(StudyFactory())
        suggestions_queue(study_id=key.study_id)
        assert not Suggestion.objects.exists()
    rules = poll(
        lambda: Suggestion.objects.filter(key=key, method="rule").count() == 3,
        timeout=120,
        what="the worker's rule suggestions",
        log=worker.log,
    )
    assert rules
    assert Suggestion.objects.filter(key=key, method="cluster").exists()


def test_the_task_skips_a_study_deleted_since_it_was_queued():
    import annotate.tasks  # noqa: F401

    current_app.tasks[SUGGEST_TASK].apply(kwargs={"study_id": 987654}).get()
    assert not Suggestion.objects.exists()
