"""The curator's review API (docs/annotation.md, "Review and gold"): the queue, a key
under review, the gold writes.

alice and bob annotate; cora is a curator (the ``curator`` group, not staff); carol is the
admin, a curator too.
"""

from __future__ import annotations

import uuid

import pytest

from annotate.limits import MAX_PATTERNS_PER_ANNOTATION
from annotate.models import Annotation, GoldAnnotation, GoldPattern, KeyFlag, Study
from tests.conftest import client_for
from tests.factories import AssignmentFactory, UserFactory, annotate_key, assigned_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def curator(cora):
    return client_for(cora)


def _queue(client, study, **params):
    response = client.get(f"/api/review/studies/{study.pk}/queue/", params)
    assert response.status_code == 200, response.content
    return response.json()


# --- the queue --------------------------------------------------------------------------


def test_a_key_is_ready_when_every_assigned_annotator_has_submitted(alice, bob, curator):
    batch, (both, only_alice, drafted, _nobody) = assigned_batch([alice, bob], n_keys=4)
    annotate_key(both, alice, [("shallow", [1, 2, 3])])
    annotate_key(both, bob, [("shallow", [1, 2, 3])])
    annotate_key(only_alice, alice)  # bob, assigned too, has not submitted
    annotate_key(drafted, alice)
    annotate_key(drafted, bob, status="draft")
    queue = _queue(curator, batch.study)
    assert [item["key_id"] for item in queue["results"]] == [both.pk]
    assert queue["count"] == 1
    assert queue["results"][0]["annotators"] == ["alice", "bob"]


def test_a_check_annotation_neither_makes_a_key_ready_nor_counts(alice, bob, curator):
    batch, (key,) = assigned_batch([alice])
    check = annotate_key(key, bob, [("semantic", [1, 2, 3])])
    Annotation.objects.filter(pk=check.pk).update(is_check=True)
    assert _queue(curator, batch.study)["results"] == []
    annotate_key(key, alice)
    (item,) = _queue(curator, batch.study)["results"]
    assert item["annotators"] == ["alice"]
    assert item["disagreement"] == 0.0
    assert item["alpha"] is None


def test_the_queue_is_ordered_by_disagreement_then_layer_and_index(alice, bob, curator):
    batch, keys = assigned_batch([alice, bob], n_keys=3, n_prefixes=10)
    agree, half, some = keys
    for key in keys:
        annotate_key(key, alice, [("shallow", [1, 2, 3, 4, 5])])
    annotate_key(agree, bob, [("shallow", [1, 2, 3, 4, 5])])
    annotate_key(half, bob, [("semantic", [1, 2, 3, 4, 5])])  # ranks 1-5 differ: 5/10
    annotate_key(some, bob, [("shallow", [1, 2, 3, 4, 5, 6])])  # rank 6 differs: 1/10
    results = _queue(curator, batch.study)["results"]
    assert [item["key_id"] for item in results] == [half.pk, some.pk, agree.pk]
    assert [item["disagreement"] for item in results] == [0.5, 0.1, 0.0]
    # Perfect agreement with variation: α = 1; half the units opposite: α < 0.5.
    assert results[2]["alpha"] == pytest.approx(1.0)
    assert results[0]["alpha"] < 0.5


def test_ties_are_broken_by_layer_then_index(alice, curator):
    batch, keys = assigned_batch([alice], n_keys=3)
    keys[0].layer, keys[0].index = 2, 0
    keys[1].layer, keys[1].index = 1, 7
    keys[2].layer, keys[2].index = 1, 3
    for key in keys:
        key.save()
        annotate_key(key, alice)
    results = _queue(curator, batch.study)["results"]
    assert [item["key_id"] for item in results] == [keys[2].pk, keys[1].pk, keys[0].pk]


def test_the_queue_filters_by_layer_batch_and_status(alice, curator, cora):
    batch, (k1, k2) = assigned_batch([alice], n_keys=2)
    k2.layer = 2
    k2.save()
    other, (k3,) = assigned_batch([alice], study=batch.study)
    for key in (k1, k2, k3):
        annotate_key(key, alice)
    GoldAnnotation.objects.create(key=k1, status="submitted", curator=cora)
    GoldAnnotation.objects.create(key=k3, status="draft", curator=cora)
    study = batch.study

    def ids(**params):
        return {item["key_id"] for item in _queue(curator, study, **params)["results"]}

    assert ids() == {k2.pk, k3.pk}
    assert ids(status="curated") == {k1.pk}
    assert ids(status="all") == {k1.pk, k2.pk, k3.pk}
    assert ids(status="all", layer=2) == {k2.pk}
    assert ids(status="all", batch=other.pk) == {k3.pk}
    queue = _queue(curator, study, status="all")
    by_id = {item["key_id"]: item for item in queue["results"]}
    assert by_id[k3.pk]["gold_status"] == "draft"
    assert by_id[k1.pk]["gold_status"] == "submitted"
    assert by_id[k2.pk]["gold_status"] is None
    assert queue["layers"] == [1, 2]
    assert {b["id"] for b in queue["batches"]} == {batch.pk, other.pk}


@pytest.mark.parametrize(
    "params, field",
    [
        ({"layer": 9}, "layer"),
        ({"layer": "x"}, "layer"),
        ({"batch": 999999}, "batch"),
        ({"status": "done"}, "status"),
        ({"limit": 0}, "limit"),
        ({"offset": -1}, "offset"),
    ],
)
def test_bad_filters_are_a_400_with_the_field(alice, curator, params, field):
    batch, _ = assigned_batch([alice])
    response = curator.get(f"/api/review/studies/{batch.study.pk}/queue/", params)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert field in response.json()["fields"]


def test_a_batch_of_another_study_is_a_400(alice, curator):
    batch, _ = assigned_batch([alice])
    elsewhere, _ = assigned_batch([alice])
    response = curator.get(f"/api/review/studies/{batch.study.pk}/queue/", {"batch": elsewhere.pk})
    assert response.status_code == 400
    assert "batch" in response.json()["fields"]


def test_the_queue_shows_flags_and_pages(alice, curator):
    batch, keys = assigned_batch([alice], n_keys=5)
    for key in keys:
        annotate_key(key, alice)
    KeyFlag.objects.create(key=keys[0], annotator=alice, reason="unclear", note="hm")
    first = _queue(curator, batch.study, limit=2)
    second = _queue(curator, batch.study, limit=2, offset=2)
    assert first["count"] == second["count"] == 5
    assert len(first["results"]) == len(second["results"]) == 2
    assert not {i["key_id"] for i in first["results"]} & {i["key_id"] for i in second["results"]}
    flagged = _queue(curator, batch.study)["results"][0]
    assert flagged["flags"] == [{"annotator": "alice", "reason": "unclear", "note": "hm"}]


def test_the_queue_costs_the_same_queries_whatever_its_size(
    alice, bob, curator, django_assert_max_num_queries
):
    batch, keys = assigned_batch([alice, bob], n_keys=2)
    for key in keys:
        annotate_key(key, alice, [("shallow", [1, 2, 3])])
        annotate_key(key, bob, [("semantic", [2, 3, 4])])
        KeyFlag.objects.create(key=key, annotator=alice, reason="other")
    url = f"/api/review/studies/{batch.study.pk}/queue/"
    with django_assert_max_num_queries(12) as small:
        assert len(curator.get(url).json()["results"]) == 2
    _many, more = assigned_batch([alice, bob], n_keys=30, study=batch.study)
    for key in more:
        annotate_key(key, alice, [("shallow", [1, 2, 3])])
        annotate_key(key, bob, [("shallow+semantic", [1, 5, 6])])
        KeyFlag.objects.create(key=key, annotator=bob, reason="unclear")
    with django_assert_max_num_queries(len(small.captured_queries)):
        assert len(curator.get(url).json()["results"]) == 32


def test_archived_studies_are_reviewed_too(alice, curator):
    batch, (key,) = assigned_batch([alice])
    annotate_key(key, alice)
    Study.objects.filter(pk=batch.study.pk).update(archived=True)
    assert [i["key_id"] for i in _queue(curator, batch.study)["results"]] == [key.pk]
    studies = curator.get("/api/review/studies/").json()
    (row,) = [s for s in studies if s["id"] == batch.study.pk]
    assert row["archived"] is True


def test_the_study_list_counts_keys_ready_curated_and_flagged(alice, curator, cora):
    batch, keys = assigned_batch([alice], n_keys=4)
    for key in keys[:3]:
        annotate_key(key, alice)
    GoldAnnotation.objects.create(key=keys[0], status="submitted")
    KeyFlag.objects.create(key=keys[3], annotator=alice, reason="offensive")
    Study.objects.filter(pk=batch.study.pk).update(check_rate=0.25)
    (row,) = curator.get("/api/review/studies/").json()
    assert row == {
        "id": batch.study.pk,
        "name": batch.study.name,
        "archived": False,
        "keys": 4,
        "ready": 2,
        "curated": 1,
        "flagged": 1,
        "check_rate": 0.25,
    }


# --- flagged keys -----------------------------------------------------------------------


def _flag(client, key, reason="unclear", note=""):
    response = client.put(
        f"/api/keys/{key.pk}/flag/", {"reason": reason, "note": note}, format="json"
    )
    assert response.status_code == 200, response.content
    return response


def test_a_key_is_in_the_flagged_filter_as_soon_as_it_is_flagged(alice, bob, curator):
    """alice flags a key that neither she nor bob has submitted: it is not ready for review,
    but the curators see it at once, with its flag."""
    batch, (flagged, quiet) = assigned_batch([alice, bob], n_keys=2)
    annotate_key(quiet, alice)
    annotate_key(quiet, bob)
    _flag(client_for(alice), flagged, reason="tokenization", note="a word split in two")
    assert [i["key_id"] for i in _queue(curator, batch.study)["results"]] == [quiet.pk]
    queue = _queue(curator, batch.study, status="flagged")
    assert queue["count"] == 1
    (item,) = queue["results"]
    assert item["key_id"] == flagged.pk
    assert item["ready"] is False
    assert item["annotators"] == []
    assert item["flags"] == [
        {"annotator": "alice", "reason": "tokenization", "note": "a word split in two"}
    ]
    # "All" holds every key of the other filters.
    everything = _queue(curator, batch.study, status="all")["results"]
    assert {i["key_id"]: i["ready"] for i in everything} == {flagged.pk: False, quiet.pk: True}


def test_the_flagged_filter_keeps_a_flagged_key_whatever_its_work_or_gold(
    alice, bob, curator, cora
):
    batch, keys = assigned_batch([alice, bob], n_keys=5)
    ready, drafted, curated, untouched, unflagged = keys
    for key in (ready, curated, unflagged):
        annotate_key(key, alice)
        annotate_key(key, bob)
    annotate_key(drafted, alice, [("shallow", [1, 2, 3])], status="draft")
    GoldAnnotation.objects.create(key=curated, status="submitted", curator=cora)
    for key in (ready, drafted, curated, untouched):
        KeyFlag.objects.create(key=key, annotator=bob, reason="other")
    study = batch.study

    def ids(**params):
        return {item["key_id"] for item in _queue(curator, study, **params)["results"]}

    assert ids(status="flagged") == {ready.pk, drafted.pk, curated.pk, untouched.pk}
    assert ids(status="flagged", layer=ready.layer, batch=batch.pk) == ids(status="flagged")
    assert ids(status="unreviewed") == {ready.pk, unflagged.pk}
    assert ids(status="all") == set(map(lambda k: k.pk, keys))


def test_the_study_lists_flagged_count_is_the_flagged_filters(alice, bob, curator, cora):
    batch, keys = assigned_batch([alice, bob], n_keys=6)
    annotate_key(keys[0], alice)
    annotate_key(keys[0], bob)
    annotate_key(keys[1], alice, status="draft")
    GoldAnnotation.objects.create(key=keys[2], status="submitted", curator=cora)
    GoldAnnotation.objects.create(key=keys[3], status="draft", curator=cora)
    for key in keys[:5]:
        KeyFlag.objects.create(key=key, annotator=alice, reason="unclear")
    KeyFlag.objects.create(key=keys[0], annotator=bob, reason="other")  # two flags, one key
    (row,) = [s for s in curator.get("/api/review/studies/").json() if s["id"] == batch.study.pk]
    assert row["flagged"] == 5
    assert _queue(curator, batch.study, status="flagged")["count"] == row["flagged"]


def test_a_key_not_every_annotator_has_submitted_shows_its_drafts_and_who_is_awaited(
    alice, bob, curator
):
    """Curators see drafts (the screen marks them); an annotator who has not started has no
    column, and is named among those the key waits for."""
    _, (key,) = assigned_batch([alice, bob], n_prefixes=5)
    annotate_key(key, alice, [("shallow", [1, 2, 3])], status="draft")
    KeyFlag.objects.create(key=key, annotator=alice, reason="unclear")
    data = curator.get(f"/api/review/keys/{key.pk}/").json()
    assert [(a["annotator"], a["status"]) for a in data["annotations"]] == [("alice", "draft")]
    assert data["annotations"][0]["labels"] == ["shallow"] * 3 + ["not-covered"] * 2
    assert data["awaiting"] == ["alice", "bob"]
    annotate_key(key, bob)
    assert curator.get(f"/api/review/keys/{key.pk}/").json()["awaiting"] == ["alice"]


def test_a_ready_key_awaits_nobody(alice, bob, curator):
    _, (key,) = assigned_batch([alice, bob])
    annotate_key(key, alice)
    annotate_key(key, bob)
    assert curator.get(f"/api/review/keys/{key.pk}/").json()["awaiting"] == []


# --- a key under review -----------------------------------------------------------------


def test_the_key_shows_every_annotators_work_with_labels(alice, bob, curator):
    batch, (key,) = assigned_batch([alice, bob], n_prefixes=5)
    annotate_key(key, bob, [("semantic", [1, 2, 3])])
    annotate_key(key, alice, [("shallow", [1, 2, 3]), ("semantic", [3, 4, 5])])
    KeyFlag.objects.create(key=key, annotator=bob, reason="tokenization", note="odd")
    data = curator.get(f"/api/review/keys/{key.pk}/").json()
    assert data["key"]["study"] == {
        "id": batch.study.pk,
        "name": batch.study.name,
        "archived": False,
        "is_causal": True,
    }
    assert [p["rank"] for p in data["prefixes"]] == [1, 2, 3, 4, 5]
    assert [a["annotator"] for a in data["annotations"]] == ["alice", "bob"]
    assert data["annotations"][0]["labels"] == [
        "shallow",
        "shallow",
        "shallow+semantic",
        "semantic",
        "semantic",
    ]
    assert data["annotations"][1]["labels"] == ["semantic"] * 3 + ["not-covered"] * 2
    assert data["annotations"][0]["patterns"][0]["prefix_ranks"] == [1, 2, 3]
    assert data["gold"] is None
    assert data["flags"][0]["reason"] == "tokenization"
    assert data["neighbours"] == {"previous_key_id": None, "next_key_id": None}


def test_neighbours_follow_the_unreviewed_queue(alice, bob, curator):
    _batch, keys = assigned_batch([alice, bob], n_keys=3, n_prefixes=10)
    a, b, c = keys
    for key in keys:
        annotate_key(key, alice, [("shallow", [1, 2, 3])])
    annotate_key(a, bob, [("semantic", [1, 2, 3])])  # most disagreement
    annotate_key(b, bob, [("shallow", [1, 2, 3, 4])])
    annotate_key(c, bob, [("shallow", [1, 2, 3])])
    neighbours = curator.get(f"/api/review/keys/{b.pk}/").json()["neighbours"]
    assert neighbours == {"previous_key_id": a.pk, "next_key_id": c.pk}


def test_a_key_costs_the_same_queries_whatever_its_work(
    alice, bob, curator, django_assert_max_num_queries
):
    _, (key,) = assigned_batch([alice])
    annotate_key(key, alice, [("shallow", [1, 2, 3])])
    url = f"/api/review/keys/{key.pk}/"
    with django_assert_max_num_queries(20) as few:
        assert curator.get(url).status_code == 200
    n_few = len(few)  # now: each request below resets the connection's query log
    for n in range(4):
        user = UserFactory(username=f"extra{n}")
        AssignmentFactory(batch=key.batches.get(), annotator=user, keys=[key])
        annotate_key(key, user, [("semantic", [1, 2, 3]), ("shallow", [4, 5, 6])])
        KeyFlag.objects.create(key=key, annotator=user, reason="other")
    source = key.annotations.first().patterns.first()
    for n in range(3):
        _add(curator, key, n, source_pattern_id=source.pk)
    with django_assert_max_num_queries(n_few + 2):  # + the gold and its patterns
        data = curator.get(url).json()
    assert len(data["annotations"]) == 5
    assert len(data["gold"]["patterns"]) == 3


def test_a_key_of_no_study_is_404(curator):
    response = curator.get("/api/review/keys/999999/")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


# --- gold writes ------------------------------------------------------------------------


def _key_for_gold(alice, bob):
    _, (key,) = assigned_batch([alice, bob], n_prefixes=5)
    source = annotate_key(key, alice, [("semantic", [1, 2, 3])])
    return key, source.patterns.get()


def _add(client, key, version, **extra):
    body = {
        "version": version,
        "client_id": str(uuid.uuid4()),
        "description": "numbers",
        "kind": "shallow",
        "prefix_ranks": [1, 2, 3],
        **extra,
    }
    return client.post(f"/api/review/keys/{key.pk}/gold/patterns/", body, format="json")


def test_the_first_write_makes_the_gold_at_version_one(alice, bob, curator, cora):
    key, _ = _key_for_gold(alice, bob)
    response = _add(curator, key, 0)
    assert response.status_code == 201, response.content
    gold = response.json()
    assert gold["version"] == 1
    assert gold["status"] == "draft"
    assert gold["curator"] == "cora"
    assert gold["patterns"][0]["source"] == "written"
    assert gold["patterns"][0]["source_annotator"] is None
    assert gold["labels"] == ["shallow"] * 3 + ["not-covered"] * 2
    assert GoldAnnotation.objects.get(key=key).curator == cora
    detail = curator.get(f"/api/review/keys/{key.pk}/").json()
    assert detail["gold"] == gold


def test_adoption_remembers_its_source_and_keeps_it_after_an_edit(alice, bob, curator):
    key, source = _key_for_gold(alice, bob)
    gold = _add(
        curator, key, 0, source_pattern_id=source.pk, description="edited", kind="semantic"
    ).json()
    (pattern,) = gold["patterns"]
    assert pattern["source"] == "adopted"
    assert pattern["source_annotator"] == "alice"
    assert pattern["source_pattern_id"] == source.pk
    assert pattern["description"] == "edited"
    response = curator.patch(
        f"/api/review/keys/{key.pk}/gold/patterns/{pattern['id']}/",
        {"version": gold["version"], "description": "edited again", "prefix_ranks": [2, 3, 4]},
        format="json",
    )
    assert response.status_code == 200, response.content
    (after,) = response.json()["patterns"]
    assert after["description"] == "edited again"
    assert after["prefix_ranks"] == [2, 3, 4]
    assert (after["source"], after["source_annotator"], after["source_pattern_id"]) == (
        "adopted",
        "alice",
        source.pk,
    )
    assert response.json()["version"] == gold["version"] + 1


def test_adopting_a_pattern_of_another_key_or_a_check_is_a_400(alice, bob, curator):
    key, _ = _key_for_gold(alice, bob)
    _other, foreign = _key_for_gold(alice, bob)
    response = _add(curator, key, 0, source_pattern_id=foreign.pk)
    assert response.status_code == 400
    assert "source_pattern_id" in response.json()["fields"]
    check = annotate_key(key, UserFactory(username="dora"), [("shallow", [1, 2, 3])])
    Annotation.objects.filter(pk=check.pk).update(is_check=True)
    response = _add(curator, key, 0, source_pattern_id=check.patterns.get().pk)
    assert response.status_code == 400
    assert not GoldAnnotation.objects.filter(key=key).exists()


@pytest.mark.parametrize(
    "ranks, code",
    [
        ([1, 2], "pattern_needs_three_prefixes"),
        ([1, 1, 2], "pattern_duplicate_prefixes"),
    ],
)
def test_the_three_prefix_rule_holds_for_gold(alice, bob, curator, ranks, code):
    key, _ = _key_for_gold(alice, bob)
    response = _add(curator, key, 0, prefix_ranks=ranks)
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert not GoldAnnotation.objects.filter(key=key).exists()


def test_a_rank_the_key_lacks_is_a_400(alice, bob, curator):
    key, _ = _key_for_gold(alice, bob)
    response = _add(curator, key, 0, prefix_ranks=[1, 2, 9])
    assert response.status_code == 400
    assert "prefix_ranks" in response.json()["fields"]


def test_a_stale_version_is_a_409_with_the_current_gold(alice, bob, curator):
    key, _ = _key_for_gold(alice, bob)
    gold = _add(curator, key, 0).json()
    response = curator.patch(
        f"/api/review/keys/{key.pk}/gold/", {"version": 0, "note": "late"}, format="json"
    )
    assert response.status_code == 409
    assert response.json()["code"] == "stale_version"
    assert response.json()["current"] == gold
    response = curator.patch(
        f"/api/review/keys/{key.pk}/gold/", {"version": 7, "note": "late"}, format="json"
    )
    assert response.status_code == 409
    _, (fresh,) = assigned_batch([alice])
    response = curator.patch(
        f"/api/review/keys/{fresh.pk}/gold/", {"version": 3, "note": "x"}, format="json"
    )
    assert response.status_code == 409
    assert response.json()["current"] is None


def test_a_retried_create_returns_the_same_pattern(alice, bob, curator):
    key, _ = _key_for_gold(alice, bob)
    client_id = str(uuid.uuid4())
    first = _add(curator, key, 0, client_id=client_id)
    again = _add(curator, key, 0, client_id=client_id)
    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json() == first.json()
    assert GoldPattern.objects.filter(gold__key=key).count() == 1


def test_a_gold_pattern_is_read_with_its_client_id(alice, bob, curator):
    """The SPA matches a just-added pattern to its pending create by ``client_id``."""
    key, _ = _key_for_gold(alice, bob)
    client_id = str(uuid.uuid4())
    gold = _add(curator, key, 0, client_id=client_id).json()
    assert gold["patterns"][0]["client_id"] == client_id
    detail = curator.get(f"/api/review/keys/{key.pk}/").json()
    assert detail["gold"]["patterns"][0]["client_id"] == client_id


def test_submit_reopen_note_check_and_delete(alice, bob, curator, carol):
    key, _ = _key_for_gold(alice, bob)
    gold = _add(curator, key, 0).json()
    url = f"/api/review/keys/{key.pk}/gold/"
    gold = curator.patch(
        url, {"version": gold["version"], "note": "fine", "is_check": True}, format="json"
    ).json()
    assert (gold["note"], gold["is_check"], gold["version"]) == ("fine", True, 2)
    submitted = curator.post(url + "submit/", {"version": 2}, format="json").json()
    assert submitted["status"] == "submitted"
    # A submitted gold takes no write but its reopening.
    response = curator.patch(url, {"version": 3, "note": "more"}, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "gold_submitted"
    assert response.json()["current"]["status"] == "submitted"
    # A retried submit is a no-op.
    assert curator.post(url + "submit/", {"version": 2}, format="json").json() == submitted
    # An admin is a curator too, and is recorded as the writer.
    reopened = client_for(carol).post(url + "reopen/", {"version": 3}, format="json").json()
    assert (reopened["status"], reopened["curator"], reopened["version"]) == ("draft", "carol", 4)
    pattern_id = reopened["patterns"][0]["id"]
    response = curator.delete(url + f"patterns/{pattern_id}/?version=4")
    assert response.status_code == 200
    assert response.json()["patterns"] == []
    assert response.json()["labels"] == ["not-covered"] * 5


def test_submitting_with_no_pattern_is_allowed(alice, bob, curator):
    key, _ = _key_for_gold(alice, bob)
    response = curator.post(
        f"/api/review/keys/{key.pk}/gold/submit/", {"version": 0}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["status"] == "submitted"
    assert response.json()["version"] == 1
    queue = _queue(curator, key.study, status="curated")
    assert [item["key_id"] for item in queue["results"]] == [key.pk]


def test_a_gold_pattern_of_another_key_is_404(alice, bob, curator):
    key, _ = _key_for_gold(alice, bob)
    other, _ = _key_for_gold(alice, bob)
    pattern_id = _add(curator, other, 0).json()["patterns"][0]["id"]
    response = curator.patch(
        f"/api/review/keys/{key.pk}/gold/patterns/{pattern_id}/",
        {"version": 1, "description": "x"},
        format="json",
    )
    assert response.status_code == 404


# --- the admin's check rate -------------------------------------------------------------


@pytest.mark.parametrize("rate", [0, 0.1, 1])
def test_the_admin_sets_the_check_rate(carol, rate):
    study = assigned_batch([])[0].study
    response = client_for(carol).patch(
        f"/api/admin/studies/{study.pk}/", {"check_rate": rate}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["check_rate"] == rate
    study.refresh_from_db()
    assert study.check_rate == rate


def test_the_study_detail_counts_its_submitted_check_keys(carol):
    batch, keys = assigned_batch([], n_keys=4)
    study = batch.study
    GoldAnnotation.objects.create(key=keys[0], status="submitted", is_check=True)
    GoldAnnotation.objects.create(key=keys[1], status="submitted", is_check=True)
    GoldAnnotation.objects.create(key=keys[2], status="draft", is_check=True)  # not served
    GoldAnnotation.objects.create(key=keys[3], status="submitted")  # gold, not a check
    (elsewhere,) = assigned_batch([])[1]  # another study's check key is not counted
    GoldAnnotation.objects.create(key=elsewhere, status="submitted", is_check=True)
    client = client_for(carol)
    assert client.get(f"/api/admin/studies/{study.pk}/").json()["check_keys"] == 2
    response = client.patch(f"/api/admin/studies/{study.pk}/", {"check_rate": 0.5}, format="json")
    assert response.json()["check_keys"] == 2


@pytest.mark.parametrize("rate", [-0.1, 1.5, "x"])
def test_a_check_rate_outside_0_1_is_a_400(carol, rate):
    study = assigned_batch([])[0].study
    response = client_for(carol).patch(
        f"/api/admin/studies/{study.pk}/", {"check_rate": rate}, format="json"
    )
    assert response.status_code == 400
    assert "check_rate" in response.json()["fields"]


def test_an_edit_keeps_the_three_prefix_rule_and_a_stale_delete_is_a_409(alice, bob, curator):
    key, _ = _key_for_gold(alice, bob)
    gold = _add(curator, key, 0).json()
    url = f"/api/review/keys/{key.pk}/gold/patterns/{gold['patterns'][0]['id']}/"
    response = curator.patch(url, {"version": 1, "prefix_ranks": [1, 2]}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "pattern_needs_three_prefixes"
    response = curator.delete(url + "?version=0")
    assert response.status_code == 409
    assert response.json()["current"]["version"] == 1
    assert GoldPattern.objects.get(gold__key=key).prefixes.count() == 3
    assert GoldAnnotation.objects.get(key=key).version == 1


def test_a_gold_takes_at_most_as_many_patterns_as_an_import_does(alice, bob, curator):
    key, _ = _key_for_gold(alice, bob)
    version = _add(curator, key, 0).json()["version"]
    gold = GoldAnnotation.objects.get(key=key)
    GoldPattern.objects.bulk_create(
        GoldPattern(gold=gold, description=f"p{n}", kind="shallow", order=n + 1)
        for n in range(1, MAX_PATTERNS_PER_ANNOTATION - 1)
    )
    response = _add(curator, key, version)
    assert response.status_code == 201, response.content  # the last one it takes
    response = _add(curator, key, response.json()["version"])
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "too_many_patterns"
    assert gold.patterns.count() == MAX_PATTERNS_PER_ANNOTATION
