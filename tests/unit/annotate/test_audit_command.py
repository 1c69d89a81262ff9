"""``manage.py audit --study ID --out FILE``: every event of the study, an annotator's and
the gold's, one JSON object a line, oldest first; other studies' events stay out."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Pattern
from annotate.services.annotations import annotation_get_or_create_for, annotation_submit
from annotate.services.gold import gold_pattern_create
from annotate.services.patterns import pattern_create
from tests.factories import assigned_batch

pytestmark = pytest.mark.django_db


def _work(alice, cora):
    """alice annotates the study's key (create, pattern, submit); cora adopts her pattern."""
    batch, (key,) = assigned_batch([alice], n_prefixes=5)
    annotation = annotation_get_or_create_for(key=key, annotator=alice)
    prefixes = list(key.prefixes.order_by("rank"))
    result = pattern_create(
        annotation=annotation,
        actor=alice,
        description="numbers",
        kind="shallow",
        prefixes=prefixes[:3],
        version=annotation.version,
    )
    annotation = annotation_submit(annotation=result.annotation, actor=alice, version=2)
    gold_pattern_create(
        key=key,
        actor=cora,
        version=0,
        description="numbers",
        kind="shallow",
        prefixes=prefixes[:3],
        # As the review API reads it: with its annotation as it is now.
        source_pattern=Pattern.objects.select_related("annotation__annotator").get(
            pk=result.pattern.pk
        ),
    )
    return batch.study, key, annotation, result.pattern


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_trail_holds_every_annotator_and_gold_event_oldest_first(alice, cora, tmp_path):
    study, key, annotation, pattern = _work(alice, cora)
    _work(alice, cora)  # another study's: not in this trail
    out = tmp_path / "audit.jsonl"
    call_command("audit", study=str(study.pk), out=str(out))
    events = _lines(out)
    assert [(e["kind"], e["action"], e["actor"]) for e in events] == [
        ("annotation", "create", "alice"),
        ("annotation", "pattern_create", "alice"),
        ("annotation", "submit", "alice"),
        ("gold", "create", "cora"),
        ("gold", "adopt", "cora"),
    ]
    assert {(e["layer"], e["index"]) for e in events} == {(key.layer, key.index)}
    assert [e["at"] for e in events] == sorted(e["at"] for e in events)
    first, added, submitted, _, adopted = events
    assert first["before"] is None
    assert added["before"]["patterns"] == []
    assert added["after"]["patterns"][0]["prefix_ranks"] == [1, 2, 3]
    assert (submitted["before"]["status"], submitted["after"]["status"]) == ("draft", "submitted")
    assert first["source"] is None
    assert adopted["source"] == {
        "annotation_id": annotation.pk,
        "annotator": "alice",
        "annotation_version": annotation.version,
        "pattern_id": pattern.pk,
    }
    assert adopted["after"]["patterns"][0]["source"] == "adopted"
    assert set(first) == {
        "kind",
        "layer",
        "index",
        "actor",
        "at",
        "action",
        "before",
        "after",
        "source",
    }


def test_a_study_is_found_by_name_too_and_an_unknown_one_is_a_clear_error(alice, cora, tmp_path):
    study, *_ = _work(alice, cora)
    out = tmp_path / "audit.jsonl"
    call_command("audit", study=study.name, out=str(out))
    assert len(_lines(out)) == 5
    with pytest.raises(CommandError, match="no study with id or name '999999'"):
        call_command("audit", study="999999", out=str(tmp_path / "none.jsonl"))
    assert not (tmp_path / "none.jsonl").exists()


def test_an_unwritable_file_is_a_clear_error(alice, cora, tmp_path):
    study, *_ = _work(alice, cora)
    out = tmp_path / "missing" / "audit.jsonl"
    with pytest.raises(CommandError, match="cannot write"):
        call_command("audit", study=str(study.pk), out=str(out))


def test_a_directory_as_the_file_is_a_clear_error_and_leaves_nothing_beside_it(
    alice, cora, tmp_path
):
    study, *_ = _work(alice, cora)
    with pytest.raises(CommandError, match="cannot write"):
        call_command("audit", study=str(study.pk), out=str(tmp_path))
    assert list(tmp_path.parent.glob(f"{tmp_path.name}.partial")) == []


def test_a_run_stopped_midway_leaves_no_file(alice, cora, tmp_path, monkeypatch):
    from annotate.management.commands import audit

    study, *_ = _work(alice, cora)

    def broken(*, study):
        yield {"kind": "annotation"}
        raise RuntimeError("connection lost")

    monkeypatch.setattr(audit, "audit_events", broken)
    out = tmp_path / "audit.jsonl"
    with pytest.raises(RuntimeError):
        call_command("audit", study=str(study.pk), out=str(out))
    assert list(tmp_path.iterdir()) == []
