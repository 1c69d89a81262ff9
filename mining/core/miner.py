"""The streaming miner (docs/mining.md, "The streaming miner").

One pass over the corpus tracks every key of every layer. Per layer the state is a
running top-K of candidates per key, O(layers × d_ff × K), plus cheap per-key
statistics; dense activations are reduced inside the forward hook and dropped.

A candidate is packed into one int64 **rank key** so that a single ``torch.topk`` /
sort gives the exact order of trigger examples — coefficient descending, then sentence
index ascending — with no ties between distinct sentences:

    rank_key = (order_preserving_int32(coefficient) << 32) | (2**32 - 1 - sentence)

Hot path per layer and batch (no Python loop over keys, positions or sentences). On
the CPU in float32 it is one compiled pass, ``kernels.update_layer``, which reads the
coefficients once, updates the statistics and inserts straight into each key's sorted
top-K. Elsewhere (bfloat16, CUDA) it is this tensor path, with the same result:

1. masked = m + additive mask (-inf on padding and special tokens)    [batch, pos, d_ff]
2. per-sentence max over positions → rank keys                        [batch, d_ff]
3. candidates above the key's current K-th best (a lower bound, so the filter is
   exact) are appended to a buffer with their earliest argmax position and, for
   causal models, the 64-bit hash of their prefix; the buffer is merged into the
   top-K (dedup of prefixes, then top-K) when it holds as many entries as the state.
4. statistics: count of m > 0, sum (matmul with the real-token mask), max, and a
   histogram of the per-sentence maxima.

Layers are 0-based here; interfaces show layer + 1.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import kernels, samples
from .config import MineConfig
from .errors import MiningError, MiningStopped
from .models import LoadedModel
from .store import CorpusStore

SENTINEL = kernels.SENTINEL
MAX_SENTENCES = kernels.MAX_SENTENCES
SUM_SCALE = kernels.SUM_SCALE
TENTH = kernels.TENTH
# Histogram of each key's per-sentence maximum coefficient (one count per sentence),
# bucket b between HIST_EDGES[b-1] and HIST_EDGES[b] (-inf/+inf at the ends), closed
# towards zero: [e, e') for values >= 0 and (e, e'] for values < 0 (the sign bit
# decides, so -0.0 goes to (-0.25, 0]). Powers of two around 0 cover GELU/ReLU
# (>= -0.17) and SwiGLU (either sign) coefficients; exact zeros (ReLU keys that never
# fire in a sentence) land in [0, 0.25). Powers of two make the bucket a function of
# the float's exponent bits, several times cheaper than a search.
HIST_EDGES: tuple[float, ...] = (
    -8.0,
    -4.0,
    -2.0,
    -1.0,
    -0.5,
    -0.25,
    0.0,
    0.25,
    0.5,
    1.0,
    2.0,
    4.0,
    8.0,
    16.0,
    32.0,
)
N_BINS = len(HIST_EDGES) + 1
PARTIAL_FORMAT = "ffkv.mining-partial/v1"
POSITIVE_FLOOR = 2.0**-126  # the smallest positive normal float32 (and bfloat16)
POSITIVE_SCALE = 2.0**126  # POSITIVE_FLOOR * POSITIVE_SCALE == 1.0 exactly


# --- rank keys ------------------------------------------------------------------


def pack_keys(values: torch.Tensor, sentences: torch.Tensor) -> torch.Tensor:
    """float32 coefficients and int64 sentence indices (broadcastable) → int64 rank keys."""
    values = values.to(torch.float32) + 0.0  # -0.0 + 0.0 == +0.0: equal floats, equal keys
    bits = values.contiguous().view(torch.int32)
    ordered = torch.where(bits < 0, bits ^ 0x7FFFFFFF, bits)  # int order == float order
    return (ordered.to(torch.int64) << 32) | (MAX_SENTENCES - sentences)


def unpack_values(keys: torch.Tensor) -> torch.Tensor:
    ordered = (keys >> 32).to(torch.int32)
    bits = torch.where(ordered < 0, ordered ^ 0x7FFFFFFF, ordered)
    return bits.view(torch.float32)


def unpack_sentences(keys: torch.Tensor) -> torch.Tensor:
    return MAX_SENTENCES - (keys & MAX_SENTENCES)


def hist_buckets(values: torch.Tensor) -> torch.Tensor:
    """Bucket index (see HIST_EDGES) of each float32 value, from its exponent bits."""
    bits = values.contiguous().view(torch.int32)
    # 0 below 2^-2, k for magnitudes in [2^(k-3), 2^(k-2)), 8 from 2^5 = 32 up.
    magnitude = ((bits >> 23) & 0xFF).sub_(124).clamp_(0, 8)
    return torch.where(bits < 0, 6 - magnitude.clamp(max=6), magnitude.add_(7))


# --- prefix hashes ----------------------------------------------------------------

_HASH_POSITIONS = 4096
_hash_tables: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}


def _hash_table(device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    if device not in _hash_tables:
        gen = torch.Generator().manual_seed(0x5EED)  # fixed: hashes must match across runs
        lo, hi = -(2**62), 2**62
        per_pos = torch.randint(lo, hi, (_HASH_POSITIONS,), generator=gen, dtype=torch.int64)
        per_len = torch.randint(lo, hi, (_HASH_POSITIONS,), generator=gen, dtype=torch.int64)
        _hash_tables[device] = (per_pos | 1).to(device), per_len.to(device)
    return _hash_tables[device]


def prefix_hashes(ids: torch.Tensor) -> torch.Tensor:
    """64-bit hash of every prefix tokens[0..t]: [batch, pos] int64, wrapping arithmetic.

    h[t] = sum_{j<=t} mix(id_j) * R_j + L_t with fixed random R (odd) and L: equal
    prefixes give equal hashes; different ones collide with probability ~2^-64.
    """
    per_pos, per_len = _hash_table(ids.device)
    width = ids.shape[1]
    if width > _HASH_POSITIONS:
        raise MiningError(f"sentences longer than {_HASH_POSITIONS} tokens are not supported")
    x = (ids + 1) * -7046029254386353131  # 0x9E3779B97F4A7C15 as a signed int64
    x = x ^ (x >> 31)
    return torch.cumsum(x * per_pos[:width], dim=1) + per_len[:width]


# --- keys to report -------------------------------------------------------------


def sample_keys(n_layers: int, d_ff: int, keys_per_layer: int, seed: int) -> list[tuple[int, int]]:
    """``keys_per_layer`` distinct keys per layer, seeded, sorted: [(layer, index)], 0-based."""
    if keys_per_layer > d_ff:
        raise MiningError(
            f"keys_per_layer ({keys_per_layer}) exceeds the {d_ff} keys of each layer"
        )
    gen = torch.Generator().manual_seed(seed)
    keys: list[tuple[int, int]] = []
    for layer in range(n_layers):
        chosen = torch.randperm(d_ff, generator=gen)[:keys_per_layer].sort().values
        keys.extend((layer, int(i)) for i in chosen)
    return keys


def all_keys(n_layers: int, d_ff: int) -> list[tuple[int, int]]:
    return [(layer, i) for layer in range(n_layers) for i in range(d_ff)]


def resolve_keys(cfg: MineConfig, n_layers: int, d_ff: int) -> list[tuple[int, int]]:
    """The keys a run reports: explicit list, all keys, or a seeded sample."""
    if cfg.key_list:
        keys = []
        for item in cfg.key_list:
            layer, index = (int(v) for v in item)
            if not 0 <= layer < n_layers:
                raise MiningError(
                    f"layer {layer} out of range: the model has layers 0..{n_layers - 1} "
                    f"(0-based; 1..{n_layers} in the interfaces)"
                )
            if not 0 <= index < d_ff:
                raise MiningError(f"key index {index} out of range: d_ff is {d_ff}")
            keys.append((layer, index))
        return sorted(set(keys))
    if cfg.all_keys:
        return all_keys(n_layers, d_ff)
    return sample_keys(n_layers, d_ff, cfg.keys_per_layer, cfg.seed)


# --- batches and shards ---------------------------------------------------------


def batch_plan(store: CorpusStore, start: int, end: int, cfg: MineConfig) -> list[np.ndarray]:
    """Sentence indices of each batch of [start, end): blocks of ``cfg.block_size``
    consecutive sentences (aligned to index 0), sorted by length inside a block."""
    block = cfg.block_size
    plan: list[np.ndarray] = []
    for b0 in range(start, end, block):
        idx = np.arange(b0, min(b0 + block - b0 % block, end), dtype=np.int64)
        idx = idx[np.argsort(store.lengths[idx], kind="stable")]
        plan.extend(idx[j : j + cfg.batch_size] for j in range(0, idx.size, cfg.batch_size))
    return plan


def shard_ranges(n_sentences: int, n_shards: int, cfg: MineConfig) -> list[tuple[int, int]]:
    """Cut [0, n_sentences) into at most ``n_shards`` block-aligned ranges (never empty)."""
    if n_shards < 1:
        raise MiningError("the number of shards must be at least 1")
    n_blocks = math.ceil(n_sentences / cfg.block_size)
    n_shards = min(n_shards, max(n_blocks, 1))
    bounds = [round(i * n_blocks / n_shards) * cfg.block_size for i in range(n_shards + 1)]
    bounds = [min(b, n_sentences) for b in bounds]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _check_range(store: CorpusStore, start: int, end: int, cfg: MineConfig) -> None:
    n = len(store)
    if not 0 <= start < end <= n:
        raise MiningError(f"bad sentence range [{start}, {end}) for a corpus of {n} sentences")
    if start % cfg.block_size or (end % cfg.block_size and end != n):
        raise MiningError(
            f"shard [{start}, {end}) is not aligned to blocks of {cfg.block_size} sentences "
            "(use shard_ranges)"
        )
    if n > MAX_SENTENCES:
        raise MiningError(f"corpora above {MAX_SENTENCES} sentences are not supported")


# --- partial results ------------------------------------------------------------


def _no_sketch(name: str) -> torch.Tensor:
    return samples.empty_sketches(0)[name]


@dataclass
class Partial:
    """The mergeable state of one or more sentence ranges.

    ``keys``/``positions``/``hashes`` [layers, d_ff, K]: the running top-K per key as
    rank keys (see ``pack_keys``; SENTINEL marks an empty slot), token positions and
    prefix hashes (zeros for encoders), each key's row sorted best first.
    Statistics per key [layers, d_ff]: ``n_positive`` (real positions with m > 0),
    ``sum_fixed`` (sum of m over real positions × SUM_SCALE, int64), ``max``;
    ``hist`` [layers, d_ff, N_BINS] (per-sentence maxima, HIST_EDGES); ``n_positions``
    real positions seen. ``meta`` is JSON: fingerprint, ranges, progress.
    """

    meta: dict[str, Any]
    keys: torch.Tensor
    positions: torch.Tensor
    hashes: torch.Tensor
    n_positive: torch.Tensor
    sum_fixed: torch.Tensor
    max: torch.Tensor
    hist: torch.Tensor
    n_positions: torch.Tensor = field(default_factory=lambda: torch.zeros((), dtype=torch.int64))
    # [layers]: (position, key) pairs with m above a tenth of the position's largest m
    # (kernels.TENTH; none where that is not positive), over the n_sparsity_positions real
    # positions of kernels.sparsity_positions: the sparsity per token.
    n_above_tenth: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.int64))
    n_sparsity_positions: torch.Tensor = field(
        default_factory=lambda: torch.zeros((), dtype=torch.int64)
    )
    # The sample sketches of the sampled keys (``meta["fingerprint"]["sample_keys"]``, in
    # that order; mining.core.samples): band_* [n_sampled, bins, BIN_K], rand_*
    # [n_sampled, RANDOM_K]; draw keys ascending, samples.EMPTY in empty slots.
    band_keys: torch.Tensor = field(default_factory=lambda: _no_sketch("band_keys"))
    band_pos: torch.Tensor = field(default_factory=lambda: _no_sketch("band_pos"))
    band_vals: torch.Tensor = field(default_factory=lambda: _no_sketch("band_vals"))
    rand_keys: torch.Tensor = field(default_factory=lambda: _no_sketch("rand_keys"))
    rand_pos: torch.Tensor = field(default_factory=lambda: _no_sketch("rand_pos"))
    rand_vals: torch.Tensor = field(default_factory=lambda: _no_sketch("rand_vals"))

    SKETCHES = ("band_keys", "band_pos", "band_vals", "rand_keys", "rand_pos", "rand_vals")
    TENSORS = (
        "keys",
        "positions",
        "hashes",
        "n_positive",
        "sum_fixed",
        "max",
        "hist",
        "n_positions",
        "n_above_tenth",
        "n_sparsity_positions",
        *SKETCHES,
    )

    @classmethod
    def empty(
        cls, meta: dict[str, Any], n_layers: int, d_ff: int, keep_k: int, n_sampled: int = 0
    ) -> Partial:
        shape = (n_layers, d_ff, keep_k)
        return cls(
            **samples.empty_sketches(n_sampled),
            meta=meta,
            keys=torch.full(shape, SENTINEL, dtype=torch.int64),
            positions=torch.zeros(shape, dtype=torch.int32),
            hashes=torch.zeros(shape, dtype=torch.int64),
            n_positive=torch.zeros((n_layers, d_ff), dtype=torch.int64),
            sum_fixed=torch.zeros((n_layers, d_ff), dtype=torch.int64),
            max=torch.full((n_layers, d_ff), -math.inf, dtype=torch.float32),
            hist=torch.zeros((n_layers, d_ff, N_BINS), dtype=torch.int64),
            n_above_tenth=torch.zeros(n_layers, dtype=torch.int64),
        )

    @property
    def complete(self) -> bool:
        return self.meta["batches_done"] == self.meta["n_batches"]

    def to(self, device: torch.device | str) -> Partial:
        moved = {name: getattr(self, name).to(device) for name in self.TENSORS}
        return Partial(meta=dict(self.meta), **moved)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Atomic write (temp file + os.replace): a killed writer never leaves half a file."""
        path = Path(path)
        payload: dict[str, Any] = {name: getattr(self, name).cpu() for name in self.TENSORS}
        payload["meta"] = json.dumps(self.meta)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        torch.save(payload, tmp)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Partial:
        try:
            payload = torch.load(path, map_location="cpu", weights_only=True)
            meta = json.loads(payload.pop("meta"))
        except FileNotFoundError:
            raise MiningError(f"partial result {str(path)!r} does not exist") from None
        except Exception as exc:
            raise MiningError(f"partial result {str(path)!r} is unreadable: {exc}") from None
        if meta.get("format") != PARTIAL_FORMAT:
            raise MiningError(f"{str(path)!r} is not a mining partial result")
        # A partial saved before the sample sketches has none (and another fingerprint).
        return cls(meta=meta, **{name: payload[name] for name in cls.TENSORS if name in payload})

    def sketches(self) -> dict[str, torch.Tensor]:
        return {name: getattr(self, name) for name in self.SKETCHES}

    @property
    def sample_keys(self) -> list[tuple[int, int]]:
        """The keys whose samples the sketches hold, in their order (0-based layers)."""
        sampled = self.meta.get("fingerprint", {}).get("sample_keys", [])
        return [(int(a), int(b)) for a, b in sampled]

    # Stats ------------------------------------------------------------------------

    def density(self) -> torch.Tensor:
        """[layers, d_ff]: share of real positions with m > 0."""
        return self.n_positive.double() / max(int(self.n_positions), 1)

    def mean(self) -> torch.Tensor:
        """[layers, d_ff]: mean coefficient over real positions."""
        return self.sum_fixed.double() / SUM_SCALE / max(int(self.n_positions), 1)

    def above_tenth(self) -> torch.Tensor:
        """[layers]: the share of a layer's keys above a tenth of the position's peak,
        averaged over the positions where it is counted (every SPARSITY_EVERY-th)."""
        d_ff = self.keys.shape[1]
        return self.n_above_tenth.double() / (max(int(self.n_sparsity_positions), 1) * d_ff)


def samples_keys(
    cfg: MineConfig, n_layers: int, d_ff: int, samples_on: bool | None = None
) -> list[tuple[int, int]]:
    """The keys a run draws samples below the top for (docs/evidence.md): the reported
    keys, unless ``samples_on`` is False, or it is None (auto) and the run reports every
    key or more than ``samples.MAX_SAMPLED_KEYS``."""
    if samples_on is False:
        return []
    keys = resolve_keys(cfg, n_layers, d_ff)
    if len(keys) > samples.MAX_SAMPLED_KEYS or (samples_on is None and cfg.all_keys):
        if samples_on:
            raise MiningError(
                f"samples below the top are drawn for at most {samples.MAX_SAMPLED_KEYS} "
                f"keys; this run reports {len(keys)}: mine without samples"
            )
        return []
    return keys


def _fingerprint(
    loaded: LoadedModel,
    store: CorpusStore,
    cfg: MineConfig,
    sample_keys_: Sequence[tuple[int, int]] = (),
) -> dict[str, Any]:
    """What two partials must share to be merged (and what finalize and perturb re-run:
    the coefficient mode; the keys sampled below the top and the seed of their draw)."""
    return {
        # A partial saved before the per-token sparsity count lacks it: not resumed.
        "stats": ["n_above_tenth", kernels.SPARSITY_EVERY],
        "sample_keys": [[int(a), int(b)] for a, b in sample_keys_],
        "sample_seed": cfg.seed,
        "model": loaded.name,
        "model_type": loaded.model_type,
        "n_layers": loaded.n_layers,
        "d_ff": loaded.d_ff,
        "causal": loaded.causal,
        "keep_k": cfg.keep_k,
        "dtype": cfg.dtype,
        "batch_size": cfg.batch_size,
        "sort_window": cfg.sort_window,
        "coefficient": cfg.coefficient,
        "max_tokens": store.meta["max_tokens"],
        "n_sentences": len(store),
        "n_tokens": store.n_tokens,
    }


# --- the hot path ------------------------------------------------------------------


def _merge_topk_flat(
    keys: torch.Tensor,
    positions: torch.Tensor,
    hashes: torch.Tensor,
    cand_f: torch.Tensor,
    cand_keys: torch.Tensor,
    cand_pos: torch.Tensor,
    cand_hash: torch.Tensor,
    dedup: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``_merge_topk`` with flat sorts: the same result, memory linear in the entries."""
    n_keys, k = keys.shape
    device = keys.device
    all_f = torch.cat([torch.arange(n_keys, device=device).repeat_interleave(k), cand_f])
    all_k = torch.cat([keys.reshape(-1), cand_keys])
    all_p = torch.cat([positions.reshape(-1), cand_pos])
    all_h = torch.cat([hashes.reshape(-1), cand_hash])
    if dedup:
        order = torch.sort(all_k, descending=True, stable=True).indices
        order = order[torch.sort(all_h[order], stable=True).indices]
        order = order[torch.sort(all_f[order], stable=True).indices]
        f_o, h_o = all_f[order], all_h[order]
        dup = torch.zeros_like(f_o, dtype=torch.bool)
        dup[1:] = (f_o[1:] == f_o[:-1]) & (h_o[1:] == h_o[:-1])
        all_k = all_k.clone()
        all_k[order[dup]] = SENTINEL
    order = torch.sort(all_k, descending=True, stable=True).indices
    order = order[torch.sort(all_f[order], stable=True).indices]
    counts = torch.bincount(all_f, minlength=n_keys)  # every key has >= K (its state)
    starts = torch.cumsum(counts, 0) - counts
    take = order[starts[:, None] + torch.arange(k, device=device)[None, :]]  # [n_keys, K]
    new_k = all_k[take]
    empty = new_k == SENTINEL
    return new_k, all_p[take].masked_fill(empty, 0), all_h[take].masked_fill(empty, 0)


def _merge_topk(
    keys: torch.Tensor,
    positions: torch.Tensor,
    hashes: torch.Tensor,
    cand_f: torch.Tensor,
    cand_keys: torch.Tensor,
    cand_pos: torch.Tensor,
    cand_hash: torch.Tensor,
    dedup: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Merge flat candidates (key index, rank key, position, hash) into a top-K state
    [n_keys, K] and return the new state, rows sorted best first.

    With ``dedup``, of several entries of one key with the same prefix hash only the
    best (equal coefficients, so the lowest sentence index) survives. Exact and
    associative: the result is the deduplicated top-K of all entries ever merged.
    Empty slots hold SENTINEL with position and hash 0, so states compare bit for bit.
    """
    n_keys, k = keys.shape
    device = keys.device
    if cand_f.numel() == 0:
        return keys, positions, hashes
    # Lay the candidates out as rows: [n_keys, width], width = most candidates of a key.
    order = torch.sort(cand_f, stable=True).indices
    f_sorted = cand_f[order]
    counts = torch.bincount(f_sorted, minlength=n_keys)
    starts = torch.cumsum(counts, 0) - counts
    slot = torch.arange(f_sorted.numel(), device=device) - starts[f_sorted]
    width = int(counts.max())
    if n_keys * width > 4 * (n_keys * k + cand_f.numel()):
        # Candidates crowd a few keys: a dense layout would be mostly padding.
        return _merge_topk_flat(
            keys, positions, hashes, cand_f, cand_keys, cand_pos, cand_hash, dedup
        )
    dense_k = torch.full((n_keys, width), SENTINEL, dtype=keys.dtype, device=device)
    dense_p = torch.zeros((n_keys, width), dtype=positions.dtype, device=device)
    dense_h = torch.zeros((n_keys, width), dtype=hashes.dtype, device=device)
    dense_k[f_sorted, slot] = cand_keys[order]
    dense_p[f_sorted, slot] = cand_pos[order]
    dense_h[f_sorted, slot] = cand_hash[order]
    all_k = torch.cat([keys, dense_k], dim=1)  # [n_keys, K + width]
    all_p = torch.cat([positions, dense_p], dim=1)
    all_h = torch.cat([hashes, dense_h], dim=1)
    if dedup:
        # Best first, then group equal hashes (stable: the best of a group leads it).
        o = torch.sort(all_k, dim=1, descending=True, stable=True).indices
        all_k, all_p, all_h = all_k.gather(1, o), all_p.gather(1, o), all_h.gather(1, o)
        o = torch.sort(all_h, dim=1, stable=True).indices
        all_k, all_p, all_h = all_k.gather(1, o), all_p.gather(1, o), all_h.gather(1, o)
        dup = torch.zeros_like(all_k, dtype=torch.bool)
        dup[:, 1:] = all_h[:, 1:] == all_h[:, :-1]
        all_k = all_k.masked_fill(dup, SENTINEL)
    top = torch.topk(all_k, k, dim=1, largest=True, sorted=True)
    new_k = top.values
    empty = new_k == SENTINEL
    new_p = all_p.gather(1, top.indices).masked_fill(empty, 0)
    new_h = all_h.gather(1, top.indices).masked_fill(empty, 0)
    return new_k, new_p, new_h


class _StreamingMiner:
    """Holds a Partial's tensors on the device and updates them from hook calls.

    Per layer it buffers (a) candidates that may enter the top-K, merged when the
    buffer holds as many entries as the state, and (b) the per-sentence maxima of a few
    batches, turned into the max and histogram statistics a few batches at a time:
    fewer, larger tensor operations (each small one costs a thread synchronisation).
    """

    STATS_BUFFER_BYTES = 64 << 20  # per-sentence maxima held before updating max/hist

    def __init__(
        self,
        partial: Partial,
        causal: bool,
        device: torch.device,
        batch_size: int,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        self.p = partial.to(device)
        self.sketcher: samples.SampleSketcher | None = None
        if partial.sample_keys:
            self.sketcher = samples.SampleSketcher(
                partial.sample_keys,
                int(partial.meta["fingerprint"]["sample_seed"]),
                partial.keys.shape[0],
                self.p.sketches(),
                device,
                batch_size,
            )
        self.causal = causal
        self.device = device
        n_layers, d_ff, keep_k = self.p.keys.shape
        self.n_layers, self.d_ff, self.keep_k = n_layers, d_ff, keep_k
        # The K-th best coefficient per key: a sentence's max below it cannot enter.
        self.floors = torch.empty((n_layers, d_ff), dtype=torch.float32, device=device)
        for layer in range(n_layers):
            self._update_floor(layer)
        self.candidates: list[list[tuple[torch.Tensor, ...]]] = [[] for _ in range(n_layers)]
        self.n_candidates = [0] * n_layers
        self.candidate_cap = d_ff * keep_k
        self.maxima: list[list[torch.Tensor]] = [[] for _ in range(n_layers)]
        self.maxima_cap = max(
            1, min(16, self.STATS_BUFFER_BYTES // (4 * n_layers * d_ff * batch_size))
        )
        self.key_offsets = torch.arange(d_ff, device=device) * N_BINS  # [d_ff]
        self._batch: dict[str, torch.Tensor] = {}
        self._scratch: torch.Tensor | None = None
        self._span = (0, 0)
        # float32 on the CPU: the compiled one-pass kernel updates the state in place.
        self.fused = device.type == "cpu" and kernels.available() and dtype == torch.float32
        self._views: list[dict[str, np.ndarray]] = []
        self._kernel_batch: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        if self.fused:
            kernels.use_threads(torch.get_num_threads())
            # The kernel keeps each row as a min-heap (kernels._insert); a row sorted
            # best first, reversed, is one. The caller's partial is left as it was.
            for name in ("keys", "positions", "hashes"):
                setattr(self.p, name, getattr(self.p, name).flip(-1).contiguous())
            self._views = [
                {name: getattr(self.p, name)[layer].numpy() for name in kernels.STATE}
                for layer in range(n_layers)
            ]

    def _update_floor(self, layer: int) -> None:
        kth = self.p.keys[layer, :, -1]
        self.floors[layer] = torch.where(kth == SENTINEL, -math.inf, unpack_values(kth))

    def begin_batch(
        self, sentences: np.ndarray, ids: torch.Tensor, real: np.ndarray, dtype: torch.dtype
    ) -> None:
        """sentences [batch]; ids [batch, pos] on the device; real [batch, pos] (numpy)."""
        self.p.n_positions += int(real.sum())
        sparse_at = kernels.sparsity_positions(sentences, real)
        self.p.n_sparsity_positions += int(sparse_at.sum())
        if self.sketcher is not None:
            self.sketcher.begin_batch(sentences, real)
        if self.fused:
            hashes = (
                prefix_hashes(ids).numpy() if self.causal else np.zeros(real.shape, dtype=np.int64)
            )
            self._kernel_batch = (
                np.ascontiguousarray(real, dtype=np.bool_),
                sparse_at,
                np.ascontiguousarray(sentences, dtype=np.int64),
                hashes,
            )
            return
        real_t = torch.from_numpy(real).to(self.device)
        additive = torch.zeros(real.shape, dtype=dtype, device=self.device)
        additive.masked_fill_(~real_t, -math.inf)
        weights = real_t.reshape(1, -1).to(torch.float32)  # [1, batch*pos]
        # Positions [lo, hi) that are real in every row (after the leading special tokens,
        # before the shortest row's end): there the max needs no mask, which spares a
        # full pass over m. Length-sorted batches keep the rest narrow.
        every: np.ndarray = np.asarray(real.all(axis=0))
        lo = int(every.argmax()) if every.any() else 0
        hi = lo + int(np.argmin(np.append(every[lo:], False))) if every.any() else 0
        self._batch = {
            "sparse_at": torch.from_numpy(sparse_at).to(self.device),  # [batch, pos]
            "sentences": torch.from_numpy(sentences).to(self.device),  # [batch]
            "additive": additive[:, :, None],  # [batch, pos, 1]
            "weights": weights,
            "positive_weights": weights * POSITIVE_SCALE,
        }
        self._span = (lo, hi)
        if self.causal:
            self._batch["hashes"] = prefix_hashes(ids)  # [batch, pos]
        shape = (*real.shape, self.d_ff)
        if self._scratch is None or self._scratch.shape != shape or self._scratch.dtype != dtype:
            self._scratch = torch.empty(shape, dtype=dtype, device=self.device)

    def _best(self, m: torch.Tensor) -> torch.Tensor:
        """[batch, d_ff]: each sentence's max over its real positions (-inf elsewhere)."""
        lo, hi = self._span
        additive = self._batch["additive"]
        if hi <= lo:
            return (m + additive).amax(dim=1)
        best = m[:, lo:hi].amax(dim=1)
        for a, b in ((0, lo), (hi, m.shape[1])):
            if b > a:
                edge = (m[:, a:b] + additive[:, a:b]).amax(dim=1)
                torch.maximum(best, edge, out=best)
        return best

    def on_layer(self, layer: int, m: torch.Tensor) -> None:
        """The hook: m [batch, pos, d_ff], the ranked coefficients (see ``capture``)."""
        if self.sketcher is not None:
            self.sketcher.on_layer(layer, m)  # the sampled keys' columns, for end_batch
        if self.fused:
            assert self._kernel_batch is not None
            self.p.n_above_tenth[layer] += kernels.update_layer(
                m.contiguous().numpy(), *self._kernel_batch, self.causal, self._views[layer]
            )
            return
        batch = self._batch
        p = self.p
        best = self._best(m)  # [batch, d_ff] per-sentence max over real positions
        flat = m.reshape(-1, m.shape[-1])  # [batch*pos, d_ff]
        # Statistics over real positions (row weights 0 elsewhere). Count of m > 0:
        # clamp to [0, 2^-126] (the smallest normal float) and weight by 2^126, so every
        # positive (normal) coefficient counts exactly 1 in a matrix-vector product; far
        # cheaper on CPU than a boolean compare and sum.
        indicator = torch.clamp(m, 0.0, POSITIVE_FLOOR, out=self._scratch).view(flat.shape)
        positive = batch["positive_weights"] @ indicator.float()  # [1, d_ff]
        p.n_positive[layer] += positive[0].to(torch.int64)
        # Sums and counts in float32 whatever the model dtype (.float() is free in float32).
        total = batch["weights"] @ flat.float()  # [1, d_ff]
        p.sum_fixed[layer] += torch.round(total[0].double() * SUM_SCALE).to(torch.int64)
        # Keys above a tenth of the position's peak, in float32 as the kernel counts them.
        m32 = m.float()
        floor = (m32.amax(dim=2, keepdim=True) * TENTH).clamp(min=0.0)  # [batch, pos, 1]
        above = (m32 > floor).sum(dim=2)  # [batch, pos]
        p.n_above_tenth[layer] += above[batch["sparse_at"]].sum()
        self.maxima[layer].append(best)
        if len(self.maxima[layer]) >= self.maxima_cap:
            self._flush_stats(layer)
        # Candidates: one per (sentence, key), kept only if it can enter the top-K.
        rows, cols = (best >= self.floors[layer].to(best.dtype)).nonzero(as_tuple=True)
        if rows.numel() == 0:
            return
        column = m[rows, :, cols] + batch["additive"][rows, :, 0]  # [n, pos]
        pos = column.argmax(dim=1)  # [n] earliest maximum position
        hashes = batch["hashes"][rows, pos] if self.causal else torch.zeros_like(rows)
        self.candidates[layer].append(
            (cols, best[rows, cols], batch["sentences"][rows], pos.to(torch.int32), hashes)
        )
        self.n_candidates[layer] += rows.numel()
        if self.n_candidates[layer] >= self.candidate_cap:
            self._flush_candidates(layer)

    def _flush_stats(self, layer: int) -> None:
        if not self.maxima[layer]:
            return
        p = self.p
        best = torch.cat(self.maxima[layer]).float()  # [sentences, d_ff]
        self.maxima[layer] = []
        torch.maximum(p.max[layer], best.amax(dim=0), out=p.max[layer])
        bins = hist_buckets(best)  # [sentences, d_ff]
        p.hist[layer] += torch.bincount(
            (bins + self.key_offsets).reshape(-1), minlength=self.d_ff * N_BINS
        ).view(self.d_ff, N_BINS)

    def _flush_candidates(self, layer: int) -> None:
        if not self.candidates[layer]:
            return
        cols, values, sentences, pos, hashes = (
            torch.cat(parts) for parts in zip(*self.candidates[layer], strict=True)
        )
        self.candidates[layer] = []
        self.n_candidates[layer] = 0
        p = self.p
        rank = pack_keys(values, sentences)
        touched = torch.unique(cols)  # sorted key indices that have candidates
        if touched.numel() == self.d_ff:
            p.keys[layer], p.positions[layer], p.hashes[layer] = _merge_topk(
                p.keys[layer],
                p.positions[layer],
                p.hashes[layer],
                cols,
                rank,
                pos,
                hashes,
                dedup=self.causal,
            )
        else:  # past the first batches most keys have no candidate: merge only the others
            keys, positions, hashes_ = _merge_topk(
                p.keys[layer, touched],
                p.positions[layer, touched],
                p.hashes[layer, touched],
                torch.searchsorted(touched, cols),
                rank,
                pos,
                hashes,
                dedup=self.causal,
            )
            p.keys[layer, touched] = keys
            p.positions[layer, touched] = positions
            p.hashes[layer, touched] = hashes_
        self._update_floor(layer)

    def end_batch(self) -> None:
        """After a batch's forward: its candidates for the sample sketches."""
        if self.sketcher is not None:
            self.sketcher.end_batch()

    def flush(self) -> None:
        if self.sketcher is not None:
            self.sketcher.flush()
        for layer in range(self.n_layers):
            self._flush_stats(layer)
            self._flush_candidates(layer)

    def partial(self) -> Partial:
        """The state so far, rows sorted best first (a copy where the kernel keeps heaps)."""
        self.flush()
        p = self.p.to("cpu")
        if not self.fused:
            return p
        order = torch.sort(p.keys, dim=-1, descending=True, stable=True).indices
        return Partial(
            meta=dict(p.meta),
            **{
                name: getattr(p, name).gather(-1, order)
                if name in ("keys", "positions", "hashes")
                else getattr(p, name).clone()
                for name in Partial.TENSORS
            },
        )


def mine_range(
    loaded: LoadedModel,
    store: CorpusStore,
    cfg: MineConfig,
    start: int,
    end: int,
    *,
    checkpoint_path: str | os.PathLike[str] | None = None,
    checkpoint_every: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    samples_on: bool | None = None,
) -> Partial:
    """Mine sentences [start, end) (block-aligned, see ``shard_ranges``).

    The same pass draws the samples below the top of the keys ``samples_keys`` names
    (``samples_on``: None for its default, False for none; docs/evidence.md).

    ``progress(sentences_done, tokens_done)`` is called after every batch with counts
    within this range (totals: ``end - start`` and ``store.tokens_in(start, end)``).
    With ``checkpoint_path`` the state is saved there atomically every
    ``checkpoint_every`` batches (default ``cfg.checkpoint_every``), when
    ``should_stop()`` returns True (then ``MiningStopped`` is raised) and at the end;
    a later call with the same path resumes from it, or returns it at once if complete.
    """
    cfg.validate()
    loaded.check_coefficient(cfg.coefficient)
    _check_range(store, start, end, cfg)
    plan = batch_plan(store, start, end, cfg)
    sampled = samples_keys(cfg, loaded.n_layers, loaded.d_ff, samples_on)
    meta = {
        "format": PARTIAL_FORMAT,
        "fingerprint": _fingerprint(loaded, store, cfg, sampled),
        "ranges": [[start, end]],
        "n_batches": len(plan),
        "batches_done": 0,
        "sentences_done": 0,
        "tokens_done": 0,
    }
    partial = None
    if checkpoint_path is not None and os.path.exists(checkpoint_path):
        previous = Partial.load(checkpoint_path)
        same = {k: previous.meta.get(k) for k in ("fingerprint", "ranges", "n_batches")}
        if same == {k: meta[k] for k in same}:
            partial = previous
    if partial is None:
        partial = Partial.empty(meta, loaded.n_layers, loaded.d_ff, cfg.keep_k, len(sampled))
    if partial.complete:
        return partial
    every = checkpoint_every or cfg.checkpoint_every
    device = loaded.device
    dtype = loaded.dtype
    pad_id = loaded.tokenizer.pad_token_id
    pad_id = 0 if pad_id is None else int(pad_id)
    miner = _StreamingMiner(partial, loaded.causal, device, cfg.batch_size, dtype)
    state = miner.p.meta

    def save() -> None:
        if checkpoint_path is not None:
            miner.partial().save(checkpoint_path)

    for index in range(state["batches_done"], len(plan)):
        sentences = plan[index]
        ids_np, present_np, real_np = store.batch(sentences, pad_id)
        ids = torch.from_numpy(ids_np).to(device)
        attention = torch.from_numpy(present_np.astype(np.int64)).to(device)
        miner.begin_batch(sentences, ids, real_np, dtype)
        # Hooks live only for this forward: callbacks below run without them.
        with torch.inference_mode(), loaded.capture(miner.on_layer, coefficient=cfg.coefficient):
            loaded.forward(ids, attention)
            miner.end_batch()
        state["batches_done"] = index + 1
        state["sentences_done"] += int(sentences.size)
        state["tokens_done"] += int(present_np.sum())
        if progress is not None:
            progress(state["sentences_done"], state["tokens_done"])
        if state["batches_done"] == len(plan):
            break
        if should_stop is not None and should_stop():
            save()
            raise MiningStopped(
                f"stopped after {state['sentences_done']} of {end - start} sentences",
                None if checkpoint_path is None else str(checkpoint_path),
            )
        if state["batches_done"] % every == 0:
            save()
    result = miner.partial()
    if checkpoint_path is not None:
        result.save(checkpoint_path)
    return result


def partial_coefficient(partial: Partial) -> str:
    """The coefficient mode a partial ranked (partials older than the mode: "post")."""
    return str(partial.meta["fingerprint"].get("coefficient", "post"))


def merge_partials(partials: Sequence[Partial]) -> Partial:
    """Combine complete partials of disjoint ranges; equal, bit for bit, to one pass."""
    if not partials:
        raise MiningError("nothing to merge")
    first = partials[0]
    for other in partials:
        if other.meta["fingerprint"] != first.meta["fingerprint"]:
            raise MiningError("cannot merge partial results of different runs or settings")
        if not other.complete:
            raise MiningError(f"partial result of ranges {other.meta['ranges']} is incomplete")
    ranges = sorted(r for other in partials for r in other.meta["ranges"])
    for (_, a_end), (b_start, _) in itertools.pairwise(ranges):
        if b_start < a_end:
            raise MiningError(f"overlapping sentence ranges {ranges}")
    n_layers, d_ff, keep_k = first.keys.shape
    causal = bool(first.meta["fingerprint"]["causal"])
    keys, positions, hashes = first.keys.clone(), first.positions.clone(), first.hashes.clone()
    flat_f = torch.arange(d_ff).repeat_interleave(keep_k)
    for other in partials[1:]:
        for layer in range(n_layers):
            keys[layer], positions[layer], hashes[layer] = _merge_topk(
                keys[layer],
                positions[layer],
                hashes[layer],
                flat_f,
                other.keys[layer].reshape(-1),
                other.positions[layer].reshape(-1),
                other.hashes[layer].reshape(-1),
                dedup=causal,
            )
    sketches = samples.merge_sketches([o.sketches() for o in partials])
    meta = dict(first.meta)
    meta.update(
        ranges=ranges,
        n_batches=sum(o.meta["n_batches"] for o in partials),
        batches_done=sum(o.meta["batches_done"] for o in partials),
        sentences_done=sum(o.meta["sentences_done"] for o in partials),
        tokens_done=sum(o.meta["tokens_done"] for o in partials),
    )
    return Partial(
        meta=meta,
        keys=keys,
        positions=positions,
        hashes=hashes,
        n_positive=sum((o.n_positive for o in partials[1:]), first.n_positive.clone()),
        sum_fixed=sum((o.sum_fixed for o in partials[1:]), first.sum_fixed.clone()),
        max=torch.stack([o.max for o in partials]).amax(dim=0),
        hist=sum((o.hist for o in partials[1:]), first.hist.clone()),
        n_positions=sum((o.n_positions for o in partials[1:]), first.n_positions.clone()),
        n_above_tenth=sum((o.n_above_tenth for o in partials[1:]), first.n_above_tenth.clone()),
        n_sparsity_positions=sum(
            (o.n_sparsity_positions for o in partials[1:]), first.n_sparsity_positions.clone()
        ),
        **sketches,
    )
