"""The JSONL v1 contract is declared once (``reports.contract``): the export writes
exactly its fields, in its order, at every level of a line; the CSV and Parquet tables
have its columns; the import takes its additive fields as optional; and
docs/data-format.md's tables are the ones it renders."""

from __future__ import annotations

import io
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command

from annotate.imports import KEY_ADDITIVE
from annotate.models import Key, KeyExample, KeyFlag, TriggerPrefix
from reports.contract import docs
from reports.contract.records import (
    ANNOTATION,
    FLAG,
    GOLD,
    GOLD_PATTERN,
    HELDOUT,
    HELDOUT_RANDOM,
    IF_SET,
    KEY,
    LEVELS,
    LINE,
    PATTERN,
    PREFIX,
    SAMPLE,
    STUDY,
    Level,
)
from reports.contract.tables import TABLES
from reports.exports import export_csv, export_parquet
from reports.imports.load import study_import
from tests.reports.roundtrip import as_file, export_lines, with_evidence
from tests.reports.test_export import unzip
from tests.reports.test_gold_exchange import gold_study  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def full_study(gold_study, bob):  # noqa: F811
    """gold_study (gold, adopted patterns, check annotations), a flag, a prefix with
    token bytes and every evidence field (stored examples, tokens, rules, scores): a
    study whose export writes every field of the contract."""
    key_a = Key.objects.filter(study=gold_study).order_by("layer", "index").first()
    KeyFlag.objects.create(key=key_a, annotator=bob, reason="tokenization", note="split")
    TriggerPrefix.objects.filter(key=key_a, rank=1).update(
        trigger_token_bytes="f09f", next_token_bytes="a6"
    )
    with_evidence(gold_study)
    KeyExample.objects.filter(key=key_a, order=1).update(
        trigger_token_bytes="e2", next_token_bytes="82ac"
    )
    return gold_study


def _objects(lines: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every object of the lines, by the contract's level."""
    out: dict[str, list[dict[str, Any]]] = {level.name: [] for level in LEVELS}
    for line in lines:
        out[LINE.name].append(line)
        out[STUDY.name].append(line["study"])
        out[KEY.name].append(line["key"])
        out[PREFIX.name] += line["prefixes"]
        out[HELDOUT.name] += line["heldout"]
        out[HELDOUT_RANDOM.name] += line["heldout_random"]
        out[SAMPLE.name] += line["samples"]
        out[ANNOTATION.name] += line["annotations"]
        for annotation in line["annotations"]:
            out[PATTERN.name] += annotation["patterns"]
        if line["gold"] is not None:
            out[GOLD.name].append(line["gold"])
            out[GOLD_PATTERN.name] += line["gold"]["patterns"]
        out[FLAG.name] += line["flags"]
    return out


def _written(level: Level, obj: dict[str, Any]) -> list[str]:
    """The contract's fields that ``obj`` must have, in the contract's order."""
    return [f.name for f in level.fields if f.written != IF_SET or f.name in obj]


def _off_contract(lines: list[dict[str, Any]]) -> list[str]:
    """Each object of the lines whose fields are not the contract's, in its order."""
    objects = _objects(lines)
    return [
        f"{level.name}: {list(obj)}"
        for level in LEVELS
        for obj in objects[level.name]
        if list(obj) != _written(level, obj)
    ]


def test_the_export_writes_the_contracts_fields_in_its_order_at_every_level(full_study):
    lines = export_lines(full_study)
    objects = _objects(lines)
    assert all(objects[level.name] for level in LEVELS), "a level of the study is empty"
    # A field the export writes but the contract lacks (or the reverse) fails here.
    assert _off_contract(lines) == []


def test_every_field_of_the_contract_is_written_by_the_export(full_study):
    objects = _objects(export_lines(full_study))
    for level in LEVELS:
        seen = {name for obj in objects[level.name] for name in obj}
        assert seen == set(level.names), level.name


@pytest.mark.parametrize(
    "level",
    [LINE, STUDY, KEY, PREFIX, HELDOUT, HELDOUT_RANDOM, SAMPLE, ANNOTATION, GOLD_PATTERN, FLAG],
    ids=lambda x: x.name,
)
def test_a_field_the_contract_lacks_is_caught(full_study, level):
    lines = export_lines(full_study)[:1]
    _objects(lines)[level.name][0]["undeclared"] = 1
    (off,) = _off_contract(lines)
    assert off.startswith(f"{level.name}: ") and off.endswith("'undeclared']")


def _type(field: Any) -> str:
    return str(getattr(field.type, "value_type", field.type))


def test_the_csv_and_parquet_tables_have_the_contracts_columns(full_study, tmp_path):
    csv_files = unzip(b"".join(export_csv(study=full_study)))
    sink = tmp_path / "study.parquet.zip"
    export_parquet(study=full_study, sink=sink)
    parquet_files = unzip(sink.read_bytes())
    for table in TABLES:
        header = csv_files[f"{table.name}.csv"].decode("utf-8").splitlines()[0]
        assert header.split(",") == list(table.names)
        schema = pq.read_schema(io.BytesIO(parquet_files[f"{table.name}.parquet"]))
        assert schema.names == list(table.names)
        # (Parquet names a list's item "element", Arrow "item": the items' type is compared.)
        assert [_type(f) for f in schema] == [_type(f) for f in table.arrow_schema()]


def test_the_writer_of_imported_keys_takes_the_contracts_additive_key_fields():
    assert set(KEY_ADDITIVE) == KEY.additive


def test_a_file_with_only_the_required_fields_imports(full_study):
    lines = export_lines(full_study)
    for line in lines:
        line["study"]["name"] = "only v1"
        for name in LINE.additive:
            del line[name]
        for level, objects in (
            (STUDY, [line["study"]]),
            (KEY, [line["key"]]),
            (PREFIX, line["prefixes"]),
            (ANNOTATION, line["annotations"]),
        ):
            for obj in objects:
                for name in level.additive & set(obj):
                    del obj[name]
        # An annotation made on a check key is one more annotator's in a v1 file.
        for annotation in line["annotations"]:
            for pattern in annotation["patterns"]:
                for name in PATTERN.additive & set(pattern):
                    del pattern[name]
    result = study_import(file=as_file(lines))
    assert result.keys == len(lines)


def test_the_data_format_page_holds_the_contracts_tables():
    text = docs.DOC.read_text(encoding="utf-8")
    assert docs.doc_rendered(text) == text, "run `manage.py contract --write`"
    for level in LEVELS:
        for field in level.fields:
            assert f"| `{field.name}` |" in text


def test_the_contract_command_fails_where_the_page_is_stale(tmp_path, monkeypatch):
    page = tmp_path / "data-format.md"
    page.write_text(f"# The data format\n\n{docs.BEGIN}\nold tables\n{docs.END}\n")
    monkeypatch.setattr("reports.management.commands.contract.DOC", page)
    with pytest.raises(CommandError, match="stale"):
        call_command("contract", "--check")
    call_command("contract", "--write")
    assert "old tables" not in page.read_text()
    call_command("contract", "--check")


def test_the_contract_command_refuses_a_page_without_its_markers(tmp_path, monkeypatch):
    page = tmp_path / "data-format.md"
    page.write_text("# The data format\n")
    monkeypatch.setattr("reports.management.commands.contract.DOC", page)
    with pytest.raises(CommandError, match="contract:begin"):
        call_command("contract", "--check")
