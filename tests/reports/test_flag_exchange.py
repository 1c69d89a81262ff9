"""Key flags in the exports and back: per key ``flags`` in the JSONL (additive v1), the
import validates them and recreates them, and the CSV and Parquet zips carry a third
table, ``flags``, so that an analysis can leave out keys flagged as badly tokenized or
offensive."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model

from annotate.imports import ImportFileError
from annotate.models import Assignment, Key, KeyFlag
from annotate.permissions import ANNOTATOR_GROUP
from annotate.services.flags import FLAG_NOTE_NEEDED
from reports.exports import FLAG_COLUMNS, export_csv, export_parquet
from tests.factories import UserFactory
from tests.reports.roundtrip import as_text, export_lines, export_text, in_group, load
from tests.reports.test_export import parquet_tables, unzip

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 30, 9, 30, 0, 123456, tzinfo=UTC)
T1 = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)


@pytest.fixture
def flag_study(hand_study, alice, bob):
    """hand_study with flags: on key A by bob (tokenization, a note that a spreadsheet
    would run) and by alice (offensive, no note); on key B by dora, who annotates no key
    of it (other, with a note). Made out of order, so that the export's order shows."""
    key_a, key_b = Key.objects.filter(study=hand_study).order_by("layer", "index")
    dora = in_group(UserFactory(username="dora"), ANNOTATOR_GROUP)
    flags = [
        KeyFlag.objects.create(key=key_a, annotator=bob, reason="tokenization", note="=1+1"),
        KeyFlag.objects.create(key=key_a, annotator=alice, reason="offensive", note=""),
        KeyFlag.objects.create(key=key_b, annotator=dora, reason="other", note="a stray byte"),
    ]
    for flag, at in zip(flags, (T1, T0, T1), strict=True):
        KeyFlag.objects.filter(pk=flag.pk).update(created_at=at, updated_at=at)
    return hand_study


def test_the_jsonl_carries_each_keys_flags_by_annotator(flag_study, hand_study):
    first, second = export_lines(flag_study)
    assert list(first)[-1] == "flags"
    assert first["flags"] == [
        {
            "reason": "offensive",
            "note": "",
            "annotator": "alice",
            "created_at": "2026-11-30T09:30:00.123456+00:00",
        },
        {
            "reason": "tokenization",
            "note": "=1+1",
            "annotator": "bob",
            "created_at": "2026-11-30T10:00:00+00:00",
        },
    ]
    assert [f["annotator"] for f in second["flags"]] == ["dora"]


def test_an_export_of_the_import_is_the_same_file_but_for_the_name(flag_study):
    original = export_text(flag_study)
    copy = load(original, study_name="copy")
    assert copy.flags == 3
    assert export_text(copy.study) == original.replace('"hand study"', '"copy"')
    restored = KeyFlag.objects.filter(key__study=copy.study).order_by("annotator__username")
    assert [(f.annotator.username, f.reason, f.created_at) for f in restored] == [
        ("alice", "offensive", T0),
        ("bob", "tokenization", T1),
        ("dora", "other", T1),
    ]
    assert all(f.updated_at == f.created_at for f in restored)


def test_an_unknown_flagger_becomes_an_inactive_annotator_without_keys(flag_study):
    lines = export_lines(flag_study)
    lines[1]["flags"][0]["annotator"] = "newbie"
    result = load(as_text(lines), study_name="live", live=True, assign=True)
    assert "newbie" in result.users_created
    newbie = get_user_model().objects.get(username="newbie")
    assert not newbie.is_active and newbie.groups.filter(name=ANNOTATOR_GROUP).exists()
    assert KeyFlag.objects.get(key__study=result.study, annotator=newbie).note == "a stray byte"
    # A flag is no annotation: the flagger gets no assignment of the imported batch.
    assert not Assignment.objects.filter(batch__study=result.study, annotator=newbie).exists()


def test_a_file_without_flags_imports_none(flag_study):
    lines = export_lines(flag_study)
    for line in lines:
        del line["flags"]
    result = load(as_text(lines), study_name="v1")
    assert result.flags == 0 and not KeyFlag.objects.filter(key__study=result.study).exists()
    assert [line["flags"] for line in export_lines(result.study)] == [[], []]


def test_a_flag_without_note_or_time_imports_with_defaults(flag_study):
    lines = export_lines(flag_study)
    lines[0]["flags"] = [{"reason": "unclear", "annotator": "alice"}]
    before = datetime.now(UTC)
    result = load(as_text(lines), study_name="defaults")
    flag = KeyFlag.objects.get(key__study=result.study, key__layer=1)
    assert (flag.reason, flag.note) == ("unclear", "")
    assert flag.created_at >= before


def _refused(flag_study, change) -> list[str]:
    lines = export_lines(flag_study)
    change(lines)
    counts = KeyFlag.objects.count(), get_user_model().objects.count()
    with pytest.raises(ImportFileError) as info:
        load(as_text(lines), study_name="refused")
    assert (KeyFlag.objects.count(), get_user_model().objects.count()) == counts
    return info.value.errors


def _set(line: int, flag: int, **fields):
    def change(lines):
        lines[line]["flags"][flag].update(fields)

    return change


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            _set(0, 0, reason="rude"),
            "line 1: flags[0].reason: must be one of 'unclear', 'tokenization', "
            "'offensive', 'other'",
        ),
        (_set(1, 0, note="  "), f"line 2: flags[0].note: {FLAG_NOTE_NEEDED}"),
        (
            _set(0, 1, annotator="alice"),
            "line 1: flags[1].annotator: 'alice' flags this key "
            "twice (one flag per annotator and key)",
        ),
        (
            _set(0, 0, created_at="yesterday"),
            "line 1: flags[0].created_at: must be an ISO "
            "8601 date and time with a UTC offset (2026-12-01T09:30:00+00:00)",
        ),
        (_set(0, 0, colour="red"), "line 1: flags[0].colour: unknown field"),
        (_set(0, 0, note="x" * 20_001), "line 1: flags[0].note: must be at most 20000 characters"),
        (
            _set(0, 0, annotator="a b"),
            "line 1: flags[0].annotator: is not a valid username "
            "(letters, digits and @.+-_ only, 150 at most)",
        ),
        (lambda lines: lines[0].update(flags={}), "line 1: flags: must be a list"),
        (
            lambda lines: lines[0].update(flags=[{}] * 1001),
            "line 1: flags: at most 1000 flags per key, got 1001",
        ),
    ],
    ids=[
        "reason",
        "other without a note",
        "twice",
        "time",
        "unknown field",
        "long note",
        "username",
        "not a list",
        "too many",
    ],
)
def test_a_bad_flag_names_its_line_and_field_and_nothing_is_written(flag_study, change, expected):
    assert _refused(flag_study, change) == [expected]


def test_a_flag_by_an_admin_is_refused_as_work_of_a_non_annotator(flag_study):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    errors = _refused(flag_study, _set(1, 0, annotator="root"))
    assert errors == [
        "line 2: flags[0].annotator: 'root' is not an annotator (an admin); an import "
        "attaches work to annotators only"
    ]


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


def test_the_csv_zip_has_a_flags_table_with_neutralised_cells(flag_study):
    tables = unzip(b"".join(export_csv(study=flag_study)))
    assert list(tables) == ["labels.csv", "patterns.csv", "flags.csv", "examples.csv"]
    rows = _rows(tables["flags.csv"])
    assert list(rows[0]) == list(FLAG_COLUMNS)
    assert [(r["layer"], r["index"], r["annotator"], r["reason"], r["note"]) for r in rows] == [
        ("1", "7", "alice", "offensive", ""),
        ("1", "7", "bob", "tokenization", "'=1+1"),  # never run as a formula
        ("2", "3", "dora", "other", "a stray byte"),
    ]
    assert rows[0]["created_at"] == "2026-11-30T09:30:00.123456+00:00"
    assert {r["study"] for r in rows} == {"hand study"}


def test_the_parquet_zip_has_a_flags_table_typed(flag_study, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "out.parquet.zip"
    export_parquet(study=flag_study, sink=out)
    tables = parquet_tables(out)
    assert list(tables) == [
        "labels.parquet",
        "patterns.parquet",
        "flags.parquet",
        "examples.parquet",
    ]
    rows = tables["flags.parquet"]
    assert [(r["layer"], r["index"], r["annotator"], r["note"]) for r in rows] == [
        (1, 7, "alice", ""),
        (1, 7, "bob", "=1+1"),  # exact: Parquet runs nothing
        (2, 3, "dora", "a stray byte"),
    ]
    assert rows[0]["created_at"] == T0
    body = unzip(out.read_bytes())["flags.parquet"]
    schema = pq.read_schema(io.BytesIO(body))
    assert schema.field("created_at").type == pa.timestamp("us", tz="UTC")
    assert schema.field("layer").type == pa.int32()


def test_a_study_without_flags_has_an_empty_flags_table(hand_study, tmp_path):
    tables = unzip(b"".join(export_csv(study=hand_study)))
    assert tables["flags.csv"].decode().splitlines() == [",".join(FLAG_COLUMNS)]
    out = tmp_path / "empty.parquet.zip"
    export_parquet(study=hand_study, sink=out)
    assert parquet_tables(out)["flags.parquet"] == []


def test_the_import_command_says_how_many_flags(flag_study, tmp_path):
    from django.core.management import call_command

    path = tmp_path / "flags.jsonl"
    path.write_text(export_text(flag_study))
    out = io.StringIO()
    call_command("import", str(path), "--study-name", "counted", stdout=out)
    assert "2 gold annotations" not in out.getvalue()
    assert "0 gold annotations, 3 flags;" in out.getvalue()
