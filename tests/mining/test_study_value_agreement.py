"""A mined study keeps §4 over every key and what was ranked (the report's definitions)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Study
from mining.core import MineConfig, load_model, mine_range
from mining.core.models import ranked_definition
from mining.core.pipeline import build_corpus_store
from mining.core.value_agreement import value_agreement
from mining.models import MiningRun

from .conftest import save_tiny_model

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


def test_a_mined_study_stores_value_agreement_over_every_key(tiny_gpt2_dir, tiny_corpus, tmp_path):
    call_command(
        "mine",
        model=str(tiny_gpt2_dir),
        corpus=str(tiny_corpus),
        sentences="lines",
        study="tiny",
        keys_per_layer=2,
        top_k=5,
        max_tokens=6,
    )
    study = Study.objects.get(name="tiny")
    # the same counts as the core computes on the same inputs, for all 48 keys of each layer
    cfg = MineConfig(model=str(tiny_gpt2_dir), corpus=str(tiny_corpus), sentences="lines")
    cfg.max_tokens = 6
    loaded = load_model(cfg.model)
    store = build_corpus_store(cfg, loaded, str(tmp_path / "store"))
    expected = value_agreement(loaded, store, mine_range(loaded, store, cfg, 0, len(store)))
    assert study.value_agreement == expected
    assert [row["n_keys"] for row in study.value_agreement["layers"]] == [48, 48]
    assert study.keys.count() == 4  # only the sampled keys are stored; §4 counts all 96

    assert study.mining_definitions == {
        **ranked_definition("gpt2", "post"),
        "checkpoint_note": None,
    }


def test_an_encoder_study_has_no_value_agreement_counts(tmp_path, tiny_corpus):
    model = save_tiny_model("bert", tmp_path / "tiny-bert")
    call_command(
        "mine",
        model=str(model),
        corpus=str(tiny_corpus),
        sentences="lines",
        study="enc",
        keys_per_layer=1,
        top_k=3,
        coefficient="pre",
    )
    study = Study.objects.get(name="enc")
    assert study.value_agreement == {}
    assert study.mining_definitions["coefficient"] == "pre"
    assert study.mining_definitions["when"] == "before the activation"


def test_pre_on_a_gated_model_is_refused_before_the_corpus_is_tokenized(tmp_path, tiny_corpus):
    model = save_tiny_model("llama", tmp_path / "tiny-llama")
    with pytest.raises(CommandError, match="gated"):
        call_command(
            "mine",
            model=str(model),
            corpus=str(tiny_corpus),
            sentences="lines",
            study="gated",
            coefficient="pre",
        )
    run = MiningRun.objects.get(study_name="gated")
    assert run.status == MiningRun.Status.FAILED and run.sentences_total == 0
