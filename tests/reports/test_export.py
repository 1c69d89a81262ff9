"""Exports: JSONL exactly as the v1 contract (docs/data-format.md) with every field of an
annotation and a pattern; CSV and Parquet each a zip of two tables, labels (one row per
prefix × annotator) and patterns (one row per key × annotator × pattern), Parquet typed;
streamed in chunks at a fixed cost in queries per chunk."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Annotation, Pattern, TriggerPrefix
from reports.exports import (
    LABEL_COLUMNS,
    PATTERN_COLUMNS,
    export_csv,
    export_jsonl,
    export_parquet,
    export_to_file,
)
from tests.factories import KeyFactory, StudyFactory, UserFactory, annotate_key, key_with_prefixes
from tests.reports.conftest import FORMULA_STARTS

pytestmark = pytest.mark.django_db


def jsonl_lines(study, **kwargs) -> list[dict]:
    return [json.loads(line) for line in "".join(export_jsonl(study=study, **kwargs)).splitlines()]


def unzip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def parquet_tables(sink) -> dict[str, list[dict]]:
    data = sink.read_bytes() if hasattr(sink, "read_bytes") else sink
    return {name: pq.read_table(io.BytesIO(body)).to_pylist() for name, body in unzip(data).items()}


T0 = datetime(2026, 11, 30, 9, 30, 0, 123456, tzinfo=UTC)
T1 = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
T2 = datetime(2026, 11, 30, 10, 5, 0, tzinfo=UTC)


@pytest.fixture
def dated_study(hand_study):
    """hand_study with alice's note, version and times on key A, and her patterns' times."""
    alice_a = Annotation.objects.get(key__layer=1, annotator__username="alice")
    Annotation.objects.filter(pk=alice_a.pk).update(
        note="=two patterns\nsee rank 3", version=7, created_at=T0, updated_at=T2, submitted_at=T2
    )
    Pattern.objects.filter(annotation=alice_a).update(created_at=T0, updated_at=T1)
    return hand_study


def test_the_jsonl_export_is_exactly_the_contract(dated_study):
    lines = jsonl_lines(dated_study)
    assert len(lines) == 2
    first = lines[0]
    assert list(first) == [
        "schema",
        "study",
        "key",
        "prefixes",
        "heldout",
        "heldout_random",
        "samples",
        "annotations",
        "gold",
        "flags",
    ]
    # Additive: the key's stored examples beyond its top-k (docs/evidence.md); none here.
    assert (first["heldout"], first["heldout_random"], first["samples"]) == ([], [], [])
    assert first["gold"] is None  # additive: the key's gold annotation
    assert first["flags"] == []  # additive: the annotators' flags on the key
    assert first["schema"] == "ffkv.annotations/v1"
    # The contract's fields, then the additive ones (see test_roundtrip_mined).
    assert first["study"] == {
        "name": "hand study",
        "model": "gpt2",
        "corpus": "builtin:wiki-vital",
        "top_k": 25,
        "seed": 0,
        "n_layers": 2,
        "d_ff": 8,
        "is_causal": True,
        "vocab_size": 100,
        "show_value_tokens": False,
        "value_agreement": {},
        "mining_definitions": {},
    }
    assert first["key"] == {
        "layer": 1,
        "index": 7,
        "value_top_tokens": [[" n1", 0.5], [" x", 0.25]],
        "value_top_token_ids": [1001, 5],
        "density": 0.0,
        "max_coefficient": 0.0,
        "mean_coefficient": 0.0,
        "histogram": {},
        "perturbation": {"first": 0.5, "last": 0.1, "random": 0.2},
    }
    assert [p["rank"] for p in first["prefixes"]] == [1, 2, 3, 4, 5]
    assert set(first["prefixes"][0]) == {
        "rank",
        "coefficient",
        "text",
        "trigger_token",
        "next_token",
        "sentence",
        "sentence_index",
        "position",
        "trigger_token_id",
        "next_token_id",
        "suffix",
        "trigger_start",
        "trigger_end",
        "tokens",
        "token_coefficients",
    }
    assert first["prefixes"][0]["trigger_token"] == " t1"
    assert first["prefixes"][0]["next_token"] == " n1"
    assert isinstance(first["prefixes"][0]["coefficient"], float)
    alice, bob = first["annotations"]
    assert alice == {
        "annotator": "alice",
        "status": "submitted",
        # Additive: everything the annotation holds.
        "note": "=two patterns\nsee rank 3",
        "version": 7,
        "created_at": "2026-11-30T09:30:00.123456+00:00",
        "updated_at": "2026-11-30T10:05:00+00:00",
        "submitted_at": "2026-11-30T10:05:00+00:00",
        "active_seconds": 0.0,
        "guideline_version": None,
        "check": False,
        "patterns": [
            {
                "description": alice["patterns"][0]["description"],
                "kind": "shallow",
                "prefix_ranks": [1, 2, 3],
                "created_at": "2026-11-30T09:30:00.123456+00:00",
                "updated_at": "2026-11-30T10:00:00+00:00",
                "source": "written",
                "rule": None,
                "scores": {},
            },
            {
                "description": alice["patterns"][1]["description"],
                "kind": "semantic",
                "prefix_ranks": [3, 4, 5],
                "created_at": "2026-11-30T09:30:00.123456+00:00",
                "updated_at": "2026-11-30T10:00:00+00:00",
                "source": "written",
                "rule": None,
                "scores": {},
            },
        ],
        "labels": ["shallow", "shallow", "shallow+semantic", "semantic", "semantic"],
    }
    assert alice["patterns"][0]["description"]
    assert bob["labels"] == ["shallow+semantic"] * 3 + ["not-covered"] * 2
    second = lines[1]
    assert second["key"]["layer"] == 2  # layers are numbered from 1, as stored
    assert [a["status"] for a in second["annotations"]] == ["submitted", "draft"]
    assert second["annotations"][1]["submitted_at"] is None  # bob's draft
    assert second["annotations"][1]["note"] == ""


def test_a_key_without_annotations_is_exported_with_an_empty_list(db):
    study = StudyFactory()
    key_with_prefixes(3, study=study, layer=1, index=0)
    (line,) = jsonl_lines(study)
    assert line["annotations"] == []
    assert len(line["prefixes"]) == 3


def csv_tables(study) -> dict[str, list[dict]]:
    files = unzip(b"".join(export_csv(study=study)))
    assert list(files) == ["labels.csv", "patterns.csv", "flags.csv", "examples.csv"]
    return {
        name.removesuffix(".csv"): list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
        for name, body in files.items()
    }


def csv_rows(study) -> list[dict]:
    return csv_tables(study)["labels"]


def test_the_csv_labels_have_one_row_per_prefix_and_annotator(hand_study):
    rows = csv_rows(hand_study)
    assert list(rows[0]) == list(LABEL_COLUMNS)
    assert len(rows) == 2 * 5 * 2  # 2 keys × 5 prefixes × 2 annotators
    first = [r for r in rows if r["layer"] == "1" and r["rank"] == "3"]
    assert [(r["annotator"], r["label"], r["patterns"]) for r in first] == [
        ("alice", "shallow+semantic", "1;2"),
        ("bob", "shallow+semantic", "1"),
    ]


def test_the_csv_patterns_have_one_row_per_key_annotator_and_pattern(dated_study):
    rows = csv_tables(dated_study)["patterns"]
    assert list(rows[0]) == list(PATTERN_COLUMNS)
    line = jsonl_lines(dated_study)[0]
    descriptions = [p["description"] for p in line["annotations"][0]["patterns"]]
    columns = ("layer", "index", "annotator", "status", "pattern", "kind", "prefix_ranks")
    got = [tuple(r[c] for c in columns) for r in rows]
    assert got == [
        ("1", "7", "alice", "submitted", "1", "shallow", "1;2;3"),
        ("1", "7", "alice", "submitted", "2", "semantic", "3;4;5"),
        ("1", "7", "bob", "submitted", "1", "shallow+semantic", "1;2;3"),
        # alice's annotation of key B has no pattern: one row keeps its note and times
        ("2", "3", "alice", "submitted", "", "", ""),
        ("2", "3", "bob", "draft", "1", "semantic", "2;3;4"),
    ]
    first = rows[0]
    assert first["description"] == descriptions[0]
    assert rows[1]["description"] == descriptions[1]
    # The note starts like a formula: behind a ', as every such text cell.
    assert first["note"] == "'=two patterns\nsee rank 3"
    assert (first["version"], first["created_at"], first["updated_at"]) == (
        "7",
        "2026-11-30T09:30:00.123456+00:00",
        "2026-11-30T10:05:00+00:00",
    )
    assert first["submitted_at"] == "2026-11-30T10:05:00+00:00"
    assert (first["pattern_created_at"], first["pattern_updated_at"]) == (
        "2026-11-30T09:30:00.123456+00:00",
        "2026-11-30T10:00:00+00:00",
    )
    assert rows[4]["submitted_at"] == ""  # bob's draft


def test_parquet_holds_the_csvs_two_tables_typed(dated_study, tmp_path):
    path = tmp_path / "x.parquet.zip"
    export_parquet(study=dated_study, sink=path)
    tables = parquet_tables(path)
    assert list(tables) == [
        "labels.parquet",
        "patterns.parquet",
        "flags.parquet",
        "examples.parquet",
    ]
    labels, patterns = tables["labels.parquet"], tables["patterns.parquet"]
    assert list(labels[0]) == list(LABEL_COLUMNS)
    as_text = [{k: "" if v is None else str(v) for k, v in row.items()} for row in labels]
    assert as_text == csv_rows(dated_study)
    assert list(patterns[0]) == list(PATTERN_COLUMNS)
    assert len(patterns) == 5
    first = patterns[0]
    assert first["prefix_ranks"] == [1, 2, 3]
    assert first["note"] == "=two patterns\nsee rank 3"  # exact: no spreadsheet
    assert (first["version"], first["created_at"], first["submitted_at"]) == (7, T0, T2)
    assert (first["pattern_created_at"], first["pattern_updated_at"]) == (T0, T1)
    assert patterns[3]["pattern"] is None and patterns[3]["prefix_ranks"] is None
    assert patterns[4]["submitted_at"] is None


def test_a_cut_sentences_next_token_is_null_in_jsonl_empty_in_csv_and_null_in_parquet(
    hand_study, tmp_path
):
    # next_token is null where the sentence was cut (id -2, unknown), while the
    # end of a sentence keeps its "</s>" marker.
    TriggerPrefix.objects.filter(key__layer=1, rank=2).update(next_token=None, next_token_id=-2)
    TriggerPrefix.objects.filter(key__layer=1, rank=3).update(next_token="</s>", next_token_id=-1)
    prefixes = jsonl_lines(hand_study)[0]["prefixes"]
    assert [p["next_token"] for p in prefixes[:3]] == [" n1", None, "</s>"]
    rows = [r for r in csv_rows(hand_study) if r["layer"] == "1" and r["annotator"] == "alice"]
    assert [r["next_token"] for r in rows[:3]] == [" n1", "", "</s>"]
    path = tmp_path / "cut.parquet.zip"
    export_parquet(study=hand_study, sink=path)
    table = parquet_tables(path)["labels.parquet"]
    alice = [r["next_token"] for r in table if r["layer"] == 1 and r["annotator"] == "alice"]
    assert alice[:3] == [" n1", None, "</s>"]


def test_formula_cells_are_neutralised_in_the_csv_and_exact_elsewhere(formula_study, tmp_path):
    start, study = formula_study
    rows = csv_rows(study)
    assert len(rows) == 6 * 2
    for column, original in (
        ("study", study.name),
        ("text", f"{start}1+1 text"),
        ("trigger_token", f"{start}t"),
        ("next_token", f"{start}n"),
        ("sentence", f"{start}1+1 text and the rest."),
    ):
        assert {r[column] for r in rows} == {"'" + original}, column
    assert {r["annotator"] for r in rows} == {f"'{start}eve", f"'{start}zed"}
    # Numbers are data, never prefixed: the negative coefficient stays a number.
    assert "-0.5" in {r["coefficient"] for r in rows}
    for row in rows:
        for column, cell in row.items():
            assert column == "coefficient" or not cell.startswith(FORMULA_STARTS), (column, cell)
    patterns = csv_tables(study)["patterns"]
    assert {r["note"] for r in patterns} == {f"'{start}note"}
    assert {r["description"] for r in patterns} == {f"'{start}SUM(A1)"}
    for row in patterns:
        for column, cell in row.items():
            assert not cell.startswith(FORMULA_STARTS), (column, cell)
    # JSONL (the import's source) and Parquet are no spreadsheets: they stay exact.
    (line,) = jsonl_lines(study)
    assert line["study"]["name"] == study.name
    assert {p["text"] for p in line["prefixes"]} == {f"{start}1+1 text"}
    assert line["prefixes"][5]["coefficient"] == -0.5
    assert [a["annotator"] for a in line["annotations"]] == [f"{start}eve", f"{start}zed"]
    assert {p["description"] for a in line["annotations"] for p in a["patterns"]} == {
        f"{start}SUM(A1)"
    }
    path = tmp_path / "f.parquet.zip"
    export_parquet(study=study, sink=path)
    table = parquet_tables(path)["labels.parquet"]
    assert {(r["study"], r["annotator"], r["trigger_token"]) for r in table} == {
        (study.name, f"{start}eve", f"{start}t"),
        (study.name, f"{start}zed", f"{start}t"),
    }


def _study(n_keys: int, chunk_people: int = 2):
    study = StudyFactory()
    people = [UserFactory(username=f"p{i}") for i in range(chunk_people)]
    for k in range(n_keys):
        key = key_with_prefixes(4, study=study, layer=1 + k % 2, index=k)
        for person in people:
            annotate_key(key, person, [("semantic", [1, 2, 4])])
    return study


def test_export_queries_grow_with_chunks_not_keys(db):
    counts = []
    for n_keys in (3, 12):
        study = _study(n_keys)
        with CaptureQueriesContext(connection) as ctx:
            lines = jsonl_lines(study, chunk_size=100)
        assert len(lines) == n_keys
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1] == 10
    study = _study(10)
    with CaptureQueriesContext(connection) as ctx:
        lines = jsonl_lines(study, chunk_size=4)
    # Chunks of 4, 4, 2: ten queries each (six for the keys, their prefixes, their other
    # stored examples and annotations, three for the gold, one for the flags), in
    # (layer, index) order.
    assert len(ctx.captured_queries) == 30
    assert [(x["key"]["layer"], x["key"]["index"]) for x in lines] == sorted(
        (1 + k % 2, k) for k in range(10)
    )


def test_the_layers_filter_exports_only_those_layers(hand_study):
    assert [x["key"]["layer"] for x in jsonl_lines(hand_study, layers=[2])] == [2]


def test_the_export_command_writes_each_format(hand_study, tmp_path):
    for fmt in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"out.{fmt}"
        call_command("export", "--study", "hand study", "--format", fmt, "--out", str(out))
        assert out.stat().st_size > 0
        assert not out.with_name(out.name + ".part").exists()
    assert list(unzip(out.read_bytes())) == [
        "labels.parquet",
        "patterns.parquet",
        "flags.parquet",
        "examples.parquet",
    ]
    assert list(unzip((tmp_path / "out.csv").read_bytes())) == [
        "labels.csv",
        "patterns.csv",
        "flags.csv",
        "examples.csv",
    ]
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert [json.loads(x) for x in lines] == jsonl_lines(hand_study)


def test_export_of_an_unknown_study_is_a_clear_error(db, tmp_path):
    from django.core.management.base import CommandError

    KeyFactory()
    with pytest.raises(CommandError, match="There is no study 'nope'"):
        call_command("export", "--study", "nope", "--format", "csv", "--out", str(tmp_path / "x"))


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_export_to_file_writes_the_whole_export_and_says_its_size_and_digest(
    hand_study, tmp_path, fmt
):
    path = tmp_path / f"out.{fmt}"
    written = export_to_file(study=hand_study, fmt=fmt, path=path)
    data = path.read_bytes()
    assert (written.size, written.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    if fmt == "parquet":
        direct = tmp_path / "direct.parquet"
        export_parquet(study=hand_study, sink=direct)
        assert parquet_tables(path) == parquet_tables(direct)
    elif fmt == "csv":
        assert unzip(data) == unzip(b"".join(export_csv(study=hand_study)))
    else:
        assert data == "".join(export_jsonl(study=hand_study)).encode("utf-8")
    assert not list(tmp_path.glob("*.part")) and not list(tmp_path.glob(".*.part"))


def test_an_export_that_dies_midway_leaves_the_earlier_file_and_no_partial_one(
    hand_study, tmp_path
):
    path = tmp_path / "out.jsonl"
    path.write_text("an earlier complete export\n")

    def dies(done: int) -> None:
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        export_to_file(study=hand_study, fmt="jsonl", path=path, progress=dies)
    assert path.read_text() == "an earlier complete export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]
