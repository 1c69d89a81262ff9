"""Evidence beyond the top-k in the export and the import (docs/evidence.md,
docs/data-format.md): per-token coefficients on every stored example, a key's held-out
sets and samples, and each pattern's rule, scores and source. Additive v1 fields: an
export carries them in JSONL, CSV and Parquet; an import validates and keeps each one,
a bad one naming its line and field and writing nothing; a file without them imports as
before."""

from __future__ import annotations

import csv
import io
import json
import random
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.imports import ImportFileError
from annotate.models import KeyExample, Pattern, Study, TriggerPrefix
from reports.contract.records import SCORE_NAMES
from reports.exports import EXAMPLE_COLUMNS, export_csv, export_parquet
from reports.imports.load import study_import
from reports.imports.messages import (
    BAND_NOT_BELOW,
    HELDOUT_RANK_RANGE,
    HELDOUT_RANKS_NOT_CONTIGUOUS,
    MISSING,
    NOT_IN_BAND,
    NOT_LIST,
    NOT_NUMBER,
    NOT_STRING,
    OUT_OF_RANGE,
    RANDOM_HAS_BAND,
    RANK_REPEATED,
    RULE_ON_SEMANTIC,
    SAMPLE_KIND_UNKNOWN,
    SCORE_NOT_UNIT,
    SENTENCE_TWICE,
    SOURCE_NOT_ANNOTATORS,
    TOKEN_COUNT,
    TOKENS_PAIR,
    TOO_LONG,
    TOO_MANY_HELDOUT,
    UNKNOWN_FIELD,
)
from reports.report import report_build
from tests.factories import SuggestionFactory, key_examples, key_with_prefixes
from tests.reports.roundtrip import as_file, export_lines, study_rows, with_evidence
from tests.reports.test_export import parquet_tables, unzip
from tests.reports.test_gold_exchange import gold_study  # noqa: F401

pytestmark = pytest.mark.django_db

SETS = ("heldout", "heldout_random", "samples")


@pytest.fixture
def evidence_study(gold_study):  # noqa: F811
    """gold_study (two keys, annotations, gold, a check annotation) with every evidence
    field on its first key: 25 held-out examples, 25 held-out random ones, 25 band
    samples and 25 random ones, tokens on every prefix, a rule, scores and an accepted
    suggestion's source on its patterns, a rule and scores on a gold pattern."""
    return with_evidence(gold_study)


def renamed(lines: list[dict[str, Any]], name: str = "copy") -> list[dict[str, Any]]:
    out = json.loads(json.dumps(lines))
    for line in out:
        line["study"]["name"] = name
    return out


def _refused(lines: list[dict[str, Any]]) -> list[str]:
    """The import's errors for ``lines``, having checked that it wrote nothing: no study,
    no stored example, no account."""
    counts = (Study.objects.count(), KeyExample.objects.count(), get_user_model().objects.count())
    with pytest.raises(ImportFileError) as info:
        study_import(file=as_file(renamed(lines)))
    after = (Study.objects.count(), KeyExample.objects.count(), get_user_model().objects.count())
    assert after == counts
    return info.value.errors


def test_the_export_carries_every_evidence_field(evidence_study):
    first, second = export_lines(evidence_study)
    assert [len(first[name]) for name in SETS] == [25, 25, 50]
    assert [x["rank"] for x in first["heldout"]] == list(range(26, 51))
    assert all("rank" not in x for name in ("heldout_random", "samples") for x in first[name])
    samples = first["samples"]
    assert [(s["kind"], s["band"]) for s in samples] == [
        *(("band", b) for b in range(1, 6) for _ in range(5)),
        *(("random", None) for _ in range(25)),
    ]
    band_1 = samples[0]
    assert (band_1["band_low"], band_1["band_high"]) == (0.0, 0.8)
    assert band_1["band_low"] < band_1["coefficient"] <= band_1["band_high"]
    assert samples[-1]["band_low"] is samples[-1]["band_high"] is None
    stored = KeyExample.objects.get(key__study=evidence_study, kind="heldout", rank=26)
    assert first["heldout"][0]["tokens"] == stored.tokens
    assert first["heldout"][0]["token_coefficients"] == stored.token_coefficients
    prefix = TriggerPrefix.objects.get(key__study=evidence_study, key__layer=1, rank=2)
    assert first["prefixes"][1]["tokens"] == prefix.tokens != []
    assert first["prefixes"][1]["token_coefficients"] == prefix.token_coefficients
    alice = first["annotations"][0]["patterns"]
    assert (alice[0]["source"], alice[0]["rule"]) == (
        "suggestion",
        {"type": "token", "value": "t1"},
    )
    assert alice[0]["scores"] == {
        "detection": 0.75,
        "embedding": 0.625,
        "shuffled_detection": 0.5,
        "shuffled_embedding": 0.4375,
    }
    assert (alice[1]["source"], alice[1]["rule"], alice[1]["scores"]["embedding"]) == (
        "written",
        None,
        0.5,
    )
    gold = first["gold"]["patterns"][1]
    assert gold["rule"] == {"type": "suffix", "value": "ing"}
    assert gold["scores"]["shuffled_embedding"] is None
    # The second key has none: empty lists, no rule, {} until scored.
    assert [second[name] for name in SETS] == [[], [], []]
    bob = second["annotations"][1]["patterns"]
    assert [(p["source"], p["rule"], p["scores"]) for p in bob] == [("written", None, {})]
    assert [(p["tokens"], p["token_coefficients"]) for p in second["prefixes"]] == [([], [])] * 5


def test_an_import_keeps_every_evidence_field_and_exports_it_again(evidence_study):
    lines = export_lines(evidence_study)
    result = study_import(file=as_file(renamed(lines)), study_name="copy")
    assert result.examples == 100
    # Every column of the examples, prefixes, patterns and gold patterns comes back.
    original, copy = study_rows(evidence_study), study_rows(result.study)
    assert copy == original
    assert len(original["examples"]) == 100
    assert {row["kind"] for row in original["examples"]} == set(KeyExample.Kind.values)
    assert export_lines(result.study) == renamed(lines)


def test_an_import_queues_the_scores_of_its_study_and_the_command_counts_its_examples(
    evidence_study, tmp_path, django_capture_on_commit_callbacks
):
    from annotate.services import scores as score_service

    path = tmp_path / "copy.jsonl"
    path.write_bytes(as_file(renamed(export_lines(evidence_study))).getvalue())
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        call_command("import", str(path), stdout=out)
    copy = Study.objects.get(name="copy")
    sent = [c.args[0] for c in callbacks if getattr(c, "func", None) is score_service._send]
    assert [(k["study_id"], k["missing_only"]) for k in sent] == [(copy.pk, True)]
    assert ", 100 held-out examples and samples," in out.getvalue()


def test_an_imported_study_reports_the_same_numbers(evidence_study):
    copy = study_import(file=as_file(renamed(export_lines(evidence_study)))).study

    def numbers(report: dict[str, Any]) -> dict[str, Any]:
        return {**report, "study": {k: v for k, v in report["study"].items() if k != "id"}}

    before = report_build(study=evidence_study, replicates=50)
    after = report_build(study=copy, replicates=50)
    before["study"]["name"] = after["study"]["name"]
    assert numbers(after) == numbers(before)


def test_an_accepted_suggestion_imports_as_one_without_its_suggestion_row(evidence_study):
    pattern = Pattern.objects.get(source="suggestion", annotation__key__study=evidence_study)
    Pattern.objects.filter(pk=pattern.pk).update(
        suggestion=SuggestionFactory(key=pattern.annotation.key)
    )
    copy = study_import(file=as_file(renamed(export_lines(evidence_study)))).study
    (imported,) = Pattern.objects.filter(annotation__key__study=copy, source="suggestion")
    assert (imported.description, imported.suggestion_id) == (pattern.description, None)


def test_the_samples_come_back_by_band_then_random_whatever_the_files_order(evidence_study):
    lines = renamed(export_lines(evidence_study))
    shuffled = json.loads(json.dumps(lines))
    random.Random(7).shuffle(shuffled[0]["samples"])
    assert shuffled[0]["samples"] != lines[0]["samples"]
    copy = study_import(file=as_file(shuffled), study_name="copy").study
    again = export_lines(copy)
    # Within a band (and among the random ones) the file's order is the order kept.
    for kind_band in {(s["kind"], s["band"]) for s in lines[0]["samples"]}:
        of = [s for s in shuffled[0]["samples"] if (s["kind"], s["band"]) == kind_band]
        assert [s for s in again[0]["samples"] if (s["kind"], s["band"]) == kind_band] == of
    assert [(s["kind"], s["band"]) for s in again[0]["samples"]] == [
        (s["kind"], s["band"]) for s in lines[0]["samples"]
    ]


def test_a_file_without_the_evidence_fields_imports_as_before(evidence_study):
    lines = renamed(export_lines(evidence_study))
    for line in lines:
        for name in SETS:
            del line[name]
        for prefix in line["prefixes"]:
            del prefix["tokens"], prefix["token_coefficients"]
        for annotation in line["annotations"]:
            for pattern in annotation["patterns"]:
                del pattern["source"], pattern["rule"], pattern["scores"]
        for pattern in line["gold"]["patterns"] if line["gold"] else []:
            del pattern["rule"], pattern["scores"]
    result = study_import(file=as_file(lines))
    assert result.examples == 0
    assert not KeyExample.objects.filter(key__study=result.study).exists()
    prefixes = TriggerPrefix.objects.filter(key__study=result.study)
    assert [(p.tokens, p.token_coefficients) for p in prefixes] == [([], [])] * 10
    patterns = Pattern.objects.filter(annotation__key__study=result.study)
    assert {(p.source, p.rule, json.dumps(p.scores)) for p in patterns} == {("written", None, "{}")}


def _pattern(lines: list[dict[str, Any]], gold: bool = False) -> dict[str, Any]:
    """The first line's first shallow pattern (alice's, or the gold's)."""
    patterns = lines[0]["gold"]["patterns"] if gold else lines[0]["annotations"][0]["patterns"]
    return next(p for p in patterns if p["kind"] == "shallow")


# (what to break, the field's path, the message's start); each breaks one value.
BAD = {
    "heldout not a list": (
        lambda ls: ls[0].update(heldout={"rank": 26}),
        "heldout",
        NOT_LIST,
    ),
    "heldout rank of the top-k": (
        lambda ls: ls[0]["heldout"][0].update(rank=25),
        "heldout[0].rank",
        HELDOUT_RANK_RANGE.format(lo=26, hi=50),
    ),
    "heldout rank past 2·top_k": (
        lambda ls: ls[0]["heldout"][3].update(rank=51),
        "heldout[3].rank",
        HELDOUT_RANK_RANGE.format(lo=26, hi=50),
    ),
    "heldout rank twice": (
        lambda ls: ls[0]["heldout"][1].update(rank=26),
        "heldout[1].rank",
        RANK_REPEATED.format(rank=26),
    ),
    "heldout ranks with a gap": (
        lambda ls: ls[0]["heldout"].pop(0),
        "heldout",
        HELDOUT_RANKS_NOT_CONTIGUOUS.format(lo=26),
    ),
    "more heldout than top_k": (
        lambda ls: ls[0]["heldout"].append(dict(ls[0]["heldout"][0], rank=51)),
        "heldout",
        TOO_MANY_HELDOUT.format(top_k=25, n=26),
    ),
    "heldout without its text": (
        lambda ls: ls[0]["heldout"][2].pop("text"),
        "heldout[2].text",
        MISSING,
    ),
    "heldout_random with a rank": (
        lambda ls: ls[0]["heldout_random"][4].update(rank=3),
        "heldout_random[4].rank",
        UNKNOWN_FIELD,
    ),
    "tokens not a list": (
        lambda ls: ls[0]["prefixes"][0].update(tokens="a b"),
        "prefixes[0].tokens",
        NOT_LIST,
    ),
    "a token not a string": (
        lambda ls: ls[0]["heldout"][0]["tokens"].__setitem__(1, 5),
        "heldout[0].tokens[1]",
        NOT_STRING,
    ),
    "a token too long": (
        lambda ls: ls[0]["samples"][0]["tokens"].__setitem__(0, "x" * 201),
        "samples[0].tokens[0]",
        TOO_LONG.format(n=200),
    ),
    "a coefficient not a number": (
        lambda ls: ls[0]["heldout_random"][0]["token_coefficients"].__setitem__(2, "0.5"),
        "heldout_random[0].token_coefficients[2]",
        NOT_NUMBER,
    ),
    "a coefficient infinite": (
        lambda ls: ls[0]["prefixes"][1]["token_coefficients"].__setitem__(0, float("inf")),
        "prefixes[1].token_coefficients[0]",
        NOT_NUMBER,
    ),
    "one coefficient fewer than tokens": (
        lambda ls: ls[0]["prefixes"][2]["token_coefficients"].pop(),
        "prefixes[2].token_coefficients",
        TOKEN_COUNT.format(n=3, m=2),
    ),
    "tokens without their coefficients": (
        lambda ls: ls[0]["samples"][30].pop("token_coefficients"),
        "samples[30].token_coefficients",
        TOKENS_PAIR,
    ),
    "a sample of an unknown kind": (
        lambda ls: ls[0]["samples"][6].update(kind="top"),
        "samples[6].kind",
        SAMPLE_KIND_UNKNOWN,
    ),
    "band 0": (
        lambda ls: ls[0]["samples"][0].update(band=0),
        "samples[0].band",
        OUT_OF_RANGE.format(lo=1, hi=5),
    ),
    "band 6": (
        lambda ls: ls[0]["samples"][24].update(band=6),
        "samples[24].band",
        OUT_OF_RANGE.format(lo=1, hi=5),
    ),
    "a band sample without its band": (
        lambda ls: ls[0]["samples"][1].update(band=None),
        "samples[1].band",
        "must be an integer",
    ),
    "band_low not below band_high": (
        lambda ls: ls[0]["samples"][5].update(band_low=1.6),
        "samples[5].band_low",
        BAND_NOT_BELOW.format(high=1.6),
    ),
    "a coefficient outside its band": (
        lambda ls: ls[0]["samples"][7].update(coefficient=3.9),
        "samples[7].coefficient",
        NOT_IN_BAND.format(low=0.8, high=1.6),
    ),
    "a random sample with a band": (
        lambda ls: ls[0]["samples"][40].update(band=2),
        "samples[40].band",
        RANDOM_HAS_BAND,
    ),
    "a held-out sentence twice": (
        lambda ls: ls[0]["heldout"][5].update(sentence_index=ls[0]["heldout"][2]["sentence_index"]),
        "heldout[5].sentence_index",
        SENTENCE_TWICE.format(index=10_003, where="heldout[2]"),
    ),
    "a sample repeating a top-k sentence": (
        lambda ls: ls[0]["samples"][26].update(
            sentence_index=ls[0]["prefixes"][3]["sentence_index"]
        ),
        "samples[26].sentence_index",
        SENTENCE_TWICE.format(index=4, where="prefixes[3]"),
    ),
    "a held-out random sentence among the samples": (
        lambda ls: ls[0]["heldout_random"][0].update(
            sentence_index=ls[0]["samples"][0]["sentence_index"]
        ),
        "heldout_random[0].sentence_index",
        SENTENCE_TWICE.format(index=30_001, where="samples[0]"),
    ),
    "an annotator's pattern adopted": (
        lambda ls: _pattern(ls).update(source="adopted"),
        "annotations[0].patterns[0].source",
        SOURCE_NOT_ANNOTATORS,
    ),
    "a rule of an unknown type": (
        lambda ls: _pattern(ls).update(rule={"type": "regex", "value": "t.*"}),
        "annotations[0].patterns[0].rule",
        "rule type must be one of token, ngram, suffix",
    ),
    "a rule with an empty value": (
        lambda ls: _pattern(ls).update(rule={"type": "token", "value": " "}),
        "annotations[0].patterns[0].rule",
        "a rule's value must be a non-empty string",
    ),
    "a rule on a semantic pattern": (
        lambda ls: ls[0]["annotations"][0]["patterns"][1].update(
            rule={"type": "token", "value": "t1"}
        ),
        "annotations[0].patterns[1].rule",
        RULE_ON_SEMANTIC,
    ),
    "a gold rule that is no object": (
        lambda ls: _pattern(ls, gold=True).update(rule="ing"),
        "gold.patterns[1].rule",
        "a rule is null or an object",
    ),
    "a score of an unknown name": (
        lambda ls: _pattern(ls)["scores"].update(accuracy=0.5),
        "annotations[0].patterns[0].scores.accuracy",
        UNKNOWN_FIELD,
    ),
    "a score above 1": (
        lambda ls: _pattern(ls)["scores"].update(detection=1.5),
        "annotations[0].patterns[0].scores.detection",
        SCORE_NOT_UNIT,
    ),
    "a gold score not a number": (
        lambda ls: _pattern(ls, gold=True)["scores"].update(embedding="high"),
        "gold.patterns[1].scores.embedding",
        SCORE_NOT_UNIT,
    ),
    "scores not an object": (
        lambda ls: _pattern(ls).update(scores=[0.5]),
        "annotations[0].patterns[0].scores",
        "must be an object",
    ),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_a_bad_evidence_value_names_its_line_and_field_and_writes_nothing(evidence_study, case):
    breaks, field, message = BAD[case]
    lines = export_lines(evidence_study)
    breaks(lines)
    errors = _refused(lines)
    assert errors[0].startswith(f"line 1: {field}: {message}"), errors


def test_the_csv_carries_the_examples_and_the_patterns_rules_and_scores(evidence_study):
    lines = export_lines(evidence_study)
    files = unzip(b"".join(export_csv(study=evidence_study)))
    tables = {
        name.removesuffix(".csv"): list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
        for name, body in files.items()
    }
    examples = tables["examples"]
    assert list(examples[0]) == list(EXAMPLE_COLUMNS)
    # Every stored example of every key, each set in the line's order.
    expected = [
        (str(line["key"]["index"]), name, x["text"], x["tokens"], x["token_coefficients"])
        for line in lines
        for name in ("prefixes", *SETS)
        for x in line[name]
    ]
    assert [
        (
            r["index"],
            r["set"],
            r["text"],
            json.loads(r["tokens"]),
            json.loads(r["token_coefficients"]),
        )
        for r in examples
    ] == expected
    assert len(examples) == 5 + 100 + 5
    band = next(r for r in examples if r["kind"] == "band")
    assert (band["band"], band["band_low"], band["band_high"], band["rank"]) == (
        "1",
        "0.0",
        "0.8",
        "",
    )
    heldout = next(r for r in examples if r["set"] == "heldout")
    assert (heldout["rank"], heldout["kind"], heldout["band"]) == ("26", "", "")
    rows = [r for r in tables["patterns"] if r["annotator"] == "alice" and r["layer"] == "1"]
    assert [
        (r["source"], r["rule_type"], r["rule_value"], *(r[n] for n in SCORE_NAMES)) for r in rows
    ] == [
        ("suggestion", "token", "t1", "0.75", "0.625", "0.5", "0.4375"),
        ("written", "", "", "", "0.5", "", ""),
    ]
    gold = [r for r in tables["patterns"] if r["gold"] == "True" and r["kind"] == "shallow"]
    assert [(r["rule_type"], r["rule_value"], r["detection"]) for r in gold] == [
        ("suffix", "ing", "1.0")
    ]


def test_the_parquet_tables_carry_them_typed(evidence_study, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "x.parquet.zip"
    export_parquet(study=evidence_study, sink=path)
    schema = pq.read_schema(io.BytesIO(unzip(path.read_bytes())["examples.parquet"]))
    assert schema.field("tokens").type.value_type == pa.string()
    assert schema.field("token_coefficients").type.value_type == pa.float64()
    tables = parquet_tables(path)
    examples = tables["examples.parquet"]
    lines = export_lines(evidence_study)
    assert [(r["set"], r["tokens"], r["token_coefficients"]) for r in examples] == [
        (name, x["tokens"], x["token_coefficients"])
        for line in lines
        for name in ("prefixes", *SETS)
        for x in line[name]
    ]
    random_one = next(r for r in examples if r["kind"] == "random")
    assert (random_one["band"], random_one["band_low"], random_one["rank"]) == (None, None, None)
    alice = next(
        r for r in tables["patterns.parquet"] if r["annotator"] == "alice" and r["layer"] == 1
    )
    assert (alice["rule_type"], alice["detection"], alice["shuffled_embedding"]) == (
        "token",
        0.75,
        0.4375,
    )


def test_export_queries_stay_ten_per_chunk_with_stored_examples(db):
    counts = []
    for n_keys in (2, 6):
        study = Study.objects.create(name=f"many {n_keys}", model_name="m", corpus="c")
        for k in range(n_keys):
            key_examples(key_with_prefixes(4, study=study, layer=1, index=k), top_k=3)
        with CaptureQueriesContext(connection) as ctx:
            lines = export_lines(study)
        assert [len(line["samples"]) for line in lines] == [50] * n_keys
        counts.append(len(ctx.captured_queries))
    assert counts == [10, 10]
