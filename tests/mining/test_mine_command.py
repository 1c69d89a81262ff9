"""`manage.py mine` into the database: the study, its keys and prefixes; bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Key, Study, TriggerPrefix
from mining.models import MiningRun, MiningShard
from mining.selectors import mining_run_final_rate

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


def mine(model: Path | str, corpus: Path | str, **options) -> None:
    call_command(
        "mine",
        model=str(model),
        corpus=str(corpus),
        sentences=options.pop("sentences", "lines"),
        **options,
    )


def _rows(study: Study) -> list[tuple]:
    return list(
        TriggerPrefix.objects.filter(key__study=study)
        .order_by("key__layer", "key__index", "rank")
        .values_list(
            "key__layer",
            "key__index",
            "rank",
            "coefficient",
            "text",
            "trigger_token",
            "next_token",
            "sentence_index",
            "position",
        )
    )


def test_mine_loads_a_study_with_keys_and_their_prefixes(tiny_gpt2_dir, tiny_corpus):
    mine(tiny_gpt2_dir, tiny_corpus, study="tiny", keys_per_layer=4, top_k=5)

    study = Study.objects.get(name="tiny")
    assert (study.n_layers, study.d_ff, study.is_causal, study.top_k) == (2, 48, True, 5)
    assert study.vocab_size == 54
    keys = list(study.keys.order_by("layer", "index"))
    assert len(keys) == 8
    assert {k.layer for k in keys} == {1, 2}  # numbered from 1
    assert all(0 <= k.index < 48 for k in keys)
    assert all(len(k.value_top_tokens) == 10 for k in keys)
    for key in keys:
        prefixes = list(key.prefixes.order_by("rank"))
        assert [p.rank for p in prefixes] == [1, 2, 3, 4, 5]
        coefficients = [p.coefficient for p in prefixes]
        assert coefficients == sorted(coefficients, reverse=True)
        assert len({p.text for p in prefixes}) == 5  # distinct prefixes
        for p in prefixes:
            assert p.text.endswith(p.trigger_token.strip())
            assert p.sentence.startswith(p.text)
    run = MiningRun.objects.get(study=study)
    assert run.status == MiningRun.Status.DONE
    assert run.sentences_total == 200
    # The mining phase is timed apart from preparing and merging: the final tokens/s.
    assert run.started_at <= run.mining_started_at < run.mining_finished_at <= run.finished_at
    assert mining_run_final_rate(run=run) > 0


def test_sharded_mining_equals_the_single_pass(tiny_gpt2_dir, tiny_corpus):
    # batch 4 × sort window 16: blocks of 64 sentences, so 200 sentences make 4 shards.
    mine(tiny_gpt2_dir, tiny_corpus, study="one", keys_per_layer=5, batch_size=4)
    mine(tiny_gpt2_dir, tiny_corpus, study="four", keys_per_layer=5, batch_size=4, shards=4)
    four = Study.objects.get(name="four")
    assert MiningShard.objects.filter(run__study=four).count() == 4
    assert _rows(Study.objects.get(name="one")) == _rows(four)


def test_explicit_keys_are_numbered_from_one(tiny_gpt2_dir, tiny_corpus):
    mine(tiny_gpt2_dir, tiny_corpus, study="listed", keys="1:0,2:47", top_k=3)
    keys = Key.objects.filter(study__name="listed").order_by("layer")
    assert [(k.layer, k.index) for k in keys] == [(1, 0), (2, 47)]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": "no-such-org/no-such-model"}, "no-such-org/no-such-model"),
        ({"model": "/nonexistent/model/dir"}, "/nonexistent/model/dir"),
        ({"keys_per_layer": 49}, "keys_per_layer"),
        ({"keys": "3:0"}, "layer"),
        ({"keys": "1:48"}, "48"),
        ({"keys": "one:two"}, "--keys takes LAYER:INDEX"),
        ({"top_k": 100}, "top_k"),
    ],
)
def test_bad_arguments_get_one_clear_line_and_no_study(
    tiny_gpt2_dir, tiny_corpus, options, message
):
    options = {"model": tiny_gpt2_dir, "corpus": tiny_corpus, "study": "bad", **options}
    with pytest.raises(CommandError) as error:
        mine(options.pop("model"), options.pop("corpus"), **options)
    assert message in str(error.value)
    assert "\n" not in str(error.value).strip()
    assert not Study.objects.exists()
    assert not Key.objects.exists()


def test_an_unsupported_architecture_names_the_supported_ones(tmp_path, tiny_corpus):
    from transformers import T5Config

    path = tmp_path / "t5"
    T5Config(d_model=16, d_ff=32, num_layers=1, num_heads=2, vocab_size=64).save_pretrained(path)
    with pytest.raises(CommandError) as error:
        mine(path, tiny_corpus, study="t5")
    assert "t5" in str(error.value).lower()
    assert "gpt2" in str(error.value)
    assert not Study.objects.exists()


def test_an_empty_corpus_is_refused(tiny_gpt2_dir, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n  \n", encoding="utf-8")
    with pytest.raises(CommandError, match="empty"):
        mine(tiny_gpt2_dir, empty, study="empty")
    assert not Study.objects.exists()


def test_a_corpus_that_is_not_utf8_names_the_file_and_line(tiny_gpt2_dir, tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("alpha beta\ngamma delta\ncaf\xe9 theta\n".encode("latin-1"))
    with pytest.raises(CommandError) as error:
        mine(tiny_gpt2_dir, bad, study="latin1")
    assert "latin1.txt" in str(error.value)
    assert "latin1.txt:3:" in str(error.value)  # file:line
    assert not Study.objects.exists()


def test_a_missing_corpus_file_is_named(tiny_gpt2_dir, tmp_path):
    with pytest.raises(CommandError, match=r"nope\.txt"):
        mine(tiny_gpt2_dir, tmp_path / "nope.txt", study="missing")


def test_an_existing_study_name_is_refused_before_any_work(tiny_gpt2_dir, tiny_corpus):
    mine(tiny_gpt2_dir, tiny_corpus, study="taken", keys_per_layer=1, top_k=2)
    with pytest.raises(CommandError, match="already exists"):
        mine(tiny_gpt2_dir, tiny_corpus, study="taken", keys_per_layer=1, top_k=2)
    assert Study.objects.count() == 1


def test_perturbation_is_measured_on_request(tiny_gpt2_dir, tiny_corpus):
    mine(tiny_gpt2_dir, tiny_corpus, study="perturbed", keys_per_layer=2, top_k=5, perturb=True)
    keys = list(Key.objects.filter(study__name="perturbed"))
    assert len(keys) == 4
    for key in keys:
        assert set(key.perturbation) == {"first", "last", "random"}
        assert any(isinstance(v, float) for v in key.perturbation.values())
    mine(tiny_gpt2_dir, tiny_corpus, study="plain", keys_per_layer=1, top_k=2)
    assert all(k.perturbation == {} for k in Key.objects.filter(study__name="plain"))


def test_coefficient_pre_ranks_the_value_before_the_activation(tiny_gpt2_dir, tiny_corpus):
    mine(tiny_gpt2_dir, tiny_corpus, study="post", keys_per_layer=3, top_k=3)
    mine(tiny_gpt2_dir, tiny_corpus, study="pre", keys_per_layer=3, top_k=3, coefficient="pre")
    assert MiningRun.objects.get(study__name="pre").params["coefficient"] == "pre"
    assert MiningRun.objects.get(study__name="post").params["coefficient"] == "post"
    post, pre = _rows(Study.objects.get(name="post")), _rows(Study.objects.get(name="pre"))
    assert [r[:3] for r in post] == [r[:3] for r in pre]  # the same keys and ranks
    # GELU(z) < z for z > 0: a key's best pre-activation value beats its best coefficient.
    top = [(a[3], b[3]) for a, b in zip(post, pre, strict=True) if a[2] == 1 and a[3] > 0]
    assert top and all(p > q for q, p in top)


def test_coefficient_pre_of_a_gated_model_is_refused(tmp_path, tiny_corpus):
    from tests.mining.conftest import save_tiny_model

    path = save_tiny_model("llama", tmp_path / "tiny-llama")
    with pytest.raises(CommandError) as error:
        mine(path, tiny_corpus, study="gated", coefficient="pre")
    assert "gated" in str(error.value) and "\n" not in str(error.value).strip()
    assert not Study.objects.exists()


def test_mined_prefixes_keep_the_trigger_span_as_written(tmp_path):
    """An uncased tokenizer decodes "Marriage" as "marriage": the database keeps where the
    trigger is in the text, so the workspace highlights the text's own "Marriage"."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    from mining.core.models import builtin_minilm_dir
    from tests.unit.mining.conftest import model_fixture

    tokenizer = AutoTokenizer.from_pretrained(str(builtin_minilm_dir()))
    fixture = model_fixture("bert")
    config = AutoConfig.for_model("bert", **{**fixture["config"], "vocab_size": len(tokenizer)})
    model_dir = tmp_path / "tiny-uncased"
    AutoModel.from_config(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "The Marriage of Figaro\nWorld War II\nCafé Society in Paris\nNASA Launches Rockets\n"
    )
    mine(model_dir, corpus, study="uncased", all_keys=True, top_k=4)

    rows = TriggerPrefix.objects.filter(key__study__name="uncased").values_list(
        "text", "trigger_token", "trigger_start", "trigger_end"
    )
    assert len(rows) == 2 * 44 * 4
    differs = 0
    for text, trigger, start, end in rows:
        written = text[start:end]
        assert written.lower().replace("é", "e") == trigger.removeprefix("##")
        differs += written != trigger
    assert differs > 0  # some trigger is written with capitals, as "Marriage"
