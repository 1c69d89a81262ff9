"""Backup and restore of a mined study: the JSONL export carries, as additive fields
(docs/data-format.md), what the report reads and the miner wrote beyond the v1 contract —
token ids, §4 over every key, the mining definitions, the study's shape, the keys'
statistics and perturbation, the prefixes' suffixes — so that a mined study exported and
imported under another name gives the same report, section by section.

The additive fields are validated line by line, like the contract's own."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotate.imports import ImportFileError
from annotate.models import (
    Annotation,
    GoldAnnotation,
    Key,
    KeyExample,
    Pattern,
    Study,
    TriggerPrefix,
)
from annotate.permissions import CURATOR_GROUP
from annotate.services.accounts import user_create_annotator
from annotate.services.annotations import (
    annotation_get_or_create_for,
    annotation_save,
    annotation_submit,
)
from annotate.services.batches import assignment_create, batch_create
from annotate.services.patterns import pattern_create
from annotate.services.studies import study_update
from reports.exports import export_jsonl
from reports.imports.load import study_import
from reports.report import report_build
from reports.selectors.report_filter import ReportFilter

# The tiny GPT-2 saved to disk and a corpus of 200 sentences (tests/mining/conftest.py).
from tests.mining.conftest import tiny_corpus, tiny_gpt2_dir  # noqa: F401
from tests.reports.roundtrip import as_file, export_lines, gold_for, in_group, study_rows

pytestmark = pytest.mark.django_db


def renamed(lines: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    out = json.loads(json.dumps(lines))
    for line in out:
        line["study"]["name"] = name
    return out


def _annotate(study: Study) -> None:
    """Two annotators through the services: a batch of every key, given to both; ann
    submits every key, ben leaves his last key in draft, and their patterns differ."""
    keys = list(Key.objects.filter(study=study).order_by("layer", "index"))
    batch = batch_create(study=study, name="all", keys=keys)
    ann = user_create_annotator(username="ann", password=None)
    ben = user_create_annotator(username="ben", password=None)
    for user in (ann, ben):
        assignment_create(batch=batch, annotator=user)
    for k, key in enumerate(keys):
        prefixes = list(key.prefixes.order_by("rank"))
        n = len(prefixes)
        work = {
            ann: [("shallow", prefixes[:3]), ("semantic", prefixes[n - 3 :])],
            ben: [("shallow+semantic", prefixes[k % 2 : k % 2 + 3])] if k % 3 else [],
        }
        for user, patterns in work.items():
            annotation = annotation_get_or_create_for(key=key, annotator=user)
            for p, (kind, covered) in enumerate(patterns):
                annotation = pattern_create(
                    annotation=annotation,
                    actor=user,
                    description=f"{kind} pattern {p} of {key}",
                    kind=kind,
                    prefixes=covered,
                    version=annotation.version,
                ).annotation
            if k % 2 == 0:
                annotation = annotation_save(
                    annotation=annotation,
                    actor=user,
                    note=f"={user.username}'s note on {key}\nsecond line",
                    version=annotation.version,
                )
            if user is ben and k == len(keys) - 1:
                continue  # a draft: the report leaves it out unless submitted_only=False
            annotation_submit(annotation=annotation, actor=user, version=annotation.version)
    _time_checks_and_gold(keys)


def _time_checks_and_gold(keys: list[Key]) -> None:
    """The study workflow's columns: active time and guideline versions on the
    annotations, a check annotation (cleo's, on the first key), and gold on the first two
    keys: one submitted check key by cora with a pattern adopted from ann, a written one
    and one adopted from ben whose source pattern is gone; one draft gold without a
    curator."""
    for n, annotation in enumerate(Annotation.objects.filter(key__in=keys).order_by("id")):
        Annotation.objects.filter(pk=annotation.pk).update(
            active_seconds=12.5 * n, guideline_version=None if n % 3 == 0 else 1 + n % 2
        )
    first, second = keys[0], keys[1]
    prefixes = list(first.prefixes.order_by("rank"))
    cleo = user_create_annotator(username="cleo", password=None)
    check = Annotation.objects.create(key=first, annotator=cleo, status="submitted", is_check=True)
    pattern = Pattern.objects.create(annotation=check, description="check", kind="semantic")
    pattern.prefixes.set(prefixes[:3])
    cora = in_group(get_user_model().objects.create(username="cora"), CURATOR_GROUP)
    ranks = [p.rank for p in prefixes]
    gold = gold_for(
        first,
        curator=cora,
        patterns=[
            ("semantic", ranks[-3:], "adopted", _annotation_of(first, "ann"), -1),
            ("shallow", ranks[:3], "written", None, None),
            ("shallow+semantic", ranks[1:4], "adopted", _annotation_of(first, "ben"), None),
        ],
        status="submitted",
        note="curated",
        version=4,
        is_check=True,
    )
    GoldAnnotation.objects.filter(pk=gold.pk).update(submitted_at=gold.updated_at)
    GoldAnnotation.objects.create(key=second, status="draft")


def _annotation_of(key: Key, username: str) -> Annotation:
    return Annotation.objects.get(key=key, annotator__username=username, is_check=False)


@pytest.fixture
def mined_study(settings, tmp_path, tiny_gpt2_dir, tiny_corpus):  # noqa: F811
    """A study mined by the real miner (``manage.py mine``): 2 keys in each of the tiny
    GPT-2's 2 layers, top 5, sentences cut at 6 tokens (so some next tokens are unknown),
    with §3.2's perturbation; §4 is counted over all 96 keys. Annotated by two people."""
    settings.DATA_DIR = tmp_path / "data"
    # The model and the corpus lie in tmp_path: the only folder mining may read here.
    settings.FFKV_CORPUS_ROOTS = settings.FFKV_MODEL_ROOTS = [tmp_path]
    call_command(
        "mine",
        model=str(tiny_gpt2_dir),
        corpus=str(tiny_corpus),
        sentences="lines",
        study="tiny mined",
        keys_per_layer=2,
        top_k=5,
        max_tokens=6,
        perturb=True,
    )
    study = Study.objects.get(name="tiny mined")
    study_update(study=study, show_value_tokens=True)
    _annotate(study)
    return study


def _without_identity(report: dict[str, Any]) -> dict[str, Any]:
    """The report less what differs by design: the study's id and name, and the §5
    sections, which no export carries (docs/data-format.md, "What an export leaves out")."""
    return {
        **{k: v for k, v in report.items() if k not in {"composition", "sparsity"}},
        "study": {k: v for k, v in report["study"].items() if k not in {"id", "name"}},
    }


def test_a_mined_study_exported_and_imported_gives_the_same_report(mined_study):
    lines = export_lines(mined_study)
    result = study_import(file=as_file(lines), study_name="tiny restored")
    restored = result.study
    assert (result.keys, result.annotations, result.golds) == (4, 9, 2)

    for flt in (ReportFilter(), ReportFilter(submitted_only=False), ReportFilter(layers=(2,))):
        before = report_build(study=mined_study, flt=flt, replicates=50)
        after = report_build(study=restored, flt=flt, replicates=50)
        assert before["study"]["name"] == "tiny mined"
        assert after["study"]["name"] == "tiny restored"
        assert _without_identity(after) == _without_identity(before)

    # The §5 sections stay with the mined study: the import's report says they are not
    # computed, and its own composition job would have no model run to read.
    original = report_build(study=mined_study, replicates=50)
    assert original["sparsity"]["layers"]
    report = report_build(study=restored, replicates=50)
    assert report["sparsity"]["layers"] == [] and report["composition"]["layers"] == []
    assert report["composition"]["reason"].startswith("Not computed yet")
    # The sections that the v1 contract alone cannot give back are there, and not empty.
    every_key = report["value_agreement_every_key"]
    assert every_key["applicable"], every_key
    assert [row["n_keys"] for row in every_key["layers"]] == [48, 48]
    assert report["value_agreement"]["overall"]["n_keys"] == 4
    assert report["value_agreement"]["vocab_size"] == mined_study.vocab_size > 0
    assert report["perturbation"]["overall"]["n_keys"] > 0
    assert report["definitions"]["mining"] == mined_study.mining_definitions["text"]

    # And what the report does not read comes back too: the export of the import is the
    # export of the original (the database rows, less ids, name and timestamps).
    assert renamed(export_lines(restored), "x") == renamed(lines, "x")
    fields = ("n_layers", "d_ff", "is_causal", "vocab_size", "show_value_tokens")
    assert [getattr(restored, f) for f in fields] == [getattr(mined_study, f) for f in fields]
    assert restored.value_agreement == mined_study.value_agreement
    assert restored.mining_definitions == mined_study.mining_definitions
    key_fields = (
        "layer",
        "index",
        "density",
        "max_coefficient",
        "mean_coefficient",
        "histogram",
        "value_top_tokens",
        "value_top_token_ids",
        "perturbation",
    )
    prefix_fields = (
        "key__layer",
        "key__index",
        "rank",
        "coefficient",
        "text",
        "trigger_token",
        "trigger_token_id",
        "next_token",
        "next_token_id",
        "suffix",
        "sentence",
        "sentence_index",
        "position",
    )

    def rows(model, study, names):
        return list(model.objects.filter(**study).order_by(*names[:3]).values_list(*names))

    assert rows(Key, {"study": restored}, key_fields) == rows(
        Key, {"study": mined_study}, key_fields
    )
    assert rows(TriggerPrefix, {"key__study": restored}, prefix_fields) == rows(
        TriggerPrefix, {"key__study": mined_study}, prefix_fields
    )
    # The miner cut sentences at 6 tokens: unknown next tokens went out as null, came back.
    assert TriggerPrefix.objects.filter(key__study=restored, next_token_id=-2).exists()
    assert Annotation.objects.filter(key__study=restored, status="draft").count() == 1

    # Every column of every annotation and pattern came back: the note, the version, the
    # created, updated and submitted times, and each pattern's description, kind,
    # prefixes, place in the list and times. A column added to
    # either model later is compared as well, so it cannot be left out of the export.
    before, after = study_rows(mined_study), study_rows(restored)
    assert after == before
    original = before["annotations"]
    assert sum(bool(row["note"]) for row in original) == 4
    assert {row["version"] for row in original} > {1}
    assert sum(len(row["patterns"]) for row in original) == 11
    # The active time, guideline versions and check flag (above), and every column of the
    # gold annotations and their patterns, an adopted one's source pattern the imported
    # copy of ann's pattern.
    assert {row["is_check"] for row in original} == {True, False}
    assert len({row["active_seconds"] for row in original}) == 8  # cleo: 0.0 as ann's first
    assert {row["guideline_version"] for row in original} == {None, 1, 2}
    sources = [p["source_pattern"] for p in before["golds"][0]["patterns"]]
    assert sources[0] is not None and sources[0][2] == "ann"
    assert sources[1:] == [None, None]
    assert [g["is_check"] for g in before["golds"]] == [True, False]
    # And every column of the prefixes and of the miner's other stored examples
    # (docs/evidence.md): held-out ranks, both random sets, the band samples, each with
    # its per-token coefficients.
    assert {row["kind"] for row in before["examples"]} == set(KeyExample.Kind.values)
    assert all(row["tokens"] for row in before["prefixes"] + before["examples"])


# --- the additive fields are validated ---------------------------------------------------


@pytest.fixture
def lines(hand_study) -> list[dict[str, Any]]:
    """hand_study's export, with §4 counts over every key and mining definitions, renamed
    so that it imports beside the original."""
    hand_study.value_agreement = {
        "format": "ffkv.value-agreement/v1",
        "vocab_size": 100,
        "variants": ["without_final_norm"],
        "final_norm": None,
        "layers": [
            {
                "layer": 1,
                "n_keys": 8,
                "next_end": 1,
                "next_unknown": 1,
                "next_token": {"without_final_norm": 2},
                "trigger_token": {"without_final_norm": 3},
            }
        ],
    }
    hand_study.mining_definitions = {"text": "m_i after the activation", "checkpoint_note": None}
    hand_study.save()
    return renamed(export_lines(hand_study), "hand copy")


def test_the_export_writes_the_additive_fields(lines, hand_study):
    # Each line is json.dumps of its object (the study's part is serialised once).
    for text in "".join(export_jsonl(study=hand_study)).splitlines():
        assert text == json.dumps(json.loads(text), ensure_ascii=False)
    first = lines[0]
    assert first["study"] == {
        "name": "hand copy",
        "model": "gpt2",
        "corpus": "builtin:wiki-vital",
        "top_k": 25,
        "seed": 0,
        "n_layers": 2,
        "d_ff": 8,
        "is_causal": True,
        "vocab_size": 100,
        "show_value_tokens": False,
        "value_agreement": hand_study.value_agreement,
        "mining_definitions": hand_study.mining_definitions,
    }
    assert first["key"]["value_top_token_ids"] == [1001, 5]
    assert first["key"]["perturbation"] == {"first": 0.5, "last": 0.1, "random": 0.2}
    assert {"density", "max_coefficient", "mean_coefficient", "histogram"} <= set(first["key"])
    prefix = first["prefixes"][0]
    assert (prefix["trigger_token_id"], prefix["next_token_id"]) == (1, 1001)
    assert prefix["suffix"] == " and the rest."


def test_an_import_keeps_the_additive_fields(lines, hand_study):
    study = study_import(file=as_file(lines)).study
    assert study.value_agreement == hand_study.value_agreement
    assert study.mining_definitions == hand_study.mining_definitions
    assert (study.vocab_size, study.n_layers, study.d_ff) == (100, 2, 8)
    key = Key.objects.get(study=study, layer=1)
    assert key.value_top_token_ids == [1001, 5]
    assert key.perturbation == {"first": 0.5, "last": 0.1, "random": 0.2}
    assert list(key.prefixes.order_by("rank").values_list("trigger_token_id", flat=True)) == [
        1,
        2,
        3,
        4,
        5,
    ]
    before, after = report_build(study=hand_study), report_build(study=study)
    assert _without_identity(after) == _without_identity(before)


def test_a_file_without_the_additive_fields_imports_as_before(lines):
    for line in lines:
        for name in (
            "n_layers",
            "d_ff",
            "is_causal",
            "vocab_size",
            "show_value_tokens",
            "value_agreement",
            "mining_definitions",
        ):
            del line["study"][name]
        for name in (
            "density",
            "max_coefficient",
            "mean_coefficient",
            "histogram",
            "value_top_token_ids",
            "perturbation",
        ):
            del line["key"][name]
        for prefix in line["prefixes"]:
            for name in ("trigger_token_id", "next_token_id", "suffix"):
                del prefix[name]
    study = study_import(file=as_file(lines)).study
    assert (study.vocab_size, study.value_agreement, study.mining_definitions) == (0, {}, {})
    assert (study.n_layers, study.d_ff) == (2, 8)  # the largest layer, the largest index + 1
    prefix = TriggerPrefix.objects.get(key__study=study, key__layer=1, rank=1)
    assert (prefix.trigger_token_id, prefix.next_token_id) == (-1, -1)
    assert prefix.suffix == " and the rest."  # the sentence after the prefix's text
    key = prefix.key
    assert (key.value_top_token_ids, key.perturbation, key.histogram) == ([], {}, {})


def _set(lines: list[dict[str, Any]], path: str, value: Any) -> None:
    """Set ``path`` (dots and [i]) in every line's study, or in the second line's rest."""
    parts = path.replace("[", ".").replace("]", "").split(".")
    targets = lines if parts[0] == "study" else lines[1:2]
    for line in targets:
        node: Any = line
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        last = parts[-1]
        node[int(last) if last.isdigit() else last] = value


# (path, bad value, the line and field that the first error names, part of its message)
BAD_FIELDS = [
    ("study.n_layers", "2", 1, "study.n_layers", "must be an integer"),
    ("study.n_layers", 1, 2, "key.layer", "must be at most study.n_layers (1)"),
    ("study.d_ff", 5, 1, "key.index", "must be below study.d_ff (5)"),
    ("study.is_causal", 1, 1, "study.is_causal", "must be true or false"),
    ("study.show_value_tokens", None, 1, "study.show_value_tokens", "must be true or false"),
    ("study.vocab_size", -1, 1, "study.vocab_size", "must be between 0 and 2147483647"),
    ("study.mining_definitions", [], 1, "study.mining_definitions", "must be an object"),
    (
        "study.mining_definitions.text",
        5,
        1,
        "study.mining_definitions.text",
        "must be a string or null",
    ),
    ("study.value_agreement", "x", 1, "study.value_agreement", "must be an object"),
    (
        "study.value_agreement.format",
        "v2",
        1,
        "study.value_agreement",
        "format must be 'ffkv.value-agreement/v1'",
    ),
    (
        "study.value_agreement.layers[0].next_token.without_final_norm",
        7,
        1,
        "study.value_agreement",
        "layers[0].next_token.without_final_norm exceeds its keys",
    ),
    (
        "study.value_agreement.layers[0].layer",
        0,
        1,
        "study.value_agreement",
        "layers[0].layer must be a new layer, from 1",
    ),
    (
        "study.value_agreement.layers[0].layer",
        3,
        1,
        "study.value_agreement.layers[0].layer",
        "must be at most study.n_layers (2)",
    ),
    (
        "study.value_agreement.vocab_size",
        99,
        1,
        "study.value_agreement.vocab_size",
        "must equal study.vocab_size (100)",
    ),
    ("study.value_agreement.extra", 1, 1, "study.value_agreement.extra", "unknown field"),
    ("key.value_top_token_ids", [1, 2], 2, "key.value_top_token_ids", "one id per"),
    ("key.value_top_token_ids", [-1], 2, "key.value_top_token_ids[0]", "between 0 and"),
    ("key.density", 1.5, 2, "key.density", "must be between 0 and 1"),
    ("key.max_coefficient", "1", 2, "key.max_coefficient", "must be a finite number"),
    ("key.histogram", [], 2, "key.histogram", "must be an object"),
    ("key.histogram", {"edges": [0.0], "counts": [1]}, 2, "key.histogram.counts", "one more"),
    (
        "key.histogram",
        {"edges": [1.0, 0.0], "counts": [1, 2, 3]},
        2,
        "key.histogram.edges",
        "must ascend",
    ),
    ("key.histogram", {"counts": []}, 2, "key.histogram.edges", "required field missing"),
    ("key.perturbation", {"middle": 0.1}, 2, "key.perturbation.middle", "unknown field"),
    ("key.perturbation", {"first": "x"}, 2, "key.perturbation.first", "finite number or null"),
    ("prefixes[0].trigger_token_id", -2, 2, "prefixes[0].trigger_token_id", "between -1"),
    ("prefixes[0].next_token_id", -2, 2, "prefixes[0].next_token_id", "-2 (unknown) only"),
    ("prefixes[0].next_token", None, 2, "prefixes[0].next_token_id", "must be -2 where"),
    ("prefixes[0].suffix", 3, 2, "prefixes[0].suffix", "must be a string"),
]


@pytest.mark.parametrize(("path", "value", "line", "field", "message"), BAD_FIELDS, ids=repr)
def test_a_bad_additive_field_names_its_line_and_field_and_writes_nothing(
    lines, path, value, line, field, message
):
    _set(lines, path, value)
    studies = Study.objects.count()
    with pytest.raises(ImportFileError) as info:
        study_import(file=as_file(lines))
    first = info.value.errors[0]
    assert first.startswith(f"line {line}: {field}: "), info.value.errors
    assert message in first, first
    assert Study.objects.count() == studies


def test_value_agreement_counts_on_an_encoder_are_refused(lines):
    _set(lines, "study.is_causal", False)
    with pytest.raises(ImportFileError) as info:
        study_import(file=as_file(lines))
    assert info.value.errors[0] == (
        "line 1: study.value_agreement: must be empty for an encoder (is_causal false)"
    )
