"""Exports: JSONL exactly as DESIGN §6's contract, CSV one row per prefix × annotator,
Parquet with the CSV's rows; streamed in chunks at a fixed cost in queries per chunk."""

from __future__ import annotations

import csv
import hashlib
import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import TriggerPrefix
from reports.exports import (
    CSV_COLUMNS,
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


def test_the_jsonl_export_is_exactly_the_contract(hand_study):
    lines = jsonl_lines(hand_study)
    assert len(lines) == 2
    first = lines[0]
    assert list(first) == ["schema", "study", "key", "prefixes", "annotations"]
    assert first["schema"] == "ffkv.annotations/v1"
    # The contract's fields, then the additive ones (DESIGN §6; see test_roundtrip_mined).
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
    }
    assert first["prefixes"][0]["trigger_token"] == " t1"
    assert first["prefixes"][0]["next_token"] == " n1"
    assert isinstance(first["prefixes"][0]["coefficient"], float)
    alice, bob = first["annotations"]
    assert set(alice) == {"annotator", "status", "patterns", "labels"}
    assert alice == {
        "annotator": "alice",
        "status": "submitted",
        "patterns": [
            {
                "description": alice["patterns"][0]["description"],
                "kind": "shallow",
                "prefix_ranks": [1, 2, 3],
            },
            {
                "description": alice["patterns"][1]["description"],
                "kind": "semantic",
                "prefix_ranks": [3, 4, 5],
            },
        ],
        "labels": ["shallow", "shallow", "shallow+semantic", "semantic", "semantic"],
    }
    assert bob["labels"] == ["shallow+semantic"] * 3 + ["not-covered"] * 2
    second = lines[1]
    assert second["key"]["layer"] == 2  # layers are numbered from 1, as stored
    assert [a["status"] for a in second["annotations"]] == ["submitted", "draft"]


def test_a_key_without_annotations_is_exported_with_an_empty_list(db):
    study = StudyFactory()
    key_with_prefixes(3, study=study, layer=1, index=0)
    (line,) = jsonl_lines(study)
    assert line["annotations"] == []
    assert len(line["prefixes"]) == 3


def csv_rows(study) -> list[dict]:
    return list(csv.DictReader(io.StringIO("".join(export_csv(study=study)))))


def test_the_csv_has_one_row_per_prefix_and_annotator(hand_study):
    rows = csv_rows(hand_study)
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert len(rows) == 2 * 5 * 2  # 2 keys × 5 prefixes × 2 annotators
    first = [r for r in rows if r["layer"] == "1" and r["rank"] == "3"]
    assert [(r["annotator"], r["label"], r["patterns"]) for r in first] == [
        ("alice", "shallow+semantic", "1;2"),
        ("bob", "shallow+semantic", "1"),
    ]


def test_parquet_holds_the_same_rows_as_the_csv(hand_study, tmp_path):
    path = tmp_path / "x.parquet"
    export_parquet(study=hand_study, sink=path)
    table = pq.read_table(path)
    assert table.column_names == list(CSV_COLUMNS)
    as_text = [
        {k: "" if v is None else str(v) for k, v in row.items()} for row in table.to_pylist()
    ]
    assert as_text == csv_rows(hand_study)


def test_a_cut_sentences_next_token_is_null_in_jsonl_empty_in_csv_and_null_in_parquet(
    hand_study, tmp_path
):
    # DESIGN §6: next_token is null where the sentence was cut (id -2, unknown), while the
    # end of a sentence keeps its "</s>" marker.
    TriggerPrefix.objects.filter(key__layer=1, rank=2).update(next_token=None, next_token_id=-2)
    TriggerPrefix.objects.filter(key__layer=1, rank=3).update(next_token="</s>", next_token_id=-1)
    prefixes = jsonl_lines(hand_study)[0]["prefixes"]
    assert [p["next_token"] for p in prefixes[:3]] == [" n1", None, "</s>"]
    rows = [r for r in csv_rows(hand_study) if r["layer"] == "1" and r["annotator"] == "alice"]
    assert [r["next_token"] for r in rows[:3]] == [" n1", "", "</s>"]
    path = tmp_path / "cut.parquet"
    export_parquet(study=hand_study, sink=path)
    table = pq.read_table(path).to_pylist()
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
    # JSONL (the import's source) and Parquet are no spreadsheets: they stay exact.
    (line,) = jsonl_lines(study)
    assert line["study"]["name"] == study.name
    assert {p["text"] for p in line["prefixes"]} == {f"{start}1+1 text"}
    assert line["prefixes"][5]["coefficient"] == -0.5
    assert [a["annotator"] for a in line["annotations"]] == [f"{start}eve", f"{start}zed"]
    assert {p["description"] for a in line["annotations"] for p in a["patterns"]} == {
        f"{start}SUM(A1)"
    }
    path = tmp_path / "f.parquet"
    export_parquet(study=study, sink=path)
    table = pq.read_table(path).to_pylist()
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
    assert counts[0] == counts[1] == 5
    study = _study(10)
    with CaptureQueriesContext(connection) as ctx:
        lines = jsonl_lines(study, chunk_size=4)
    # Chunks of 4, 4, 2: five queries each, in (layer, index) order across chunks.
    assert len(ctx.captured_queries) == 15
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
    assert out.read_bytes()[:4] == b"PAR1"
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
        assert pq.read_table(path).equals(pq.read_table(direct))
    else:
        writer = export_jsonl if fmt == "jsonl" else export_csv
        assert data == "".join(writer(study=hand_study)).encode("utf-8")
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
