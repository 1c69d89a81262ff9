"""The mining configuration (the flags of `manage.py mine` map onto it one to one)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .corpus import SENTENCE_MODES
from .errors import MiningError

# Kept here, not in .models, so that a configuration is checked without torch.
COEFFICIENTS = ("post", "pre")  # what is ranked: see models.ranked_definition
DTYPES = ("float32", "bfloat16")  # models.DTYPES maps each to its torch dtype
# Mining keeps each key's top 2·top_k: ranks 1..top_k are shown, top_k+1..2·top_k held out
# (docs/evidence.md). 2·top_k must fit in the running top-keep_k with this many slots to
# spare for duplicate prefixes: with keep_k = 64, top_k is at most 28.
DUPLICATE_ROOM = 8


@dataclass
class MineConfig:
    """Everything one mining run needs. Layers in ``key_list`` are 0-based.

    ``batch_size`` sentences go through the model at once. Sentences are grouped in
    fixed blocks of ``batch_size * sort_window`` consecutive sentence indices and sorted
    by length inside a block (less padding). Batches are therefore a function of the
    sentence indices alone, which is what makes shards bit-identical to one pass:
    shard boundaries must fall on block boundaries (see ``miner.shard_ranges``).
    """

    model: str = "builtin:minilm"
    corpus: str = "builtin:wiki-vital"
    sentences: str = "split"  # "split" (rule-based splitter) or "lines"
    top_k: int = 25  # trigger examples per sampled key (paper: 25)
    # Running top-K per key during mining; >= top_k. 64: room for the top-50 that the
    # perturbation measures, and for dropped duplicate prefixes.
    keep_k: int = 64
    keys_per_layer: int = 10  # paper: 10 keys per layer
    all_keys: bool = False  # report every key of every layer instead of a sample
    key_list: list[tuple[int, int]] | None = None  # explicit (layer, index), 0-based
    seed: int = 0
    device: str = "cpu"
    dtype: str = "float32"  # or "bfloat16" (winners re-scored in float32)
    max_sentences: int | None = None
    max_tokens: int = 128
    batch_size: int = 32
    sort_window: int = 16
    checkpoint_every: int = 50  # batches between shard checkpoints
    value_top_n: int = 10  # tokens of softmax(v_i·E) reported per key
    # What is ranked: "post" m_i = the down projection's input (after the activation:
    # the paper's coefficient), "pre" the up projection's output (before it, as the
    # authors' released code; non-gated families only). See models.ranked_definition.
    coefficient: str = "post"
    store_dir: str | None = None  # keep the tokenized store here (else a temp dir)
    extra: dict[str, Any] = field(default_factory=dict)  # free-form, e.g. study name

    def validate(self) -> MineConfig:
        def positive(name: str) -> None:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise MiningError(f"{name} must be a positive integer, not {value!r}")

        for name in (
            "top_k",
            "keep_k",
            "keys_per_layer",
            "max_tokens",
            "batch_size",
            "sort_window",
            "checkpoint_every",
            "value_top_n",
        ):
            positive(name)
        if self.top_k > self.keep_k:
            raise MiningError(f"top_k ({self.top_k}) cannot exceed keep_k ({self.keep_k})")
        if self.top_k > self.max_top_k:
            raise MiningError(
                f"top_k ({self.top_k}) is at most {self.max_top_k}: mining keeps the top "
                f"2·top_k per key (ranks top_k+1..2·top_k are held out) among its "
                f"keep_k ({max(self.keep_k, 64)}) candidates, {DUPLICATE_ROOM} of them spare "
                "for duplicate prefixes"
            )
        if self.max_tokens < 2:
            raise MiningError("max_tokens must be at least 2")
        if self.max_sentences is not None:
            positive("max_sentences")
        if self.sentences not in SENTENCE_MODES:
            raise MiningError(
                f"sentences must be one of {', '.join(SENTENCE_MODES)}, not {self.sentences!r}"
            )
        if self.dtype not in DTYPES:
            raise MiningError(f"dtype must be one of {', '.join(DTYPES)}, not {self.dtype!r}")
        if self.coefficient not in COEFFICIENTS:
            raise MiningError(
                f"coefficient must be one of {', '.join(COEFFICIENTS)}, not {self.coefficient!r}"
            )
        if not (self.device == "cpu" or self.device.startswith("cuda")):
            raise MiningError(f"device must be cpu or cuda[:N], not {self.device!r}")
        if self.all_keys and self.key_list:
            raise MiningError("give either all_keys or key_list, not both")
        return self

    @property
    def max_top_k(self) -> int:
        """The largest top_k: 2·top_k + DUPLICATE_ROOM fit in keep_k (at least 64; a
        smaller keep_k, as in tests, holds fewer held-out ranks)."""
        return (max(self.keep_k, 64) - DUPLICATE_ROOM) // 2

    @property
    def block_size(self) -> int:
        """Sentences per length-sorting block: the unit shard boundaries align to."""
        return self.batch_size * self.sort_window

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
