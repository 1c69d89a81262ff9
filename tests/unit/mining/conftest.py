"""Tiny offline models, tokenizers and corpora for the mining engine's tests.

Models are built with random weights (seeded) from the configs in
``fixtures/models/<name>.json``; tokenizers are WordLevel tokenizers over the test
vocabulary, wrapped in PreTrainedTokenizerFast with the special tokens of the family
they stand in for. Nothing is downloaded.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, PreTrainedTokenizerFast

from mining.core import CorpusStore, LoadedModel, MineConfig, adapt, build_store
from mining.core.miner import batch_plan

REPO_ROOT = Path(__file__).resolve().parents[3]
MODEL_FIXTURES = REPO_ROOT / "fixtures" / "models"
# Every family the miner must be exact on, by fixture name (fixtures/models/<name>.json).
FAMILIES = ["gpt2", "gpt_neox", "opt", "opt-350m", "llama", "bert"]
NON_GATED = [name for name in FAMILIES if name != "llama"]
WIKITEXT_VALID = (
    REPO_ROOT / ".." / "shared" / "corpora" / "wikitext103-valid" / "wiki.valid.tokens"
).resolve()

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "<s>", "</s>"]
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
    "red",
    "green",
    "blue",
    "cat",
    "dog",
    "bird",
    "fish",
    "tree",
    "rock",
    "river",
    "hill",
    "sun",
    "moon",
    "star",
    "cloud",
    "rain",
    "snow",
    "wind",
    "fire",
    "stone",
    "the",
    "a",
    "of",
    "and",
]


@cache
def model_fixture(name: str) -> dict:
    """fixtures/models/<name>.json: model_type, head, tokenizer family and config."""
    path = MODEL_FIXTURES / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"no tiny model fixture {path}")
    return json.loads(path.read_text(encoding="utf-8"))


def make_tokenizer(name: str) -> PreTrainedTokenizerFast:
    """For a model fixture name, or a tokenizer family: "gpt2" (no special tokens
    added), "opt" (</s> first), "llama" (<s> first), "bert" ([CLS] … [SEP])."""
    is_fixture = (MODEL_FIXTURES / f"{name}.json").is_file()
    family = model_fixture(name)["tokenizer"] if is_fixture else name
    vocab = {tok: i for i, tok in enumerate(SPECIALS + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if family == "bert":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
        )
        kwargs = {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]"}
    elif family == "llama":
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", 4)]
        )
        kwargs = {"bos_token": "<s>", "eos_token": "</s>"}
    elif family == "opt":  # OPT's tokenizer starts every text with </s>
        tok.post_processor = processors.TemplateProcessing(
            single="</s> $A", special_tokens=[("</s>", 5)]
        )
        kwargs = {"bos_token": "</s>", "eos_token": "</s>", "pad_token": "[PAD]"}
    elif family == "gpt2":
        kwargs = {"eos_token": "</s>"}
    else:
        raise ValueError(f"unknown tokenizer family {family!r}")
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", **kwargs)


def make_model(name: str, seed: int = 0) -> torch.nn.Module:
    """The tiny model of fixtures/models/<name>.json with seeded random weights."""
    fixture = model_fixture(name)
    config = AutoConfig.for_model(fixture["model_type"], **fixture["config"])
    if config.vocab_size != len(SPECIALS) + len(WORDS):
        raise ValueError(f"{name}: vocab_size must be {len(SPECIALS) + len(WORDS)}")
    auto = {"causal-lm": AutoModelForCausalLM, "base": AutoModel}[fixture["head"]]
    torch.manual_seed(seed)
    return auto.from_config(config).eval()


def tiny_loaded(name: str, seed: int = 0) -> LoadedModel:
    return adapt(make_model(name, seed), make_tokenizer(name), f"tiny-{name}")


def random_sentences(n: int, seed: int = 0, first: str | None = None) -> list[str]:
    """n distinct sentences of 1–10 words; with ``first``, all start with that word."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        words = [rng.choice(WORDS[:-4]) for _ in range(rng.randint(1, 10))]
        if first is not None:
            words = [first, *words]
        sentence = " ".join(words)
        if sentence not in seen:
            seen.add(sentence)
            out.append(sentence)
    return out


def make_store(
    loaded: LoadedModel, sentences: list[str], path: Path, max_tokens: int = 128
) -> CorpusStore:
    return build_store(
        sentences,
        loaded.tokenizer,
        path,
        max_tokens=max_tokens,
        tokenizer_name=loaded.name,
        chunk_size=37,
    )


def capture_all(loaded: LoadedModel, store: CorpusStore, cfg: MineConfig) -> list[list[np.ndarray]]:
    """Brute force: every coefficient of every layer, per sentence: acts[layer][s] is
    [tokens, d_ff] float32 (``cfg.coefficient``), from the same batches as an unsharded
    mining pass."""
    acts: list[list[np.ndarray | None]] = [[None] * len(store) for _ in range(loaded.n_layers)]
    current: dict[str, np.ndarray] = {}

    def keep(layer: int, m: torch.Tensor) -> None:
        dense = m.float().numpy()  # [batch, pos, d_ff]
        for row, s in enumerate(current["sentences"]):
            acts[layer][int(s)] = dense[row, : store.lengths[s]].copy()

    pad = loaded.tokenizer.pad_token_id or 0
    with torch.inference_mode(), loaded.capture(keep, coefficient=cfg.coefficient):
        for sentences in batch_plan(store, 0, len(store), cfg):
            ids, present, _ = store.batch(sentences, pad)
            current["sentences"] = sentences
            loaded.forward(torch.from_numpy(ids), torch.from_numpy(present.astype(np.int64)))
    return acts  # type: ignore[return-value]


def every_fourth_position(acts_of_layer: list[np.ndarray], store: CorpusStore) -> np.ndarray:
    """[positions, d_ff]: a layer's coefficients at the real positions where the sparsity
    count is taken, those where sentence index + position is a multiple of 4."""
    return np.concatenate(
        [
            acts_of_layer[s][~store.special(s) & ((s + np.arange(store.lengths[s])) % 4 == 0)]
            for s in range(len(store))
        ]
    )


def brute_force_topk(
    loaded: LoadedModel,
    store: CorpusStore,
    acts: list[list[np.ndarray]],
    keep_k: int,
    distinct: bool = True,
) -> dict[tuple[int, int], list[tuple[float, int, int]]]:
    """Apply the rules of docs/science.md, "Trigger examples and prefixes", literally:
    per key, each sentence's max over real positions (earliest on ties), order
    coefficient desc then sentence asc, distinct prefixes for causal models, first
    keep_k. Returns {(layer, key): [(value, sentence, position)]}."""
    out = {}
    n = len(store)
    for layer in range(loaded.n_layers):
        best = np.empty((n, loaded.d_ff), np.float32)
        where = np.empty((n, loaded.d_ff), np.int64)
        for s in range(n):
            m = acts[layer][s].copy()
            m[store.special(s)] = -np.inf
            best[s] = m.max(axis=0)
            where[s] = m.argmax(axis=0)  # numpy: first occurrence of the maximum
        best = best + np.float32(0.0)
        for key in range(loaded.d_ff):
            order = np.lexsort((np.arange(n), -best[:, key]))
            chosen, prefixes = [], set()
            for s in order:
                t = int(where[s, key])
                if loaded.causal and distinct:
                    prefix = store.tokens(int(s))[: t + 1].tobytes()
                    if prefix in prefixes:
                        continue
                    prefixes.add(prefix)
                chosen.append((float(best[s, key]), int(s), t))
                if len(chosen) == keep_k:
                    break
            out[(layer, key)] = chosen
    return out


@pytest.fixture
def store_factory(tmp_path: Path) -> Callable[..., CorpusStore]:
    counter = iter(range(1000))

    def factory(loaded: LoadedModel, sentences: list[str], **kwargs: int) -> CorpusStore:
        return make_store(loaded, sentences, tmp_path / f"store{next(counter)}", **kwargs)

    return factory


@pytest.fixture(params=["kernel", "tensor"])
def miner_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test on both implementations of the hot path: the compiled CPU kernel
    (float32 on the CPU) and the tensor path (bfloat16, CUDA), which CI has no GPU
    to run otherwise."""
    monkeypatch.setenv("FFKV_MINING_KERNEL", "auto" if request.param == "kernel" else "tensor")
    return str(request.param)
