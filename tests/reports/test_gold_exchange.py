"""Gold annotations, check annotations, active time and guideline versions in the exports
and back: the JSONL carries them as additive fields (docs/data-format.md), the import
validates them and gives them back column for column, an archived (hidden) imported study
exports as it was imported, and the CSV and Parquet tables carry the same information."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.imports import ImportFileError
from annotate.models import (
    Annotation,
    GoldAnnotation,
    GoldPattern,
    Key,
    Study,
    TriggerPrefix,
)
from annotate.permissions import ANNOTATOR_GROUP, CURATOR_GROUP
from reports.contract.records import SCORE_NAMES
from reports.exports import PATTERN_COLUMNS, export_csv, export_parquet
from tests.factories import StudyFactory, UserFactory, annotate_key, key_with_prefixes
from tests.reports.roundtrip import (
    as_text,
    export_lines,
    export_text,
    gold_for,
    in_group,
    load,
    study_rows,
)
from tests.reports.test_export import parquet_tables, unzip

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 30, 9, 30, 0, 123456, tzinfo=UTC)
T1 = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
T2 = datetime(2026, 11, 30, 10, 5, 0, tzinfo=UTC)


@pytest.fixture
def gold_study(hand_study):
    """hand_study, and: alice's active time and guideline version on key A, bob's active
    time on key B; carl's check annotation of key A; key A's submitted gold (a check key)
    by cora with an adopted pattern (alice's second), a written one and one adopted from
    bob whose source pattern is gone; key B's draft gold without a curator or patterns."""
    key_a, key_b = Key.objects.filter(study=hand_study).order_by("layer", "index")
    alice_a = Annotation.objects.get(key=key_a, annotator__username="alice")
    bob_a = Annotation.objects.get(key=key_a, annotator__username="bob")
    Annotation.objects.filter(pk=alice_a.pk).update(active_seconds=93.5, guideline_version=2)
    Annotation.objects.filter(key=key_b, annotator__username="bob").update(active_seconds=4.25)
    carl = in_group(UserFactory(username="carl"), ANNOTATOR_GROUP)
    check = annotate_key(key_a, carl, [("semantic", [2, 3, 4])])
    Annotation.objects.filter(pk=check.pk).update(is_check=True, guideline_version=2)
    cora = in_group(UserFactory(username="cora"), CURATOR_GROUP)
    gold_a = gold_for(
        key_a,
        curator=cora,
        patterns=[
            ("semantic", [3, 4, 5], "adopted", alice_a, 1),
            ("shallow", [1, 2, 3], "written", None, None),
            ("shallow+semantic", [1, 2, 4], "adopted", bob_a, None),
        ],
        status="submitted",
        note="agreed: rank 3 is both",
        version=3,
        is_check=True,
    )
    GoldAnnotation.objects.filter(pk=gold_a.pk).update(
        created_at=T0, updated_at=T2, submitted_at=T2
    )
    GoldPattern.objects.filter(gold=gold_a).update(created_at=T0, updated_at=T1)
    gold_for(key_b, curator=None, patterns=[])
    return hand_study


def test_the_jsonl_carries_gold_checks_active_time_and_guideline_versions(gold_study):
    first, second = export_lines(gold_study)
    assert list(first)[-3:] == ["annotations", "gold", "flags"]
    assert first["heldout"] == first["heldout_random"] == first["samples"] == []
    alice, bob, carl = first["annotations"]
    assert (alice["active_seconds"], alice["guideline_version"], alice["check"]) == (
        93.5,
        2,
        False,
    )
    assert (bob["active_seconds"], bob["guideline_version"], bob["check"]) == (0.0, None, False)
    # A check annotation stays in the export, marked (the reports leave it out).
    assert (carl["annotator"], carl["check"], carl["guideline_version"]) == ("carl", True, 2)
    assert {p["source"] for a in first["annotations"] for p in a["patterns"]} == {"written"}
    assert first["gold"] == {
        "annotator": "cora",
        "status": "submitted",
        "note": "agreed: rank 3 is both",
        "version": 3,
        "is_check": True,
        "created_at": "2026-11-30T09:30:00.123456+00:00",
        "updated_at": "2026-11-30T10:05:00+00:00",
        "submitted_at": "2026-11-30T10:05:00+00:00",
        "patterns": [
            {
                "description": "gold semantic 0",
                "kind": "semantic",
                "prefix_ranks": [3, 4, 5],
                "source": "adopted",
                "source_annotator": "alice",
                "source_pattern": 1,  # alice's second pattern on this line
                "created_at": "2026-11-30T09:30:00.123456+00:00",
                "updated_at": "2026-11-30T10:00:00+00:00",
                "rule": None,
                "scores": {},
            },
            {
                "description": "gold shallow 1",
                "kind": "shallow",
                "prefix_ranks": [1, 2, 3],
                "source": "written",
                "source_annotator": None,
                "source_pattern": None,
                "created_at": "2026-11-30T09:30:00.123456+00:00",
                "updated_at": "2026-11-30T10:00:00+00:00",
                "rule": None,
                "scores": {},
            },
            {
                "description": "gold shallow+semantic 2",
                "kind": "shallow+semantic",
                "prefix_ranks": [1, 2, 4],
                "source": "adopted",
                "source_annotator": "bob",
                "source_pattern": None,  # its source pattern is gone
                "created_at": "2026-11-30T09:30:00.123456+00:00",
                "updated_at": "2026-11-30T10:00:00+00:00",
                "rule": None,
                "scores": {},
            },
        ],
        "labels": ["shallow+semantic"] * 4 + ["semantic"],
    }
    gold_b = second["gold"]
    assert (gold_b["annotator"], gold_b["status"], gold_b["is_check"]) == (None, "draft", False)
    assert (gold_b["patterns"], gold_b["labels"]) == ([], ["not-covered"] * 5)
    assert gold_b["submitted_at"] is None


def test_gold_checks_and_active_time_come_back_column_for_column(gold_study):
    result = load(export_text(gold_study), study_name="copy")
    assert (result.golds, result.gold_patterns) == (2, 3)
    original, copy = study_rows(gold_study), study_rows(result.study)
    assert copy == original
    # The comparison saw what the fixture wrote: the adopted pattern points at alice's
    # second imported pattern, the check annotation is one, the active time is kept.
    gold_a = original["golds"][0]
    assert gold_a["patterns"][0]["source_pattern"] == (1, 7, "alice", 1)
    assert gold_a["patterns"][2]["source_annotator"] == "bob"
    assert [a["is_check"] for a in original["annotations"]].count(True) == 1
    assert 93.5 in [a["active_seconds"] for a in original["annotations"]]
    adopted = GoldPattern.objects.get(gold__key__study=result.study, order=0, gold__key__layer=1)
    assert adopted.source_pattern is not None
    assert adopted.source_pattern.annotation.key.study == result.study
    # The existing curator takes the imported gold.
    assert GoldAnnotation.objects.get(key__study=result.study, key__layer=1).curator.username == (
        "cora"
    )


def test_an_imported_gold_starts_its_audit_trail_with_the_import(gold_study):
    """As an imported annotation does: one "create" event per gold whose state after is
    the imported gold, in the shape the review API's writes record."""
    from annotate.models import GoldEvent
    from annotate.selectors.review import gold_patterns
    from annotate.services.gold import gold_state

    result = load(export_text(gold_study), study_name="copy")
    golds = GoldAnnotation.objects.filter(key__study=result.study).select_related("curator")
    events = GoldEvent.objects.filter(gold__key__study=result.study)
    assert sorted(e.action for e in events) == ["create", "create"]
    for gold in golds:
        (event,) = events.filter(gold=gold)
        assert event.before is None
        assert event.after == gold_state(gold=gold, patterns=gold_patterns(gold_id=gold.pk))
    adopted = events.get(gold__key__layer=1).after["patterns"]
    assert [p["source"] for p in adopted] == ["adopted", "written", "adopted"]
    assert adopted[2]["source_annotator"] == "bob"


def test_a_hidden_imported_study_with_gold_exports_as_it_was_imported(gold_study):
    # export -> import (archived, out of every annotator's sight) -> export is the same
    # file, byte for byte, but for the study's name.
    original = export_text(gold_study)
    first = load(original, study_name="restored")
    assert first.study.archived
    again = export_text(first.study)
    assert again == original.replace('"name": "hand study"', '"name": "restored"')
    second = load(again, study_name="restored twice")
    assert export_text(second.study) == again.replace(
        '"name": "restored"', '"name": "restored twice"'
    )


def test_unknown_curators_and_source_annotators_become_inactive_accounts(gold_study):
    lines = export_lines(gold_study)
    for line in lines:
        line["study"]["name"] = "renamed"
    lines[0]["gold"]["annotator"] = "newcurator"
    lines[0]["gold"]["patterns"][2]["source_annotator"] = "gone"  # not on the key: allowed
    result = load(as_text(lines))
    assert result.users_created == ["gone", "newcurator"]
    User = get_user_model()
    newcurator, gone = User.objects.get(username="newcurator"), User.objects.get(username="gone")
    for user in (newcurator, gone):
        assert not user.is_active
        assert not user.has_usable_password()
    assert newcurator.groups.filter(name=CURATOR_GROUP).exists()
    assert not newcurator.groups.filter(name=ANNOTATOR_GROUP).exists()
    assert gone.groups.filter(name=ANNOTATOR_GROUP).exists()
    gold = GoldAnnotation.objects.get(key__study=result.study, key__layer=1)
    assert gold.curator == newcurator
    assert gold.patterns.get(order=2).source_annotator == gone


def test_assign_gives_keys_only_to_those_who_annotated_them(gold_study):
    from annotate.models import Assignment, AssignmentKey

    lines = export_lines(gold_study)
    for line in lines:
        line["study"]["name"] = "assigned"
    lines[0]["gold"]["annotator"] = "newcurator"
    lines[0]["gold"]["patterns"][2]["source_annotator"] = "gone"  # annotates no key here
    result = load(as_text(lines), live=True, assign=True)
    assignments = Assignment.objects.filter(batch__study=result.study)
    # Not the curators (cora, newcurator) nor the source annotator without annotations.
    assert sorted(assignments.values_list("annotator__username", flat=True)) == [
        "alice",
        "bob",
        "carl",
    ]
    assert result.assignments == 3
    held = AssignmentKey.objects.filter(assignment__batch__study=result.study)
    assert sorted(held.values_list("assignment__annotator__username", "key__layer")) == [
        ("alice", 1),
        ("alice", 2),
        ("bob", 1),
        ("bob", 2),
        ("carl", 1),
    ]


def test_a_v1_file_without_the_new_fields_imports_with_defaults(gold_study):
    lines = export_lines(gold_study)
    for line in lines:
        line["study"]["name"] = "old"
        del line["gold"]
        for ann in line["annotations"]:
            del ann["active_seconds"], ann["guideline_version"], ann["check"]
            for pattern in ann["patterns"]:
                del pattern["source"]
    study = load(as_text(lines)).study
    assert not GoldAnnotation.objects.filter(key__study=study).exists()
    assert set(
        Annotation.objects.filter(key__study=study).values_list(
            "active_seconds", "guideline_version", "is_check"
        )
    ) == {(0.0, None, False)}


def _counts() -> tuple[int, ...]:
    return (
        Study.objects.count(),
        Key.objects.count(),
        TriggerPrefix.objects.count(),
        Annotation.objects.count(),
        GoldAnnotation.objects.count(),
        GoldPattern.objects.count(),
        get_user_model().objects.count(),
    )


def _set(line: dict[str, Any], path: str, value: Any) -> None:
    parts = path.replace("[", ".").replace("]", "").split(".")
    node: Any = line
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    node[int(parts[-1]) if parts[-1].isdigit() else parts[-1]] = value


BAD = [
    ("annotations[0].active_seconds", -1, "must be a finite number, 0 or more"),
    ("annotations[0].active_seconds", "5", "must be a finite number"),
    ("annotations[0].guideline_version", 0, "must be an integer from 1, or null"),
    ("annotations[0].check", "yes", "must be true or false"),
    ("annotations[0].patterns[0].source", "adopted", "an annotator's pattern must be 'written'"),
    ("gold.status", "done", "must be 'draft' or 'submitted'"),
    ("gold.is_check", 1, "must be true or false"),
    ("gold.colour", "red", "unknown field"),
    ("gold.annotator", "no spaces allowed", "is not a valid username"),
    ("gold.patterns[0].source", "copied", "must be 'written' or 'adopted'"),
    ("gold.patterns[1].source_annotator", "alice", "only an adopted pattern has a source"),
    ("gold.patterns[0].source_pattern", 2, "'alice' has 2 patterns on this key: must be from 0"),
    ("gold.patterns[0].source_pattern", -1, "'alice' has 2 patterns on this key"),
    ("gold.patterns[0].source_pattern", "1", "must be an integer"),
    ("gold.patterns[2].source_pattern", 0, None),  # bob: fine, his first pattern
    ("gold.patterns[0].source_annotator", "zed", "'zed' does not annotate this key"),
    ("gold.patterns[0].source_annotator", None, "needs source_annotator"),
    ("gold.patterns[0].prefix_ranks", [3, 4], "a pattern must cover at least 3 prefixes"),
    ("gold.labels[4]", "shallow", "'shallow' does not follow from the patterns"),
    ("gold.labels", ["semantic"], "one label per prefix: expected 5, got 1"),
    ("gold.submitted_at", "today", "must be an ISO 8601"),
]


@pytest.mark.parametrize(("path", "value", "message"), BAD, ids=repr)
def test_a_bad_gold_or_annotation_field_names_its_line_and_writes_nothing(
    gold_study, path, value, message
):
    lines = export_lines(gold_study)
    for line in lines:
        line["study"]["name"] = "bad"
    _set(lines[0], path, value)
    before = _counts()
    if message is None:
        load(as_text(lines))
        return
    with pytest.raises(ImportFileError) as info:
        load(as_text(lines))
    (error,) = info.value.errors
    assert error.startswith("line 1: " + path.split(".")[0]), error
    assert message in error, error
    assert _counts() == before


def test_a_curator_who_is_not_one_is_refused(gold_study):
    lines = export_lines(gold_study)
    for line in lines:
        line["study"]["name"] = "bad curator"
    lines[0]["gold"]["annotator"] = "alice"  # an annotator, not a curator
    before = _counts()
    with pytest.raises(ImportFileError) as info:
        load(as_text(lines))
    assert info.value.errors == [
        "line 1: gold.annotator: 'alice' is not a curator (no curator role); an import "
        "attaches gold annotations to curators (admins or members of the curator group) only"
    ]
    assert _counts() == before


# --- CSV and Parquet ----------------------------------------------------------------------


def _from_pattern_rows(rows: list[dict[str, Any]], text: bool) -> list[dict[str, Any]]:
    """The JSONL's annotations and gold (less the labels, which the labels table holds),
    read back from the patterns table: each annotation's and gold's rows in turn."""

    def value(row: dict[str, Any], name: str, kind: Any = str) -> Any:
        v = row[name]
        if not text:
            return v.isoformat() if isinstance(v, datetime) else v
        if v == "":
            return None
        if kind is bool:
            return v == "True"
        return kind(v)

    keys: dict[tuple[int, int], dict[str, Any]] = {}
    for row in rows:
        key = (int(row["layer"]), int(row["index"]))
        record = keys.setdefault(key, {"annotations": [], "gold": None})
        is_gold = value(row, "gold", bool)
        who = value(row, "annotator")
        current = record["gold"] if is_gold else (record["annotations"] or [None])[-1]
        if (
            current is None
            or current["annotator"] != who
            or (not is_gold and "is_check" in current)
        ):
            current = {
                "annotator": who,
                "status": value(row, "status"),
                "note": value(row, "note") or "",
                "version": value(row, "version", int),
                "created_at": value(row, "created_at"),
                "updated_at": value(row, "updated_at"),
                "submitted_at": value(row, "submitted_at"),
                "patterns": [],
            }
            if is_gold:
                current["is_check"] = value(row, "check", bool)
                record["gold"] = current
            else:
                current["active_seconds"] = value(row, "active_seconds", float)
                current["guideline_version"] = value(row, "guideline_version", int)
                current["check"] = value(row, "check", bool)
                record["annotations"].append(current)
        if value(row, "pattern", int) is None:
            continue
        ranks = row["prefix_ranks"]
        pattern = {
            "description": value(row, "description"),
            "kind": value(row, "kind"),
            "prefix_ranks": [int(r) for r in ranks.split(";")] if text else ranks,
            "created_at": value(row, "pattern_created_at"),
            "updated_at": value(row, "pattern_updated_at"),
            "source": value(row, "source"),
        }
        if is_gold:
            place = value(row, "source_pattern", int)
            pattern["source_annotator"] = value(row, "source_annotator")
            pattern["source_pattern"] = None if place is None else place - 1
        # The rule and the scores, flat columns (an empty score: not scored, or null).
        rule_type = value(row, "rule_type")
        pattern["rule"] = rule_type and {"type": rule_type, "value": value(row, "rule_value")}
        scores = {name: value(row, name, float) for name in SCORE_NAMES}
        pattern["scores"] = {k: v for k, v in scores.items() if v is not None}
        current["patterns"].append(pattern)
    return [keys[k] for k in sorted(keys)]


def _without_labels(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        anns = [{k: v for k, v in a.items() if k != "labels"} for a in line["annotations"]]
        gold = line["gold"] and {k: v for k, v in line["gold"].items() if k != "labels"}
        out.append({"annotations": anns, "gold": gold})
    return out


def _labels_from_rows(rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[Any]]:
    out: dict[tuple[Any, ...], list[Any]] = {}
    for row in rows:
        name = (str(row["layer"]), str(row["index"]), str(row["gold"]), row["annotator"] or "")
        out.setdefault(name, []).append((row["label"], str(row["check"])))
    return out


def _labels_from_lines(lines: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[Any]]:
    out: dict[tuple[Any, ...], list[Any]] = {}
    for line in lines:
        layer, index = str(line["key"]["layer"]), str(line["key"]["index"])
        for a in line["annotations"]:
            name = (layer, index, "False", a["annotator"])
            out[name] = [(label, str(a["check"])) for label in a["labels"]]
        if line["gold"] is not None:
            g = line["gold"]
            name = (layer, index, "True", g["annotator"] or "")
            out[name] = [(label, str(g["is_check"])) for label in g["labels"]]
    return out


def test_the_csv_tables_carry_the_gold_and_the_new_fields(gold_study):
    files = unzip(b"".join(export_csv(study=gold_study)))
    tables = {
        name: list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
        for name, body in files.items()
    }
    patterns, labels = tables["patterns.csv"], tables["labels.csv"]
    assert list(patterns[0]) == list(PATTERN_COLUMNS)
    lines = export_lines(gold_study)
    assert _from_pattern_rows(patterns, text=True) == _without_labels(lines)
    assert _labels_from_rows(labels) == _labels_from_lines(lines)
    gold_rows = [r for r in patterns if r["gold"] == "True"]
    assert [(r["annotator"], r["pattern"], r["source"], r["source_pattern"]) for r in gold_rows][
        :3
    ] == [
        ("cora", "1", "adopted", "2"),  # alice's pattern 2 in this table's numbering
        ("cora", "2", "written", ""),
        ("cora", "3", "adopted", ""),
    ]
    # key B's gold has no pattern and no curator: one row keeps it
    assert [(r["layer"], r["annotator"], r["pattern"]) for r in gold_rows[3:]] == [("2", "", "")]


def test_the_parquet_tables_carry_the_gold_and_the_new_fields_typed(gold_study, tmp_path):
    path = tmp_path / "x.parquet.zip"
    export_parquet(study=gold_study, sink=path)
    tables = parquet_tables(path)
    patterns, labels = tables["patterns.parquet"], tables["labels.parquet"]
    lines = export_lines(gold_study)
    assert _from_pattern_rows(patterns, text=False) == _without_labels(lines)
    assert _labels_from_rows(labels) == _labels_from_lines(lines)
    carl = next(r for r in patterns if r["annotator"] == "carl")
    assert (carl["check"], carl["gold"], carl["guideline_version"]) == (True, False, 2)
    assert isinstance(carl["active_seconds"], float)


def test_export_queries_stay_constant_per_chunk_with_gold(db):
    curator = in_group(UserFactory(username="cur"), CURATOR_GROUP)
    counts = []
    for n_keys in (2, 9):
        study = StudyFactory()
        people = [in_group(UserFactory(username=f"q{i}"), ANNOTATOR_GROUP) for i in range(2)]
        for k in range(n_keys):
            key = key_with_prefixes(4, study=study, layer=1, index=k)
            anns = [annotate_key(key, person, [("semantic", [1, 2, 4])]) for person in people]
            gold_for(
                key,
                curator=curator,
                patterns=[
                    ("semantic", [1, 2, 4], "adopted", anns[1], 0),
                    ("shallow", [1, 2, 3], "written", None, None),
                ],
            )
        with CaptureQueriesContext(connection) as ctx:
            lines = export_lines(study)
        assert [line["gold"]["patterns"][0]["source_pattern"] for line in lines] == [0] * n_keys
        counts.append(len(ctx.captured_queries))
    assert counts == [10, 10]


def test_the_import_command_says_how_many_golds_and_new_accounts(gold_study, tmp_path):
    lines = export_lines(gold_study)
    for line in lines:
        line["study"]["name"] = "from the command"
    lines[1]["gold"]["annotator"] = "newcurator"
    path = tmp_path / "gold.jsonl"
    path.write_text(as_text(lines), encoding="utf-8")
    out = io.StringIO()
    call_command("import", str(path), stdout=out)
    assert "5 patterns, 2 gold annotations, 0 flags; new inactive accounts: newcurator" in (
        out.getvalue()
    )
