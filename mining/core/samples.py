"""Samples below the top, drawn in the mining pass (docs/evidence.md, "How the samples
are drawn").

For each sampled key the pass keeps hash-ranked **bottom-k sketches** of its
per-sentence maxima:

- a **band sketch**: per fine fixed bin of the sentence's maximum (``band_bins``: 8 bins
  an octave from 2^-12 to 2^12, a function of the float's bits, plus one bin for the
  positive values below; the last bin also takes everything above), the ``BIN_K``
  entries with the smallest draw keys;
- a **random sketch**: over every sentence, whatever its maximum, the ``RANDOM_K``
  entries with the smallest draw keys of a second hash.

An entry is (draw key, position, coefficient): the sentence's maximum for the key, its
earliest position and, as the draw key, ``(hash31(seed, layer, key, sentence) << 32) |
sentence`` (``draw_keys``), unique per sentence, so that every order is total. A bottom-k
of a union is the bottom-k of the parts' bottom-k's: sketches merge exactly, and a
sharded run holds the same sketches as one pass, bit for bit. Memory is O(sampled keys ×
bins × k), flat in the corpus size.

After the pass (``draw``): band b of the key is (low, high] = ((b-1)·max/5, b·max/5],
max the key's largest per-sentence coefficient; its sample is the ``PER_BAND`` smallest
draw keys among the entries of the bins that overlap the band, inside the band and not
a sentence of the key's top-k or held-out examples. The random samples are the first
``N_RANDOM`` entries of the random sketch in draw order that are in none of those sets
(nor a band sample), the held-out random ones the next ``N_RANDOM``. For a causal model,
where two sentences that begin alike have the same coefficients there, a sample never
shows the prefix (the tokens up to its position, ``prefix_of``) of a top-k or held-out
example, and no two band samples show the same one: such an entry is passed over for the
next in draw order, as a sentence already taken is. Random samples may share a prefix
with each other: they stand for the corpus's sentences, drawn uniformly. A draw is **exact**
(the one a full scan of the corpus would make) when every bin it read that may have
dropped entries (a full bin) dropped only entries ranked after the last one chosen.

Hot path: per batch, the sampled keys' columns are gathered in each layer's hook (a few
per layer), then one vectorised pass over all of them filters the candidates against
each sketch's current threshold; they are buffered and merged in bulk. No Python loop
over keys, positions or sentences.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

N_BANDS = 5
PER_BAND = 5
N_RANDOM = 25  # random samples, and as many held-out random ones
BIN_K = 12  # entries kept per bin of the band sketch
RANDOM_K = 96  # entries kept by the random sketch: 2 × 25 plus spares for the exclusions
# Sampled keys a run draws samples for: the sketches take BIN_K × N_SAMPLE_BINS × 16 bytes
# (37 KiB) per key; a run over every key of a model draws none.
MAX_SAMPLED_KEYS = 1024
# Fine bins: 8 an octave (the float's exponent and top 3 mantissa bits) over
# [2^-12, 2^12); bin 0 holds the positive maxima below 2^-12, the last bin everything
# from 2^12 - 2^9 up. Non-positive maxima belong to no band.
_LOW_CODE = (127 - 12) << 3  # (bits >> 20) of 2^-12
_HIGH_CODE = (127 + 12) << 3  # of 2^12
N_SAMPLE_BINS = _HIGH_CODE - _LOW_CODE + 1  # 193
EMPTY = np.iinfo(np.int64).max  # an empty sketch slot: after every draw key
BAND_SALT = 0x62616E64  # "band"
RANDOM_SALT = 0x72616E64  # "rand"
_M1 = -4658895280553007687  # 0xBF58476D1CE4E5B9 as a signed int64 (splitmix64)
_M2 = -7723592293110705685  # 0x94D049BB133111EB
_GOLDEN = -7046029254386353131  # 0x9E3779B97F4A7C15
_LOW32 = (1 << 32) - 1


def _shr(x: torch.Tensor, n: int) -> torch.Tensor:
    """Logical right shift of int64 (torch's >> is arithmetic)."""
    return (x >> n) & ((1 << (64 - n)) - 1)


def _mix(x: torch.Tensor) -> torch.Tensor:
    """splitmix64's finaliser, in wrapping int64 arithmetic."""
    x = (x ^ _shr(x, 30)) * _M1
    x = (x ^ _shr(x, 27)) * _M2
    return x ^ _shr(x, 31)


def key_salts(seed: int, keys: Sequence[tuple[int, int]], salt: int) -> torch.Tensor:
    """[n_keys] int64: one hash state per (seed, layer, key) and sketch."""
    layers = torch.tensor([k[0] for k in keys], dtype=torch.int64)
    index = torch.tensor([k[1] for k in keys], dtype=torch.int64)
    x = _mix(torch.full_like(layers, (seed * 0x10001 + salt) & 0x7FFFFFFFFFFF) + _GOLDEN)
    x = _mix(x ^ (layers * _GOLDEN))
    return _mix(x ^ (index * _M1))


def draw_keys(salts: torch.Tensor, sentences: torch.Tensor) -> torch.Tensor:
    """[n, n_keys] int64 draw keys of sentences [n] for keys with ``salts`` [n_keys]:
    a 31-bit hash of (key, sentence) in the high half, the sentence in the low half
    (non-negative, unique per sentence, so bottom-k is a total order)."""
    x = _mix(salts[None, :] ^ ((sentences[:, None] + 1) * _GOLDEN))
    return (_shr(x, 33) << 32) | sentences[:, None]


def band_bins(values: torch.Tensor) -> torch.Tensor:
    """Bin of each float32 maximum (``N_SAMPLE_BINS`` of them), -1 where it is <= 0."""
    bits = values.contiguous().view(torch.int32)
    code = (bits >> 20).to(torch.int64)
    fine = (code - _LOW_CODE + 1).clamp_(1, N_SAMPLE_BINS - 1)
    return torch.where(bits <= 0, -1, torch.where(code < _LOW_CODE, 0, fine))


def bin_bounds() -> tuple[np.ndarray, np.ndarray]:
    """[N_SAMPLE_BINS] float64 each: bin b holds the maxima v with lo[b] <= v < hi[b]
    (bin 0: 0 < v < 2^-12; the last bin has no upper end)."""
    codes = np.arange(_LOW_CODE, _HIGH_CODE, dtype=np.int64)
    edges = (codes << 20).astype(np.int32).view(np.float32).astype(np.float64)
    lo = np.concatenate([[0.0], edges])
    hi = np.concatenate([edges, [math.inf]])
    return lo, hi


def band_edges(maximum: float) -> list[tuple[float, float]]:
    """The 5 bands (low, high] of equal width over (0, maximum]; the last ends at it."""
    width = maximum / N_BANDS
    return [(b * width, maximum if b == N_BANDS - 1 else (b + 1) * width) for b in range(N_BANDS)]


# --- the sketches during the pass -------------------------------------------------


def _bottom_k(
    rows: torch.Tensor,
    keys: torch.Tensor,
    pos: torch.Tensor,
    vals: torch.Tensor,
    state_k: torch.Tensor,
    state_p: torch.Tensor,
    state_v: torch.Tensor,
) -> None:
    """Merge entries (row into the flattened sketch, draw key, position, value) into the
    sketch state [n_rows, k] in place: each touched row keeps its k smallest draw keys,
    sorted ascending (EMPTY after the last)."""
    if rows.numel() == 0:
        return
    k = state_k.shape[1]
    touched, inverse = torch.unique(rows, return_inverse=True)
    n = touched.numel()
    device = state_k.device
    all_r = torch.cat([torch.arange(n, device=device).repeat_interleave(k), inverse])
    all_k = torch.cat([state_k[touched].reshape(-1), keys])
    all_p = torch.cat([state_p[touched].reshape(-1), pos])
    all_v = torch.cat([state_v[touched].reshape(-1), vals])
    order = torch.sort(all_k, stable=True).indices
    order = order[torch.sort(all_r[order], stable=True).indices]
    counts = torch.bincount(all_r, minlength=n)  # >= k: each row's state is in it
    starts = torch.cumsum(counts, 0) - counts
    take = order[starts[:, None] + torch.arange(k, device=device)[None, :]]  # [n, k]
    state_k[touched] = all_k[take]
    state_p[touched] = all_p[take]
    state_v[touched] = all_v[take]


class SampleSketcher:
    """Updates a Partial's sample sketches (``band_*``, ``rand_*`` tensors, indexed by
    the position of each key in ``keys``) from the forward hooks of a batch."""

    def __init__(
        self,
        keys: Sequence[tuple[int, int]],
        seed: int,
        n_layers: int,
        tensors: dict[str, torch.Tensor],
        device: torch.device,
        batch_size: int,
    ) -> None:
        self.n_keys = len(keys)
        self.t = tensors  # band_keys/pos/vals [n, bins, BIN_K]; rand_* [n, RANDOM_K]
        self.device = device
        self.cols: dict[int, torch.Tensor] = {}
        order: list[int] = []
        for layer in range(n_layers):
            mine = [j for j, (lyr, _) in enumerate(keys) if lyr == layer]
            if mine:
                self.cols[layer] = torch.tensor([keys[j][1] for j in mine], device=device)
                order.extend(mine)
        # Gathered columns come in layer order; ``order`` maps them back to key slots.
        self.slot_of_col = torch.tensor(order, dtype=torch.int64, device=device)
        self.band_salts = key_salts(seed, keys, BAND_SALT).to(device)
        self.rand_salts = key_salts(seed, keys, RANDOM_SALT).to(device)
        self._parts: list[torch.Tensor] = []
        self._real: torch.Tensor | None = None
        self._sentences: torch.Tensor | None = None
        # Entries wait in two fixed buffers (band, random) until one holds ``cap``; a
        # batch adds at most batch_size × n_keys to each. Fixed, because small tensors
        # kept batch after batch would lie among the freed activations and keep the
        # allocator from reusing them: the pass's memory then grew with the corpus
        # (docs/mining.md, "Memory").
        self.cap = max(4096, 8 * self.n_keys * 32)
        size = self.cap + batch_size * self.n_keys
        self._band = _Pending(size, device)
        self._rand = _Pending(size, device)
        self._thresholds()

    def _thresholds(self) -> None:
        self.band_floor = self.t["band_keys"][:, :, -1].reshape(-1)  # [n * bins]
        self.rand_floor = self.t["rand_keys"][:, -1]  # [n]

    def begin_batch(self, sentences: np.ndarray, real: np.ndarray) -> None:
        self._parts = []
        self._real = torch.from_numpy(np.ascontiguousarray(real)).to(self.device)
        self._sentences = torch.from_numpy(np.ascontiguousarray(sentences, np.int64)).to(
            self.device
        )

    def on_layer(self, layer: int, m: torch.Tensor) -> None:
        cols = self.cols.get(layer)
        if cols is not None:
            self._parts.append(m.index_select(2, cols))  # [batch, pos, keys of the layer]

    def end_batch(self) -> None:
        if not self._parts:
            return
        assert self._real is not None and self._sentences is not None
        sel = torch.cat(self._parts, dim=2).float()  # [batch, pos, n] (layer order)
        self._parts = []
        sel = sel.masked_fill(~self._real[:, :, None], -math.inf)
        best, where = sel.max(dim=1)  # [batch, n]; max's index: the earliest maximum
        best = best + 0.0  # -0.0 -> +0.0
        where = where.to(torch.int32)
        slots = self.slot_of_col  # [n]
        sentences = self._sentences
        # Band sketch: one bin per (sentence, key) with a positive maximum.
        bins = band_bins(best)  # [batch, n]
        bdraw = draw_keys(self.band_salts[slots], sentences)  # [batch, n]
        rows = slots[None, :] * N_SAMPLE_BINS + bins.clamp(min=0)
        keep = (bins >= 0) & (bdraw < self.band_floor[rows])
        self._band.add(keep, rows, bdraw, where, best)
        rdraw = draw_keys(self.rand_salts[slots], sentences)
        rrows = slots[None, :].expand_as(rdraw)
        self._rand.add(rdraw < self.rand_floor[rrows], rrows, rdraw, where, best)
        if max(self._band.n, self._rand.n) >= self.cap:
            self.flush()

    def flush(self) -> None:
        t = self.t
        n = self.n_keys
        shape = (n * N_SAMPLE_BINS, BIN_K)
        _bottom_k(
            *self._band.take(),
            t["band_keys"].view(shape),
            t["band_pos"].view(shape),
            t["band_vals"].view(shape),
        )
        _bottom_k(*self._rand.take(), t["rand_keys"], t["rand_pos"], t["rand_vals"])
        self._thresholds()


class _Pending:
    """Sketch entries (row, draw key, position, value) waiting to be merged, in fixed
    buffers of ``size``."""

    def __init__(self, size: int, device: torch.device) -> None:
        self.rows = torch.empty(size, dtype=torch.int64, device=device)
        self.keys = torch.empty(size, dtype=torch.int64, device=device)
        self.pos = torch.empty(size, dtype=torch.int32, device=device)
        self.vals = torch.empty(size, dtype=torch.float32, device=device)
        self.n = 0

    def add(
        self,
        keep: torch.Tensor,
        rows: torch.Tensor,
        keys: torch.Tensor,
        pos: torch.Tensor,
        vals: torch.Tensor,
    ) -> None:
        """Append the entries where ``keep`` (all five the same shape)."""
        got = int(keep.sum())
        if got == 0:
            return
        end = self.n + got
        self.rows[self.n : end] = rows[keep]
        self.keys[self.n : end] = keys[keep]
        self.pos[self.n : end] = pos[keep]
        self.vals[self.n : end] = vals[keep]
        self.n = end

    def take(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The waiting entries (views of the buffers, valid until the next ``add``);
        the buffers are then empty."""
        n, self.n = self.n, 0
        return self.rows[:n], self.keys[:n], self.pos[:n], self.vals[:n]


def empty_sketches(n_keys: int) -> dict[str, torch.Tensor]:
    return {
        "band_keys": torch.full((n_keys, N_SAMPLE_BINS, BIN_K), EMPTY, dtype=torch.int64),
        "band_pos": torch.zeros((n_keys, N_SAMPLE_BINS, BIN_K), dtype=torch.int32),
        "band_vals": torch.zeros((n_keys, N_SAMPLE_BINS, BIN_K), dtype=torch.float32),
        "rand_keys": torch.full((n_keys, RANDOM_K), EMPTY, dtype=torch.int64),
        "rand_pos": torch.zeros((n_keys, RANDOM_K), dtype=torch.int32),
        "rand_vals": torch.zeros((n_keys, RANDOM_K), dtype=torch.float32),
    }


def merge_sketches(parts: Sequence[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The sketches of the union of disjoint sentence ranges: exact."""
    out = {name: tensor.clone() for name, tensor in parts[0].items()}
    n = out["rand_keys"].shape[0]
    shape = (n * N_SAMPLE_BINS, BIN_K)
    band_rows = torch.arange(n * N_SAMPLE_BINS).repeat_interleave(BIN_K)
    rand_rows = torch.arange(n).repeat_interleave(RANDOM_K)
    for other in parts[1:]:
        bk = other["band_keys"].reshape(-1)
        real = bk != EMPTY
        _bottom_k(
            band_rows[real],
            bk[real],
            other["band_pos"].reshape(-1)[real],
            other["band_vals"].reshape(-1)[real],
            out["band_keys"].view(shape),
            out["band_pos"].view(shape),
            out["band_vals"].view(shape),
        )
        rk = other["rand_keys"].reshape(-1)
        real = rk != EMPTY
        _bottom_k(
            rand_rows[real],
            rk[real],
            other["rand_pos"].reshape(-1)[real],
            other["rand_vals"].reshape(-1)[real],
            out["rand_keys"],
            out["rand_pos"],
            out["rand_vals"],
        )
    return out


# --- the draw after the pass -------------------------------------------------------


@dataclass
class Drawn:
    """One drawn sentence of a key: ``kind`` "band", "random" or "heldout_random"."""

    kind: str
    order: int  # from 1 within the kind (band: band by band, then draw order)
    sentence: int
    position: int
    coefficient: float
    band: int | None = None
    band_low: float | None = None
    band_high: float | None = None


@dataclass
class KeyDraw:
    samples: list[Drawn]  # bands 1..5, then random
    heldout_random: list[Drawn]
    bands_exact: list[bool]  # per band: the draw a full scan would make
    random_exact: bool


# The prefix hash (``miner.prefix_hashes``) of each (sentence, position): the tokens up to
# and including the position.
PrefixOf = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _first_distinct(
    order: np.ndarray,
    sentences: np.ndarray,
    positions: np.ndarray,
    want: int,
    prefix_of: PrefixOf | None,
    seen: set[int],
) -> np.ndarray:
    """The first ``want`` of ``order`` (indices into ``sentences`` and ``positions``, in
    draw order) whose prefix is neither in ``seen`` nor an earlier one's; their prefixes
    join ``seen``. Hashes ``2·want`` entries at a time: most draws need one round."""
    if prefix_of is None:
        return order[:want]
    chosen: list[np.ndarray] = []
    found, start = 0, 0
    while found < want and start < order.size:
        chunk = order[start : start + 2 * want]
        start += chunk.size
        hashes = prefix_of(sentences[chunk], positions[chunk])
        first = np.zeros(chunk.size, dtype=bool)
        first[np.unique(hashes, return_index=True)[1]] = True
        fresh = first & ~np.isin(hashes, np.fromiter(seen, np.int64, len(seen)))
        picked = np.flatnonzero(fresh)[: want - found]
        seen.update(hashes[picked].tolist())
        chosen.append(chunk[picked])
        found += picked.size
    return np.concatenate(chosen) if chosen else order[:0]


def draw(
    sketches: dict[str, torch.Tensor],
    slot: int,
    maximum: float,
    excluded: set[int],
    prefix_of: PrefixOf | None = None,
    excluded_prefixes: Iterable[int] = (),
) -> KeyDraw:
    """The samples of the key at ``slot`` of the sketches: bands of (0, ``maximum``],
    none of them a sentence of ``excluded`` (the key's top-k and held-out sentences).
    With ``prefix_of`` (a causal model), none shows a prefix of ``excluded_prefixes`` (the
    hashes of those examples' prefixes), nor a band sample another's."""
    keys = sketches["band_keys"][slot].numpy()  # [bins, BIN_K] ascending
    pos = sketches["band_pos"][slot].numpy()
    vals = sketches["band_vals"][slot].numpy()
    lo, hi = bin_bounds()
    samples: list[Drawn] = []
    bands_exact: list[bool] = []
    taken = set(excluded)
    shown = set(excluded_prefixes)
    seen = set(shown)  # and the band samples' prefixes, as they are drawn
    if maximum > 0 and math.isfinite(maximum):
        for b, (low, high) in enumerate(band_edges(maximum), start=1):
            over = np.flatnonzero((lo <= high) & (hi > low))  # bins overlapping the band
            k, p, v = keys[over].reshape(-1), pos[over].reshape(-1), vals[over].reshape(-1)
            sent = (k & _LOW32).astype(np.int64)
            ok = (k != EMPTY) & (v > low) & (v <= high)
            ok &= ~np.isin(sent, np.fromiter(taken, np.int64, len(taken)))
            idx = np.flatnonzero(ok)
            idx = idx[np.argsort(k[idx], kind="stable")]
            idx = _first_distinct(idx, sent, p.astype(np.int64), PER_BAND, prefix_of, seen)
            full = keys[over, -1] != EMPTY  # bins that may have dropped entries
            if idx.size < PER_BAND:
                exact = not bool(full.any())
            else:
                exact = bool((k[idx[-1]] <= keys[over, -1][full]).all())
            bands_exact.append(exact)
            for j in idx:
                samples.append(
                    Drawn(
                        "band",
                        len(samples) + 1,
                        int(sent[j]),
                        int(p[j]),
                        float(v[j]),
                        b,
                        float(low),
                        float(high),
                    )
                )
                taken.add(int(sent[j]))
    else:
        bands_exact = [True] * N_BANDS
    rk = sketches["rand_keys"][slot].numpy()
    rsent = (rk & _LOW32).astype(np.int64)
    rpos, rval = sketches["rand_pos"][slot].numpy(), sketches["rand_vals"][slot].numpy()
    ok = (rk != EMPTY) & ~np.isin(rsent, np.fromiter(taken, np.int64, len(taken)))
    if prefix_of is not None and shown:
        candidates = np.flatnonzero(ok)
        hashes = prefix_of(rsent[candidates], rpos[candidates].astype(np.int64))
        ok[candidates] = ~np.isin(hashes, np.fromiter(shown, np.int64, len(shown)))
    idx = np.flatnonzero(ok)[: 2 * N_RANDOM]  # the sketch is sorted by draw key
    full = rk[-1] != EMPTY
    random_exact = not full if idx.size < 2 * N_RANDOM else bool(rk[idx[-1]] <= rk[-1])
    picked = [(int(rsent[j]), int(rpos[j]), float(rval[j])) for j in idx]
    randoms = [Drawn("random", i + 1, *e) for i, e in enumerate(picked[:N_RANDOM])]
    held = [Drawn("heldout_random", i + 1, *e) for i, e in enumerate(picked[N_RANDOM:])]
    return KeyDraw(samples + randoms, held, bands_exact, random_exact)
