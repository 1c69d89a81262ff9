"""Check keys: drawn when keys are given to an annotator, and from then on keys of their
assignment that nothing an annotator reads tells apart (``annotate.services.check_keys``)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentKey,
    CheckServing,
    GoldAnnotation,
    GoldPattern,
    Key,
)
from annotate.permissions import ANNOTATOR_GROUP
from annotate.services.batches import (
    annotator_deactivate_and_reassign,
    assignment_create,
    assignment_create_with_overlap,
    assignment_extend,
)
from reports.exports import export_jsonl
from reports.imports.load import study_import
from tests.conftest import annotator_user, client_for
from tests.factories import (
    AnnotationFactory,
    BatchFactory,
    StudyFactory,
    annotate_key,
    key_with_prefixes,
)

pytestmark = pytest.mark.django_db


def _gold_check(key, *, status=GoldAnnotation.Status.SUBMITTED, is_check=True, curator=None):
    return GoldAnnotation.objects.create(
        key=key, status=status, is_check=is_check, curator=curator, note="gold note"
    )


def _study(rate: float = 1.0, **kwargs):
    return StudyFactory(check_rate=rate, **kwargs)


def _keys(study, positions):
    return [
        key_with_prefixes(25, study=study, layer=layer, index=index) for layer, index in positions
    ]


def _checks_of(user) -> list[int]:
    """The ids of the check keys held by ``user``, in (layer, index) order."""
    return list(
        AssignmentKey.objects.filter(assignment__annotator=user, is_check=True)
        .order_by("key__layer", "key__index")
        .values_list("key_id", flat=True)
    )


# --- indistinguishable ------------------------------------------------------------------
# Everything an annotator can read, walked in two worlds that differ only in whether key K
# of their assignment is a check key: ids and timestamps normalised, nothing else.

_ID_FIELDS = {"key_id": "key", "assignment_id": "assignment", "study_id": "study"}
_NESTED = {
    "annotation": "annotation",
    "current": "annotation",
    "patterns": "pattern",
    "study": "study",
    "results": "key",
}
_TIMES = {"created_at", "updated_at", "submitted_at"}


class _Normaliser:
    """Replaces each id by its kind and the order it was first seen in, and each time by
    a placeholder: two worlds that answer alike then answer equal."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, Any], str] = {}

    def id(self, kind: str, value: Any) -> Any:
        if value is None:
            return None
        n = sum(1 for seen_kind, _ in self.seen if seen_kind == kind)
        return self.seen.setdefault((kind, value), f"{kind}#{n}")

    def __call__(self, data: Any, kind: str) -> Any:
        if isinstance(data, list):
            return [self(item, kind) for item in data]
        if not isinstance(data, dict):
            return data
        out = {}
        for name, value in data.items():
            if name == "id":
                out[name] = self.id(kind, value)
            elif name in _ID_FIELDS:
                out[name] = self.id(_ID_FIELDS[name], value)
            elif name in _TIMES:
                out[name] = None if value is None else "<time>"
            else:
                out[name] = self(value, _NESTED.get(name, kind))
        return out


def _walk(client) -> list[Any]:
    """What alice reads, and what her writes answer, as she works through her queue."""
    norm = _Normaliser()
    seen: list[Any] = []

    def get(path: str, kind: str) -> Any:
        response = client.get(path)
        body = response.json() if response.content else None
        seen.append((path.split("/")[2], response.status_code, norm(body, kind)))
        return body

    def send(method: str, path: str, body: dict) -> Any:
        response = getattr(client, method)(path, body, format="json")
        assert response.status_code in (200, 201), response.content
        seen.append((method, response.status_code, norm(response.json(), "annotation")))
        return response.json()

    def read_everything() -> None:
        (assignment,) = get("/api/assignments/", "assignment")
        pages = [(100, 0), (2, 0), (2, 2), (3, 1), (1, 3), (5, 4)]
        keys = []
        for limit, offset in pages:
            page = get(
                f"/api/assignments/{assignment['id']}/keys/?limit={limit}&offset={offset}", "page"
            )
            if (limit, offset) == (100, 0):
                keys = [row["id"] for row in page["results"]]
        get("/api/next-key/", "next")
        get(f"/api/next-key/?assignment={assignment['id']}", "next")
        for key_id in keys:
            get(f"/api/keys/{key_id}/", "key")
            get(f"/api/keys/{key_id}/annotation/", "annotation")

    read_everything()
    done = 0
    while (step := client.get("/api/next-key/")).status_code == 200:
        key_id = step.json()["key_id"]
        version = get(f"/api/keys/{key_id}/", "key")["annotation"]["version"]
        body = {"description": "d", "kind": "shallow", "prefix_ranks": [1, 2, 3]}
        version = send("post", f"/api/keys/{key_id}/patterns/", {**body, "version": version})[
            "version"
        ]
        note = {"note": f"note {done}", "version": version, "active_seconds": 5 + done}
        version = send("put", f"/api/keys/{key_id}/annotation/", note)["version"]
        send("post", f"/api/keys/{key_id}/submit/", {"version": version, "active_seconds": 9})
        done += 1
        read_everything()
    seen.append(("done", done))
    return seen


# Layer 1 holds K between two regular keys of the batch's layers, so that an order by
# anything but (layer, index) would show.
_REGULAR = [(1, 0), (2, 1), (2, 3)]
_K = (1, 5)


def _world(alice, *, k_is_a_check: bool) -> list[Any]:
    """One world, walked and then rolled back: a study that gives a check at every slot,
    a batch of the regular keys (and K, unless K is a check key) assigned to alice."""
    with transaction.atomic():
        study = _study(rate=1.0, name="the study")
        regular = _keys(study, _REGULAR)
        (k,) = _keys(study, [_K])
        _gold_check(k, is_check=k_is_a_check)
        batch = BatchFactory(
            study=study, name="the batch", keys=regular if k_is_a_check else [*regular, k]
        )
        assignment_create_with_overlap(batch=batch, annotators=[alice], overlap=1)
        assert _checks_of(alice) == ([k.pk] if k_is_a_check else [])
        walked = _walk(client_for(alice))
        annotation = Annotation.objects.get(annotator=alice, key=k)
        assert annotation.is_check is k_is_a_check
        transaction.set_rollback(True)
    return walked


def test_an_annotator_reads_the_same_whether_or_not_a_key_of_theirs_is_a_check(alice):
    regular = _world(alice, k_is_a_check=False)
    check = _world(alice, k_is_a_check=True)
    assert regular[-1] == check[-1] == ("done", 4)
    assert len(regular) == len(check)
    for ours, theirs in zip(regular, check, strict=True):
        assert ours == theirs


def test_a_check_key_is_listed_counted_and_served_in_the_assignments_order(alice):
    study = _study()
    regular = _keys(study, _REGULAR)
    (k,) = _keys(study, [_K])
    _gold_check(k)
    batch = BatchFactory(study=study, keys=regular)
    (assignment,) = assignment_create_with_overlap(batch=batch, annotators=[alice], overlap=1)
    client = client_for(alice)
    order = [regular[0].pk, k.pk, regular[1].pk, regular[2].pk]
    page = client.get(f"/api/assignments/{assignment.pk}/keys/").json()
    assert [row["id"] for row in page["results"]] == order
    assert page["count"] == 4
    (listed,) = client.get("/api/assignments/").json()
    assert (listed["keys_total"], listed["keys_submitted"]) == (4, 0)
    served = []
    while (step := client.get("/api/next-key/")).status_code == 200:
        served.append(step.json()["key_id"])
        assert step.json()["assignment_id"] == assignment.pk
        response = client.post(f"/api/keys/{served[-1]}/submit/", {"version": 1}, format="json")
        assert response.status_code == 200, response.content
    assert served == order
    (listed,) = client.get("/api/assignments/").json()
    assert (listed["keys_total"], listed["keys_submitted"]) == (4, 4)
    assert Annotation.objects.get(annotator=alice, key=k).is_check is True
    assert not Annotation.objects.filter(annotator=alice, is_check=True).exclude(key=k).exists()


# --- how many, which ------------------------------------------------------------------


def test_each_regular_key_given_is_a_slot_and_each_drawn_slot_brings_one_check(alice):
    study = _study(rate=1.0)
    regular = _keys(study, [(1, i) for i in range(3)])
    checks = _keys(study, [(1, 10 + i) for i in range(5)])
    for key in checks:
        _gold_check(key)
    assignment_create(batch=BatchFactory(study=study, keys=regular), annotator=alice)
    assert len(_checks_of(alice)) == 3
    servings = CheckServing.objects.filter(annotator=alice)
    assert sorted(servings.values_list("drawn_by_id", flat=True)) == [k.pk for k in regular]
    assert set(servings.values_list("key_id", flat=True)) == set(_checks_of(alice))


def _drawn_at(alice, batch, rate: float) -> set[int]:
    """The check keys alice would be given with the batch at ``rate`` (rolled back)."""
    with transaction.atomic():
        type(batch.study).objects.filter(pk=batch.study_id).update(check_rate=rate)
        assignment_create(batch=batch, annotator=alice)
        drawn = set(_checks_of(alice))
        transaction.set_rollback(True)
    return drawn


def test_the_draw_is_deterministic_and_a_higher_rate_draws_a_superset(alice):
    study = _study()
    regular = _keys(study, [(1, i) for i in range(40)])
    for key in _keys(study, [(1, 100 + i) for i in range(40)]):
        _gold_check(key)
    batch = BatchFactory(study=study, keys=regular)
    low, again, high = (_drawn_at(alice, batch, rate) for rate in (0.2, 0.2, 0.5))
    assert low == again
    assert 0 < len(low) < len(high) < 40
    assert low < high
    assert _drawn_at(alice, batch, 0.0) == set()


def test_annotators_are_given_checks_in_orders_of_their_own(alice, bob):
    study = _study(rate=1.0)
    regular = _keys(study, [(1, i) for i in range(8)])
    checks = _keys(study, [(1, 10 + i) for i in range(30)])
    for key in checks:
        _gold_check(key)
    batch = BatchFactory(study=study, keys=regular)
    assignment_create_with_overlap(batch=batch, annotators=[alice, bob], overlap=2)
    # Eight checks each (a slot per key) drawn from 30: not the same eight. With one slot
    # each this asserted that two draws of one in 30 differ, which failed 1 run in 30.
    assert len(_checks_of(alice)) == len(_checks_of(bob)) == 8
    assert _checks_of(alice) != _checks_of(bob)


def test_checks_come_from_the_layers_of_the_assignments_own_keys(alice):
    study = _study(rate=1.0)
    regular = _keys(study, [(1, 0), (1, 1), (1, 2)])
    in_layer = _keys(study, [(1, 9)])
    elsewhere = _keys(study, [(2, 0), (3, 0), (2, 5)])
    for key in [*in_layer, *elsewhere]:
        _gold_check(key)
    assignment_create(batch=BatchFactory(study=study, keys=regular), annotator=alice)
    # Three slots draw, but only one check key is of layer 1; none from another layer.
    assert _checks_of(alice) == [in_layer[0].pk]


# --- eligibility ------------------------------------------------------------------------


@pytest.fixture
def offered(alice):
    """A study that draws a check at every slot, with two check keys, and a batch of two
    regular keys (not yet assigned)."""
    study = _study(rate=1.0)
    checks = _keys(study, [(1, 10), (1, 11)])
    for key in checks:
        _gold_check(key)
    batch = BatchFactory(study=study, keys=_keys(study, [(1, 0), (1, 1)]))
    return batch, checks


def test_a_curator_or_an_admin_is_never_given_a_check(offered, cora):
    batch, _ = offered
    cora.groups.add(Group.objects.get_or_create(name=ANNOTATOR_GROUP)[0])  # a curator who annotates
    staff = annotator_user("stan")
    staff.is_staff = True
    staff.save()
    assignment_create_with_overlap(batch=batch, annotators=[cora, staff], overlap=2)
    assert not AssignmentKey.objects.filter(is_check=True).exists()
    assert not CheckServing.objects.exists()


def test_a_user_is_never_given_a_check_whose_gold_they_wrote_or_gave_a_pattern_to(offered, alice):
    batch, checks = offered
    GoldAnnotation.objects.filter(key=checks[0]).update(curator=alice)  # a curator once
    gold = GoldAnnotation.objects.get(key=checks[1])
    GoldPattern.objects.create(gold=gold, description="d", kind="shallow", source_annotator=alice)
    assignment_create(batch=batch, annotator=alice)
    assert _checks_of(alice) == []


def test_never_a_check_the_annotator_annotated_holds_or_was_given_before(offered, alice):
    batch, checks = offered
    AnnotationFactory(key=checks[0], annotator=alice, status="draft")
    other = BatchFactory(study=batch.study, keys=[checks[1]])
    assignment_create(batch=other, annotator=alice)  # a regular key of another batch
    assert _checks_of(alice) == []
    assignment_create(batch=batch, annotator=alice)
    assert _checks_of(alice) == []
    # Given once, never again: not even after its row is gone.
    batch_3 = BatchFactory(study=batch.study, keys=_keys(batch.study, [(1, 2)]))
    third = _keys(batch.study, [(1, 12)])[0]
    _gold_check(third)
    assignment_create(batch=batch_3, annotator=alice)
    assert _checks_of(alice) == [third.pk]
    AssignmentKey.objects.filter(key=third).delete()
    batch_4 = BatchFactory(study=batch.study, keys=_keys(batch.study, [(1, 3)]))
    assignment_create(batch=batch_4, annotator=alice)
    assert _checks_of(alice) == []


def test_drafts_and_unmarked_gold_are_never_given(offered, alice):
    batch, checks = offered
    GoldAnnotation.objects.filter(key=checks[0]).update(status=GoldAnnotation.Status.DRAFT)
    GoldAnnotation.objects.filter(key=checks[1]).update(is_check=False)
    assignment_create(batch=batch, annotator=alice)
    assert _checks_of(alice) == []


def test_a_rate_change_or_a_new_check_applies_to_keys_given_from_then_on(offered, alice, bob):
    batch, _ = offered
    type(batch.study).objects.filter(pk=batch.study_id).update(check_rate=0.0)
    assignment_create_with_overlap(batch=batch, annotators=[alice], overlap=1)
    assert _checks_of(alice) == []
    type(batch.study).objects.filter(pk=batch.study_id).update(check_rate=1.0)
    _gold_check(_keys(batch.study, [(1, 12)])[0])
    # Nothing moves for the keys alice holds; bob, given keys now, draws.
    assert _checks_of(alice) == []
    assert client_for(alice).get("/api/assignments/").json()[0]["keys_total"] == 2
    assignment_extend(batch=batch, annotators=[bob], overlap=2)
    assert len(_checks_of(bob)) == 2
    assert _checks_of(alice) == []


def test_an_extension_draws_for_the_keys_it_gives_only(alice, bob, carol):
    study = _study(rate=1.0)
    regular = _keys(study, [(1, i) for i in range(4)])
    for key in _keys(study, [(1, 10 + i) for i in range(8)]):
        _gold_check(key)
    batch = BatchFactory(study=study, keys=regular)
    assignment_create_with_overlap(batch=batch, annotators=[alice, bob], overlap=1)
    before = set(_checks_of(alice))
    first = set(CheckServing.objects.filter(annotator=alice).values_list("drawn_by_id", flat=True))
    assert len(before) == len(first) == 2
    assignment_extend(batch=batch, annotators=[], overlap=2)
    after = set(_checks_of(alice))
    drawn_by = list(
        CheckServing.objects.filter(annotator=alice).values_list("drawn_by_id", flat=True)
    )
    # Two keys more, two checks more; the first two are kept and not drawn again.
    assert before < after and len(after) == 4
    assert sorted(drawn_by) == sorted(k.pk for k in regular)
    assert first < set(drawn_by)
    # The batch's figures count its own keys only: each has exactly 2 annotators.
    progress = client_for(carol).get(f"/api/admin/batches/{batch.pk}/progress/").json()
    assert progress["annotators_per_key_min"] == progress["annotators_per_key_max"] == 2
    assert progress["total"]["keys_assigned"] == 8


def test_a_hand_over_draws_for_the_keys_taken_and_withdraws_unfinished_checks(alice, bob):
    study = _study(rate=1.0)
    regular = _keys(study, [(1, 0), (1, 1), (1, 2)])
    for key in _keys(study, [(1, 10 + i) for i in range(8)]):
        _gold_check(key)
    batch = BatchFactory(study=study, keys=regular)
    assignment_create_with_overlap(batch=batch, annotators=[alice], overlap=1)
    alices = _checks_of(alice)
    assert len(alices) == 3
    AnnotationFactory(key=regular[0], annotator=alice, status="submitted")
    AnnotationFactory(
        key=Key.objects.get(pk=alices[0]), annotator=alice, status="submitted", is_check=True
    )

    result = annotator_deactivate_and_reassign(annotator=alice, reassign_to=bob, actor=None)

    # Two regular keys were unfinished and move; the checks are not handed over.
    assert (result.keys_moved, result.keys_skipped) == (2, 0)
    assert _checks_of(alice) == [alices[0]]  # the submitted one stays, with its work
    assert CheckServing.objects.filter(annotator=alice).count() == 3  # the record stays
    bobs = CheckServing.objects.filter(annotator=bob)
    assert sorted(bobs.values_list("drawn_by_id", flat=True)) == [regular[1].pk, regular[2].pk]
    assert len(_checks_of(bob)) == 2
    assert Assignment.objects.get(annotator=bob).batch == batch


def test_an_annotator_whose_only_unfinished_keys_are_checks_is_deactivated_alone(offered, alice):
    batch, _ = offered
    assignment_create(batch=batch, annotator=alice)
    for key in batch.keys.all():
        AnnotationFactory(key=key, annotator=alice, status="submitted")
    assert len(_checks_of(alice)) == 2
    annotator_deactivate_and_reassign(annotator=alice, reassign_to=None, actor=None)
    alice.refresh_from_db()
    assert alice.is_active is False
    assert _checks_of(alice) == []


# --- what the others see ----------------------------------------------------------------


def test_a_check_is_left_out_of_the_batch_page_the_progress_and_the_annotator_table(
    offered, alice, carol
):
    batch, _ = offered
    assignment_create(batch=batch, annotator=alice)
    assert len(_checks_of(alice)) == 2
    for key_id in _checks_of(alice):
        submitted = client_for(alice).post(
            f"/api/keys/{key_id}/submit/", {"version": 1}, format="json"
        )
        assert submitted.status_code == 200, submitted.content
    admin = client_for(carol)
    progress = admin.get(f"/api/admin/batches/{batch.pk}/progress/").json()
    assert progress["total"] == {"keys_assigned": 2, "submitted": 0, "draft": 0, "new": 2}
    page = admin.get(f"/api/admin/batches/{batch.pk}/keys/").json()
    assert page["count"] == 2
    assert {row["key_id"] for row in page["results"]} == set(
        batch.keys.values_list("id", flat=True)
    )
    (row,) = [a for a in admin.get("/api/admin/annotators/").json() if a["username"] == "alice"]
    assert (row["keys_assigned"], row["keys_submitted"]) == (2, 0)


def test_a_batch_key_held_as_a_check_is_not_shown_as_held_for_the_batch(alice, bob, carol):
    # With an overlap below the number of annotators, a key of the batch that bob does
    # not hold can be reviewed, marked a check, and drawn for bob in the same batch.
    study = _study(rate=1.0)
    keys = _keys(study, [(1, 0), (1, 1)])
    batch = BatchFactory(study=study, keys=keys)
    alices, bobs = assignment_create_with_overlap(batch=batch, annotators=[alice, bob], overlap=1)
    alices_key = AssignmentKey.objects.get(assignment=alices).key
    AssignmentKey.objects.create(assignment=bobs, key=alices_key, is_check=True)
    admin = client_for(carol)
    page = admin.get(f"/api/admin/batches/{batch.pk}/keys/").json()
    holders = {row["key_id"]: [a["username"] for a in row["annotators"]] for row in page["results"]}
    assert holders[alices_key.pk] == ["alice"]
    progress = admin.get(f"/api/admin/batches/{batch.pk}/progress/").json()
    assert progress["annotators_per_key_max"] == 1
    assert progress["total"]["keys_assigned"] == 2
    # Raising the overlap gives alice's key to bob? No: he holds it (as a check).
    result = assignment_extend(batch=batch, annotators=[], overlap=2)
    assert (result.keys_added, result.keys_short) == (1, 1)


def test_an_import_gives_a_check_annotations_key_back_as_a_check_key(alice):
    study = _study(rate=0.0, name="source")
    regular, check = _keys(study, [(1, 0), (1, 1)])
    annotate_key(regular, alice, [("shallow", [1, 2, 3])])
    Annotation.objects.filter(pk=annotate_key(check, alice, []).pk).update(is_check=True)
    text = "".join(export_jsonl(study=study))
    copy = study_import(file=io.BytesIO(text.encode()), study_name="copy", live=True, assign=True)
    rows = AssignmentKey.objects.filter(assignment__batch__study=copy.study)
    assert sorted(rows.values_list("key__index", "is_check")) == [(0, False), (1, True)]


def test_another_annotator_cannot_open_or_write_someone_elses_check(offered, alice, bob):
    batch, _ = offered
    assignment_create(batch=batch, annotator=alice)
    key_id = _checks_of(alice)[0]
    client = client_for(bob)
    assert client.get(f"/api/keys/{key_id}/").status_code == 404
    assert client.post(f"/api/keys/{key_id}/submit/", {"version": 1}).status_code == 404
    put = client.put(f"/api/keys/{key_id}/annotation/", {"note": "x", "version": 1})
    assert put.status_code == 404
    assert not Annotation.objects.filter(annotator=bob).exists()


def test_a_check_key_is_not_open_before_it_is_given(offered, alice):
    _, checks = offered
    assert client_for(alice).get(f"/api/keys/{checks[0].pk}/").status_code == 404


def test_giving_keys_costs_the_same_queries_for_few_or_many_keys_and_checks(alice, bob):
    counts = []
    for n in (2, 20):
        study = _study(rate=1.0)
        for key in _keys(study, [(1, 100 + i) for i in range(n)]):
            _gold_check(key)
        batch = BatchFactory(study=study, keys=_keys(study, [(1, i) for i in range(n)]))
        with CaptureQueriesContext(connection) as queries:
            assignment_create_with_overlap(batch=batch, annotators=[alice, bob], overlap=2)
        counts.append(len(queries))
        assert len(_checks_of(alice)) == len(_checks_of(bob)) == n
        Assignment.objects.filter(batch=batch).delete()
    assert counts[0] == counts[1]


def test_the_next_key_costs_the_same_queries_with_or_without_checks(alice):
    plain = _study(rate=0.0)
    assignment_create(batch=BatchFactory(study=plain, keys=_keys(plain, [(1, 0)])), annotator=alice)
    study = _study(rate=1.0)
    client = client_for(alice)
    with CaptureQueriesContext(connection) as without:
        assert client.get("/api/next-key/").status_code == 200
    Assignment.objects.filter(annotator=alice).delete()
    for key in _keys(study, [(1, 10 + i) for i in range(5)]):
        _gold_check(key)
    assignment_create(batch=BatchFactory(study=study, keys=_keys(study, [(1, 0)])), annotator=alice)
    assert len(_checks_of(alice)) == 1
    with CaptureQueriesContext(connection) as with_checks:
        assert client.get("/api/next-key/").status_code == 200
    assert len(without) == len(with_checks)
