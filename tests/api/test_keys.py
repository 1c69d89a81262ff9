"""The annotator's workspace through the API: keys, annotation, patterns, submit."""

from __future__ import annotations

import json
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.renderers import JSONRenderer

from annotate.apis.annotator import PREFIX_RANKS_UNKNOWN, KeyDetailApi
from annotate.apis.common import AnnotationStateSerializer
from annotate.limits import MAX_PATTERNS_PER_ANNOTATION
from annotate.models import Annotation, AnnotationEvent, Key, Pattern
from annotate.selectors.annotations import annotation_view
from annotate.services.annotations import ANNOTATION_IS_SUBMITTED, STALE_VERSION
from annotate.services.patterns import PATTERN_DUPLICATE_PREFIXES, PATTERN_NEEDS_THREE_PREFIXES
from tests.conftest import client_for
from tests.errors import field_errors
from tests.factories import (
    AnnotationFactory,
    AssignmentFactory,
    BatchFactory,
    StudyFactory,
    assigned_batch,
    key_examples,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(alice):
    _, (key,) = assigned_batch([alice])
    return key


def _open(client, key) -> dict:
    response = client.get(f"/api/keys/{key.pk}/")
    assert response.status_code == 200, response.content
    return response.json()


def test_key_detail_gives_each_prefix_the_trigger_span_in_its_text(alice, key):
    key.prefixes.filter(rank=2).update(text="The Marriage", trigger_start=4, trigger_end=12)
    prefixes = _open(client_for(alice), key)["prefixes"]
    second = prefixes[1]
    assert second["text"][second["trigger_start"] : second["trigger_end"]] == "Marriage"
    assert [(p["trigger_start"], p["trigger_end"]) for p in prefixes[2:]] == [(None, None)] * 23


def test_key_detail_gives_the_raw_bytes_of_a_token_that_is_part_of_a_character(alice, key):
    key.prefixes.filter(rank=1).update(
        trigger_token="\ufffd", trigger_token_bytes="f0", next_token_bytes="9f"
    )
    first = _open(client_for(alice), key)["prefixes"][0]
    assert (first["trigger_token"], first["trigger_token_bytes"]) == ("\ufffd", "f0")
    assert first["next_token_bytes"] == "9f"


def test_key_detail_names_my_own_assignment_never_someone_elses(alice, bob):
    """A link may carry another annotator's assignment (``/keys/8?assignment=1``): the
    key's screen is told the user's own assignment holding the key instead."""
    batch, (key,) = assigned_batch([alice, bob])
    alices = batch.assignments.get(annotator=alice).pk
    bobs = batch.assignments.get(annotator=bob).pk
    bobs_second = AssignmentFactory(
        batch=BatchFactory(study=batch.study, keys=[key]), annotator=bob
    ).pk
    client = client_for(bob)

    def worked_in(query: str) -> int | None:
        response = client.get(f"/api/keys/{key.pk}/{query}")
        assert response.status_code == 200, response.content
        return response.json()["assignment_id"]

    assert worked_in(f"?assignment={alices}") == bobs
    assert worked_in("") == bobs
    assert worked_in(f"?assignment={bobs_second}") == bobs_second
    assert worked_in(f"?assignment={bobs}") == bobs
    assert worked_in("?assignment=999999") == bobs
    assert client.get(f"/api/keys/{key.pk}/?assignment=x").status_code == 400


def _pattern(client, key, version, ranks=(1, 2, 3), kind="shallow", **extra):
    body = {"description": "numbers", "kind": kind, "prefix_ranks": list(ranks), "version": version}
    return client.post(f"/api/keys/{key.pk}/patterns/", {**body, **extra}, format="json")


def test_key_detail_shows_the_prefixes_and_my_annotation_not_started(alice, key):
    data = _open(client_for(alice), key)
    assert (data["id"], data["layer"], data["index"]) == (key.pk, key.layer, key.index)
    assert [p["rank"] for p in data["prefixes"]] == list(range(1, 26))
    first = data["prefixes"][0]
    assert set(first) == {
        "rank",
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
    assert (first["trigger_start"], first["trigger_end"]) == (None, None)  # none in the factory
    assert (first["trigger_token_bytes"], first["next_token_bytes"]) == ("", "")
    annotation = data["annotation"]
    assert (annotation["status"], annotation["note"], annotation["version"]) == ("new", "", 1)
    assert annotation["patterns"] == []
    assert {label["label"] for label in annotation["labels"]} == {"not-covered"}
    assert Annotation.objects.filter(key=key, annotator=alice).count() == 0


def test_a_cut_sentences_unknown_next_token_is_null(alice, key):
    key.prefixes.filter(rank=2).update(next_token=None, next_token_id=-2)
    prefixes = _open(client_for(alice), key)["prefixes"]
    assert prefixes[1]["next_token"] is None
    assert prefixes[0]["next_token"] == " n1"


def test_value_tokens_are_hidden_unless_the_study_shows_them(alice, key):
    key.value_top_tokens = [["Paris", 0.5], [" France", 0.25]]
    key.save()
    client = client_for(alice)
    assert _open(client, key)["value_top_tokens"] is None
    key.study.show_value_tokens = True
    key.study.save()
    assert _open(client, key)["value_top_tokens"] == [
        {"token": "Paris", "probability": 0.5},
        {"token": " France", "probability": 0.25},
    ]


def test_a_pattern_with_two_prefixes_is_a_400_with_the_rules_message(alice, key):
    client = client_for(alice)
    _open(client, key)
    response = _pattern(client, key, 1, ranks=[1, 2])
    assert response.status_code == 400
    assert response.json() == {
        "detail": PATTERN_NEEDS_THREE_PREFIXES,
        "code": "pattern_needs_three_prefixes",
    }


def test_a_rank_that_is_not_one_of_the_keys_prefixes_is_a_400(alice, key):
    client = client_for(alice)
    _open(client, key)
    response = _pattern(client, key, 1, ranks=[1, 2, 26])
    assert response.status_code == 400
    assert field_errors(response) == {
        "prefix_ranks": [PREFIX_RANKS_UNKNOWN.format(ranks="26", n=25)]
    }


def test_a_repeated_rank_is_a_400(alice, key):
    client = client_for(alice)
    _open(client, key)
    response = _pattern(client, key, 1, ranks=[1, 1, 2])
    assert response.json() == {
        "detail": PATTERN_DUPLICATE_PREFIXES,
        "code": "pattern_duplicate_prefixes",
    }


def test_adding_patterns_derives_the_labels(alice, key):
    client = client_for(alice)
    _open(client, key)
    state = _pattern(client, key, 1, ranks=[1, 2, 3], kind="shallow").json()
    state = _pattern(client, key, state["version"], ranks=[3, 4, 5], kind="semantic").json()
    labels = {label["rank"]: label["label"] for label in state["labels"]}
    assert [labels[r] for r in (1, 3, 4, 6)] == [
        "shallow",
        "shallow+semantic",
        "semantic",
        "not-covered",
    ]
    assert state["version"] == 3
    assert [p["prefix_ranks"] for p in state["patterns"]] == [[1, 2, 3], [3, 4, 5]]


def test_two_tabs_saving_the_same_annotation_one_gets_409_and_no_write_is_lost(alice, key):
    tab_a, tab_b = client_for(alice), client_for(alice)
    version = _open(tab_a, key)["annotation"]["version"]
    assert _open(tab_b, key)["annotation"]["version"] == version

    saved = tab_a.put(
        f"/api/keys/{key.pk}/annotation/", {"note": "from A", "version": version}, format="json"
    )
    stale = tab_b.put(
        f"/api/keys/{key.pk}/annotation/", {"note": "from B", "version": version}, format="json"
    )

    assert saved.status_code == 200
    assert stale.status_code == 409
    body = stale.json()
    assert body["detail"] == STALE_VERSION
    assert body["current"]["note"] == "from A"
    assert body["current"]["version"] == version + 1
    # Tab B merges and retries on the current version: both writes survive.
    merged = tab_b.put(
        f"/api/keys/{key.pk}/annotation/",
        {"note": "from A\nfrom B", "version": body["current"]["version"]},
        format="json",
    )
    assert merged.status_code == 200
    assert Annotation.objects.get(key=key).note == "from A\nfrom B"
    notes = [e.after["note"] for e in AnnotationEvent.objects.filter(action="save")]
    assert notes == ["from A", "from A\nfrom B"]


def test_a_stale_pattern_create_is_a_409_and_creates_nothing(alice, key):
    tab_a, tab_b = client_for(alice), client_for(alice)
    _open(tab_a, key)
    assert _pattern(tab_a, key, 1).status_code == 201
    response = _pattern(tab_b, key, 1, ranks=[7, 8, 9])
    assert response.status_code == 409
    assert len(response.json()["current"]["patterns"]) == 1
    assert Pattern.objects.count() == 1


def test_a_retried_pattern_create_with_its_client_id_makes_no_duplicate(alice, key):
    client = client_for(alice)
    _open(client, key)
    client_id = str(uuid.uuid4())
    first = _pattern(client, key, 1, client_id=client_id)
    retry = _pattern(client, key, 1, client_id=client_id)
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json() == first.json()
    assert Pattern.objects.count() == 1


def test_update_and_delete_a_pattern(alice, key):
    client = client_for(alice)
    _open(client, key)
    state = _pattern(client, key, 1).json()
    pattern_id = state["patterns"][0]["id"]
    url = f"/api/keys/{key.pk}/patterns/{pattern_id}/"
    state = client.patch(
        url, {"kind": "semantic", "prefix_ranks": [2, 3, 4], "version": 2}, format="json"
    ).json()
    assert state["patterns"][0]["kind"] == "semantic"
    assert state["patterns"][0]["prefix_ranks"] == [2, 3, 4]
    assert state["patterns"][0]["description"] == "numbers"
    stale = client.delete(f"{url}?version=2")
    assert stale.status_code == 409
    deleted = client.delete(f"{url}?version={state['version']}")
    assert deleted.status_code == 200
    assert deleted.json()["patterns"] == []


def test_submit_then_reopen_and_a_submitted_annotation_is_read_only(alice, key):
    client = client_for(alice)
    _open(client, key)
    submitted = client.post(f"/api/keys/{key.pk}/submit/", {"version": 1}, format="json")
    assert submitted.status_code == 200
    assert submitted.json()["status"] == "submitted"
    refused = _pattern(client, key, 2)
    assert refused.status_code == 409
    assert refused.json()["detail"] == ANNOTATION_IS_SUBMITTED
    assert refused.json()["current"]["status"] == "submitted"
    reopened = client.post(f"/api/keys/{key.pk}/reopen/", {"version": 2}, format="json")
    assert reopened.json()["status"] == "draft"
    assert _pattern(client, key, 3).status_code == 201


def test_next_key_walks_the_assignment_and_answers_204_when_done(alice):
    batch, keys = assigned_batch([alice], n_keys=2, n_prefixes=3)
    client = client_for(alice)
    assignment_id = batch.assignments.get().pk
    first = client.get("/api/next-key/").json()
    assert first == {"key_id": keys[0].pk, "assignment_id": assignment_id}
    AnnotationFactory(key=keys[0], annotator=alice, status=Annotation.Status.SUBMITTED)
    assert client.get(f"/api/next-key/?assignment={assignment_id}").json()["key_id"] == keys[1].pk
    AnnotationFactory(key=keys[1], annotator=alice, status=Annotation.Status.SUBMITTED)
    response = client.get("/api/next-key/")
    assert response.status_code == 204
    assert response.content == b""


def test_next_key_of_an_assignment_that_is_not_yours_is_not_found(alice, bob):
    # A link that names someone else's assignment is never used: bob, who opened one
    # with alice's, must not be told that nothing is left while his own keys are open.
    batch, keys = assigned_batch([alice, bob], n_keys=2, n_prefixes=3)
    alices = batch.assignments.get(annotator=alice).pk
    client = client_for(bob)
    for assignment_id in (alices, alices + 1000):
        response = client.get(f"/api/next-key/?assignment={assignment_id}")
        assert response.status_code == 404, response.content
        assert response.json() == {"detail": "Not found.", "code": "not_found"}
    bobs = batch.assignments.get(annotator=bob).pk
    mine = client.get(f"/api/next-key/?assignment={bobs}").json()
    assert mine == {"key_id": keys[0].pk, "assignment_id": bobs}


def test_opening_a_key_starts_nothing_until_the_first_edit(alice, carol):
    # Opening a key must not make it a "draft" in any count: the first edit does.
    batch, (key, other) = assigned_batch([alice], n_keys=2, n_prefixes=5)
    client = client_for(alice)
    state = client.get(f"/api/keys/{key.pk}/").json()["annotation"]
    assert client.get(f"/api/keys/{key.pk}/annotation/").json() == state
    assert state["status"] == "new"
    assert (state["id"], state["note"], state["patterns"]) == (None, "", [])
    assert [label["label"] for label in state["labels"]] == ["not-covered"] * 5
    assert not Annotation.objects.exists()
    assignment = batch.assignments.get()
    listed = client.get(f"/api/assignments/{assignment.pk}/keys/").json()["results"]
    assert [each["status"] for each in listed] == [None, None]
    progress = client_for(carol).get(f"/api/admin/batches/{batch.pk}/progress/").json()
    assert (progress["total"]["draft"], progress["total"]["new"]) == (0, 2)

    # The first edit names the version the read showed, and makes the draft.
    saved = client.put(
        f"/api/keys/{key.pk}/annotation/",
        {"note": "first", "version": state["version"]},
        format="json",
    )
    assert saved.status_code == 200, saved.content
    assert saved.json()["status"] == "draft" and saved.json()["id"] is not None
    progress = client_for(carol).get(f"/api/admin/batches/{batch.pk}/progress/").json()
    assert (progress["total"]["draft"], progress["total"]["new"]) == (1, 1)
    # Submitting a key never edited (zero patterns is a finding) works from "new" too.
    version = client.get(f"/api/keys/{other.pk}/").json()["annotation"]["version"]
    submitted = client.post(f"/api/keys/{other.pk}/submit/", {"version": version}, format="json")
    assert submitted.status_code == 200, submitted.content
    assert submitted.json()["status"] == "submitted"


def test_assignment_keys_list_my_status_per_key(alice, bob):
    batch, keys = assigned_batch([alice, bob], n_keys=3, n_prefixes=3)
    AnnotationFactory(key=keys[0], annotator=alice, status=Annotation.Status.SUBMITTED)
    AnnotationFactory(key=keys[1], annotator=alice, version=4)
    AnnotationFactory(key=keys[2], annotator=bob, status=Annotation.Status.SUBMITTED)
    assignment = batch.assignments.get(annotator=alice)
    page = client_for(alice).get(f"/api/assignments/{assignment.pk}/keys/").json()
    assert (page["count"], page["limit"], page["offset"]) == (3, 100, 0)
    assert [(r["id"], r["status"], r["version"]) for r in page["results"]] == [
        (keys[0].pk, "submitted", 1),
        (keys[1].pk, "draft", 4),
        (keys[2].pk, None, None),
    ]


@pytest.fixture
def big_assignment(alice):
    """An assignment of 5,000 keys (no prefixes: the list does not show them)."""
    study = StudyFactory()
    keys = Key.objects.bulk_create(
        [Key(study=study, layer=1 + i // 1_000, index=i % 1_000) for i in range(5_000)]
    )
    batch = BatchFactory(study=study, keys=keys)
    return AssignmentFactory(batch=batch, annotator=alice), keys


def test_a_5000_key_assignment_answers_one_bounded_page_and_the_count(alice, big_assignment):
    assignment, keys = big_assignment
    AnnotationFactory(key=keys[150], annotator=alice, status=Annotation.Status.SUBMITTED)
    client = client_for(alice)
    url = f"/api/assignments/{assignment.pk}/keys/"

    first = client.get(url)
    assert first.status_code == 200
    body = first.json()
    assert (body["count"], body["limit"], body["offset"]) == (5_000, 100, 0)
    assert [r["id"] for r in body["results"]] == [k.pk for k in keys[:100]]
    assert len(first.content) < 20_000  # the whole list was ~400 KB here, 8.4 MB at 100,000

    page = client.get(url, {"limit": 50, "offset": 140}).json()
    assert [r["id"] for r in page["results"]] == [k.pk for k in keys[140:190]]
    assert page["results"][10]["status"] == "submitted"
    last = client.get(url, {"limit": 1_000, "offset": 4_900}).json()
    assert [r["id"] for r in last["results"]] == [k.pk for k in keys[4_900:]]
    assert client.get(url, {"offset": 5_000}).json()["results"] == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"limit": 1_001}, "limit"),
        ({"limit": 0}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"offset": -1}, "offset"),
        ({"offset": 2**70}, "offset"),
    ],
)
def test_a_bad_page_of_keys_is_a_400_naming_the_parameter(alice, query, field):
    batch, _ = assigned_batch([alice], n_keys=1, n_prefixes=1)
    assignment = batch.assignments.get()
    response = client_for(alice).get(f"/api/assignments/{assignment.pk}/keys/", query)
    assert response.status_code == 400, response.content
    assert list(field_errors(response)) == [field]


# --- bad input: always a 4xx with JSON, never a 500 --------------------------------------

HUGE = "x" * 100_000
BAD_WRITES = [
    ("put", "annotation/", {}),
    ("put", "annotation/", {"note": 5, "version": "one"}),
    ("put", "annotation/", {"note": HUGE, "version": 1}),
    ("put", "annotation/", {"note": "n", "version": -1}),
    ("put", "annotation/", {"note": "n", "version": 2**70}),
    ("put", "annotation/", {"note": None, "version": 1}),
    ("put", "annotation/", ["note", 1]),
    ("put", "annotation/", "just a string"),
    ("post", "patterns/", {}),
    (
        "post",
        "patterns/",
        {"description": "d", "kind": "deep", "prefix_ranks": [1, 2, 3], "version": 1},
    ),
    (
        "post",
        "patterns/",
        {"description": "d", "kind": "shallow", "prefix_ranks": [0, 1, 2], "version": 1},
    ),
    (
        "post",
        "patterns/",
        {"description": "d", "kind": "shallow", "prefix_ranks": [1, 2, "a"], "version": 1},
    ),
    (
        "post",
        "patterns/",
        {"description": "d", "kind": "shallow", "prefix_ranks": "1,2,3", "version": 1},
    ),
    (
        "post",
        "patterns/",
        {"description": "d", "kind": "shallow", "prefix_ranks": [1, 2, 10**9], "version": 1},
    ),
    (
        "post",
        "patterns/",
        {"description": "d", "kind": "shallow", "prefix_ranks": list(range(1, 5000)), "version": 1},
    ),
    (
        "post",
        "patterns/",
        {"description": HUGE, "kind": "shallow", "prefix_ranks": [1, 2, 3], "version": 1},
    ),
    (
        "post",
        "patterns/",
        {"description": "", "kind": "shallow", "prefix_ranks": [1, 2, 3], "version": 1},
    ),
    (
        "post",
        "patterns/",
        {"description": "   ", "kind": "shallow", "prefix_ranks": [1, 2, 3], "version": 1},
    ),
    (
        "post",
        "patterns/",
        {
            "description": "d",
            "kind": "shallow",
            "prefix_ranks": [1, 2, 3],
            "version": 1,
            "client_id": "nope",
        },
    ),
    (
        "post",
        "patterns/",
        {"description": ["d"], "kind": ["shallow"], "prefix_ranks": [[1]], "version": 1.5},
    ),
    ("post", "submit/", {}),
    ("post", "submit/", {"version": "abc"}),
    ("post", "submit/", None),
    ("post", "reopen/", {"version": True}),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD_WRITES)
def test_a_bad_body_is_a_400_never_a_500(alice, key, method, path, body):
    client = client_for(alice)
    _open(client, key)
    response = getattr(client, method)(f"/api/keys/{key.pk}/{path}", body, format="json")
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/json"
    assert Pattern.objects.count() == 0
    # Opening the key made nothing, and a refused write makes nothing either.
    assert not Annotation.objects.filter(key=key).exists()


@pytest.mark.parametrize(
    "body",
    [{}, {"version": 2, "kind": "deep"}, {"version": 2, "prefix_ranks": [1]}, {"kind": None}],
)
def test_a_bad_pattern_update_is_a_400(alice, key, body):
    client = client_for(alice)
    _open(client, key)
    pattern_id = _pattern(client, key, 1).json()["patterns"][0]["id"]
    response = client.patch(f"/api/keys/{key.pk}/patterns/{pattern_id}/", body, format="json")
    assert response.status_code == 400, response.content


@pytest.mark.parametrize("query", ["", "?version=", "?version=abc", "?version=-3"])
def test_a_delete_without_a_valid_version_is_a_400(alice, key, query):
    client = client_for(alice)
    _open(client, key)
    pattern_id = _pattern(client, key, 1).json()["patterns"][0]["id"]
    response = client.delete(f"/api/keys/{key.pk}/patterns/{pattern_id}/{query}")
    assert response.status_code == 400, response.content
    assert Pattern.objects.count() == 1


def test_a_kind_with_a_lone_surrogate_is_a_400_that_writes_it_as_an_escape(alice, key):
    # Valid JSON, and DRF's answer echoes the choice: left as it is, the surrogate made
    # the JSON renderer fail (a 500). A raw body: the test client cannot encode one.
    client = client_for(alice)
    _open(client, key)
    body = '{"description": "d", "kind": "x\\ud800", "prefix_ranks": [1, 2, 3], "version": 1}'
    response = client.post(
        f"/api/keys/{key.pk}/patterns/", data=body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert field_errors(response) == {"kind": ['"x\\ud800" is not a valid choice.']}
    assert Pattern.objects.count() == 0


def test_invalid_json_is_a_400(alice, key):
    response = client_for(alice).put(
        f"/api/keys/{key.pk}/annotation/", data="{nope", content_type="application/json"
    )
    assert response.status_code == 400


@pytest.mark.parametrize("query", ["?assignment=abc", "?assignment=0", "?assignment=1e3"])
def test_next_key_with_a_bad_filter_is_a_400(alice, query):
    assert client_for(alice).get(f"/api/next-key/{query}").status_code == 400


@pytest.mark.parametrize(
    "path",
    [
        "/api/keys/99999999999999999999999/",
        "/api/keys/0/annotation/",
        "/api/assignments/99999999999999999999999/keys/",
        "/api/keys/1/patterns/99999999999999999999999/",
    ],
)
def test_unknown_or_huge_ids_are_a_json_404(alice, key, path):
    client = client_for(alice)
    response = client.get(path) if "patterns" not in path else client.delete(path + "?version=1")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found.", "code": "not_found"}


# --- queries: O(1) per request ----------------------------------------------------------
# Counted with the test's transaction around each request, so a write's own transaction
# shows as SAVEPOINT/RELEASE (BEGIN/COMMIT when served). Every annotator request starts
# with the session and the user (whose role comes in the same query).


def _queries(client, method, path, body=None) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = getattr(client, method)(path, body, format="json")
    assert response.status_code in (200, 201), response.content
    return [q["sql"] for q in queries.captured_queries]


def _count(client, path) -> int:
    return len(_queries(client, "get", path))


def _annotated_key(user, n_prefixes: int, n_patterns: int):
    _, (key,) = assigned_batch([user], n_prefixes=n_prefixes)
    client = client_for(user)
    version = _open(client, key)["annotation"]["version"]
    for i in range(n_patterns):
        version = _pattern(client, key, version, ranks=[i + 1, i + 2, i + 3]).json()["version"]
    return client, key, version


def test_key_detail_costs_seven_queries_for_5_or_25_prefixes(alice):
    client, small, _ = _annotated_key(alice, n_prefixes=5, n_patterns=1)
    _, large, _ = _annotated_key(alice, n_prefixes=25, n_patterns=8)
    key_examples(large)
    few = _count(client, f"/api/keys/{small.pk}/")
    many = _count(client, f"/api/keys/{large.pk}/")
    # session, user + role, key + study, prefixes, samples, my annotation, its patterns +
    # ranks
    assert few == many == 7


def test_opening_a_key_the_first_time_costs_a_fixed_number_of_queries(alice):
    _, (small,) = assigned_batch([alice], n_prefixes=5)
    _, (large,) = assigned_batch([alice], n_prefixes=25)
    client = client_for(alice)
    few = _queries(client, "get", f"/api/keys/{small.pk}/")
    many = _queries(client, "get", f"/api/keys/{large.pk}/")
    # session, user (with its role), the key with its study, its prefixes, its samples, my
    # annotation (none yet): opening a key writes nothing
    assert len(few) == len(many) == 6
    assert not any(sql.startswith(("INSERT", "UPDATE")) for sql in many), many


def test_saving_a_pattern_costs_the_same_queries_for_few_or_many_patterns(alice):
    client, small, small_version = _annotated_key(alice, n_prefixes=5, n_patterns=1)
    _, large, large_version = _annotated_key(alice, n_prefixes=25, n_patterns=8)
    body = {"description": "d", "kind": "semantic", "prefix_ranks": [1, 3, 5]}
    few = _queries(
        client, "post", f"/api/keys/{small.pk}/patterns/", {**body, "version": small_version}
    )
    body["prefix_ranks"] = list(range(1, 26))
    many = _queries(
        client, "post", f"/api/keys/{large.pk}/patterns/", {**body, "version": large_version}
    )
    # session, user + role, key, my annotation, the key's ranks; then in one transaction:
    # lock, patterns + ranks (the audit's before), the pattern, its links in one INSERT,
    # the version, the audit record. The answer is built from what the write holds.
    assert len(few) == len(many) == 13
    assert sum(sql.startswith("INSERT") for sql in many) == 3


def test_listing_keys_costs_the_same_queries_for_3_or_30_keys(alice):
    small, keys = assigned_batch([alice], n_keys=3, n_prefixes=3)
    large, more = assigned_batch([alice], n_keys=30, n_prefixes=3)
    for key in keys[:2] + more[:20]:
        AnnotationFactory(key=key, annotator=alice)
    client = client_for(alice)
    few = _count(client, f"/api/assignments/{small.assignments.get().pk}/keys/")
    many = _count(client, f"/api/assignments/{large.assignments.get().pk}/keys/")
    assert few == many == 5  # session, user + role, the assignment, its count, its keys
    assert _count(client, "/api/next-key/") == 3


# --- the answers are what the serializers (the schema) say ---------------------------------
# The hot paths build their JSON from plain data instead of running the DRF serializers
# (annotation_state_data, key_detail_for_annotator); the serializers stay the schema.


def _serialized(serializer) -> object:
    return json.loads(JSONRenderer().render(serializer.data))


def test_the_key_screen_and_every_write_answer_what_the_serializers_make(alice, key):
    key.value_top_tokens = [["Paris", 0.5], [" France", 0.25]]
    key.histogram = {"edges": [0.0, 1.0, 2.0], "counts": [7, 3]}
    key.max_coefficient, key.density = 2.0, 0.25
    key.save()
    key.prefixes.filter(rank=1).update(tokens=["The", " cat"], token_coefficients=[0.5, -1.5])
    samples = key_examples(key)
    key.study.show_value_tokens = True
    key.study.show_scores = True
    key.study.save()
    client = client_for(alice)
    version = _open(client, key)["annotation"]["version"]
    answers = [_pattern(client, key, version, client_id=str(uuid.uuid4())).json()]
    answers.append(
        _pattern(
            client,
            key,
            answers[-1]["version"],
            ranks=[3, 4, 9],
            rule={"type": "token", "value": "t3"},
        ).json()
    )
    Pattern.objects.filter(annotation__key=key).update(scores={"detection": 0.75, "embedding": 0.5})
    answers.append(
        client.post(
            f"/api/keys/{key.pk}/submit/", {"version": answers[-1]["version"]}, format="json"
        ).json()
    )
    annotation = Annotation.objects.get(key=key, annotator=alice)
    assert annotation.submitted_at is not None
    state = AnnotationStateSerializer(annotation_view(annotation=annotation))
    assert answers[-1] == _serialized(state)
    assert len(answers[-1]["patterns"]) == 2
    assert answers[-1]["patterns"][1]["rule"] == {"type": "token", "value": "t3"}
    assert answers[-1]["patterns"][1]["scores"]["detection"] == 0.75

    detail = KeyDetailApi.OutputSerializer(
        {
            "id": key.pk,
            "study_id": key.study_id,
            "study_name": key.study.name,
            "is_causal": key.study.is_causal,
            "layer": key.layer,
            "index": key.index,
            "value_top_tokens": [
                {"token": "Paris", "probability": 0.5},
                {"token": " France", "probability": 0.25},
            ],
            "prefixes": key.prefixes.order_by("rank"),
            "max_coefficient": 2.0,
            "density": 0.25,
            "histogram": {"edges": [0.0, 1.0, 2.0], "counts": [7, 3]},
            "samples": [*samples["band"], *samples["random"]],
            "annotation": annotation_view(annotation=annotation),
            "study": {
                "id": key.study_id,
                "guideline_version": None,
                "guidelines_acknowledged": False,
                "suggestions_enabled": True,
                "show_scores": True,
            },
            "assignment_id": key.batches.get().assignments.get(annotator=alice).pk,
        }
    )
    assert _open(client, key) == _serialized(detail)


def test_a_write_answers_the_state_that_a_fresh_read_gives(alice, key):
    client = client_for(alice)
    version = _open(client, key)["annotation"]["version"]
    created = _pattern(client, key, version, ranks=[5, 2, 9], client_id=str(uuid.uuid4()))
    assert created.status_code == 201
    assert created.json() == client.get(f"/api/keys/{key.pk}/annotation/").json()
    assert created.json()["patterns"][0]["prefix_ranks"] == [2, 5, 9]


def test_an_annotation_takes_at_most_as_many_patterns_as_an_import_does(alice, key):
    # The import refuses an annotation of more than MAX_PATTERNS_PER_ANNOTATION patterns:
    # the API refuses to make one, so that every export imports again.
    client = client_for(alice)
    version = _pattern(client, key, _open(client, key)["annotation"]["version"]).json()["version"]
    annotation = Annotation.objects.get(key=key, annotator=alice)
    Pattern.objects.bulk_create(
        Pattern(annotation=annotation, description=f"p{n}", kind="shallow", order=n)
        for n in range(1, MAX_PATTERNS_PER_ANNOTATION - 1)
    )
    response = _pattern(client, key, version)
    assert response.status_code == 201, response.content  # the last one it takes
    response = _pattern(client, key, response.json()["version"])
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "too_many_patterns"
    assert Pattern.objects.filter(annotation=annotation).count() == MAX_PATTERNS_PER_ANNOTATION
