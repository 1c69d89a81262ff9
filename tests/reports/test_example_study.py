"""fixtures/example-study.jsonl: it goes through the real import, a report can be built
from it, it was mined from fixtures/sentences.txt, and its demonstration labels are what
fixtures/make_example_study.py's rule gives."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotate.models import Annotation, Key, TriggerPrefix
from reports.imports.load import study_import
from reports.report import report_build

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-study.jsonl"
SCRIPT = REPO / "fixtures" / "make_example_study.py"
ANNOTATORS = ["example-annotator-1", "example-annotator-2"]


def lines() -> list[dict]:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]


def script():
    spec = importlib.util.spec_from_file_location("make_example_study", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # no torch at import: mining.core loads in main()
    return module


@pytest.fixture
def imported(db):
    with EXAMPLE.open("rb") as file:
        return study_import(file=file)


def test_the_example_study_imports_with_its_keys_prefixes_and_annotations(imported):
    study = imported.study
    assert study.name.startswith("example:") and "demonstration" in study.name
    assert (study.model_name, study.corpus) == ("builtin:smollm2-135m", "fixtures/sentences.txt")
    assert (study.top_k, study.seed) == (25, 0)
    n_keys = len(lines())
    assert (imported.keys, imported.prefixes) == (n_keys, n_keys * 25)
    assert imported.annotations == 2 * n_keys
    assert imported.users_created == ANNOTATORS
    # The fictional annotators are accounts no one can log in with.
    for user in get_user_model().objects.filter(username__in=ANNOTATORS):
        assert not user.is_active and not user.has_usable_password()

    keys = Key.objects.filter(study=study)
    layers = sorted(keys.values_list("layer", flat=True))
    assert len(set(layers)) >= 5 and all(layers.count(x) == 2 for x in set(layers))
    assert all(key.value_top_tokens for key in keys)
    assert TriggerPrefix.objects.filter(key__study=study).count() == n_keys * 25
    annotations = Annotation.objects.filter(key__study=study)
    assert set(annotations.values_list("status", flat=True)) == {"submitted"}
    assert all(a.patterns.count() > 0 for a in annotations)


def test_a_report_of_the_example_study_has_both_annotators_and_partial_coverage(imported):
    report = report_build(study=imported.study, replicates=20)
    coverage = report["coverage"]["overall"]
    assert 0 < coverage["share_covered"] < 1
    assert coverage["mean_patterns_per_key"] >= 1
    assert report["agreement"]["coders"] == ANNOTATORS
    per_annotator = report["figure2"]["per_annotator"]
    assert sorted(block["annotator"] for block in per_annotator) == ANNOTATORS
    # The two rules differ, so the annotators agree often but not always.
    alpha = report["agreement"]["labels"]["overall"]["krippendorff_alpha"]["value"]
    assert 0 < alpha < 1


def test_the_example_study_was_mined_from_the_sentences_fixture():
    sentences = (REPO / "fixtures" / "sentences.txt").read_text(encoding="utf-8").splitlines()
    assert len(set(sentences)) == len(sentences)  # no duplicate: the store keeps line order
    for record in lines():
        assert record["study"]["corpus"] == "fixtures/sentences.txt"
        assert [p["rank"] for p in record["prefixes"]] == list(range(1, 26))
        for prefix in record["prefixes"]:
            assert sentences[prefix["sentence_index"]] == prefix["sentence"]
            assert prefix["sentence"].startswith(prefix["text"])
            assert prefix["text"].endswith(prefix["trigger_token"])


def test_the_example_labels_are_what_the_scripts_rule_gives():
    make = script()
    kinds: set[str] = set()
    for record in lines():
        assert record["annotations"] == make.annotations_for(record["prefixes"])
        for annotation in record["annotations"]:
            assert annotation["annotator"] in ANNOTATORS
            kinds.update(p["kind"] for p in annotation["patterns"])
    assert kinds == {"shallow", "semantic", "shallow+semantic"}


def test_manage_py_import_loads_the_example_study(db, capsys):
    call_command("import", str(EXAMPLE))
    assert "imported study 'example:" in capsys.readouterr().out
