"""The miner's CPU kernel: one compiled pass over a layer's coefficients per batch.

On the CPU the miner is bound by memory traffic: a handful of tensor operations per
layer (per-sentence max, count of m > 0, sum, then a gather of the candidates' columns
for their argmax) each read the [batch, pos, d_ff] coefficients again, and each
small operation pays a thread synchronisation. ``update_layer`` reads them once and,
in the same pass, updates every per-key statistic and inserts the per-sentence maxima
that beat a key's K-th best straight into its top-K (with the prefix dedup), so that
nothing is buffered. While the kernel runs, each key's row is a min-heap (its K-th best
at slot 0); the miner hands out rows sorted best first, as the tensor path keeps them.
It computes exactly what the portable tensor path in ``miner._StreamingMiner``
computes (the rank-key order, earliest position on ties, dedup of equal prefixes,
empty slots as SENTINEL/0/0); only the sums are added in
another order (float32 per sentence, float64 over the batch) before they go to the
fixed-point total, so the mean may differ from the tensor path's in the last digits.

The reduction is split over the cores by sentence, the state updates by blocks of keys
(no two threads touch one key's state). numba compiles the kernels on first use and
caches the machine code on disk. ``FFKV_MINING_KERNEL=tensor`` turns them off.

Used for float32 on the CPU; bfloat16 and CUDA use the tensor path (on a GPU the
extra passes cost little next to the forward).
"""

from __future__ import annotations

import os
from typing import Any

import numba
import numpy as np

# numba's OpenMP layer would be a second OpenMP runtime beside torch's, and the two
# pools' spinning threads fight for the cores between a layer's matmuls and the kernel
# (0.88x of forward-only on 2 cores instead of 0.96x); the work-queue layer's threads
# sleep when idle. NUMBA_THREADING_LAYER still overrides it.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"  # type: ignore[attr-defined]

SENTINEL = np.iinfo(np.int64).min  # an empty top-K slot; below every real key
MAX_SENTENCES = 2**32 - 1  # the low 32 bits of a rank key hold the sentence index
SUM_SCALE = 2.0**20  # sums are kept in int64 fixed point: associative, hence exact shards
# Sparsity (docs/composition.md): a key counts at a position where its m is above this
# share of the position's largest m; counted at every SPARSITY_EVERY-th position (where
# sentence index + position is a multiple of it), which costs a quarter as much, and is
# still a function of the sentence indices alone (shards add up exactly).
TENTH = 0.1
SPARSITY_EVERY = 4
KEYS_PER_TASK = 64  # keys per unit of parallel work: a 256-byte slice of each row


STATE = ("keys", "positions", "hashes", "n_positive", "sum_fixed", "max", "hist")


def use_threads(n: int) -> None:
    """Run the kernel on as many threads as torch uses (numba's pool is its own)."""
    limit = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    numba.set_num_threads(max(1, min(n, limit)))


def available() -> bool:
    return os.environ.get("FFKV_MINING_KERNEL", "auto") != "tensor"


def _njit(**options: Any) -> Any:
    def decorate(fn: Any) -> Any:
        try:
            return numba.njit(cache=True, boundscheck=False, nogil=True, **options)(fn)
        except RuntimeError:  # no writable cache location (read-only install): compile
            return numba.njit(cache=False, boundscheck=False, nogil=True, **options)(fn)

    return decorate


@_njit()
def _sift_down(keys: Any, positions: Any, hashes: Any, c: int, i: int) -> None:
    """Restore the min-heap order of key c's row below slot i (its entry grew)."""
    k = keys.shape[1]
    while True:
        child = 2 * i + 1
        if child >= k:
            return
        if child + 1 < k and keys[c, child + 1] < keys[c, child]:
            child += 1
        if keys[c, child] >= keys[c, i]:
            return
        keys[c, i], keys[c, child] = keys[c, child], keys[c, i]
        positions[c, i], positions[c, child] = positions[c, child], positions[c, i]
        hashes[c, i], hashes[c, child] = hashes[c, child], hashes[c, i]
        i = child


@_njit()
def _insert(
    keys: Any, positions: Any, hashes: Any, c: int, rank: int, pos: int, h: int, dedup: bool
) -> None:
    """Put ``rank`` into key c's top-K row if it belongs there.

    A row is a min-heap on the rank keys (slot 0 holds the K-th best, SENTINEL while the
    row is not full): an entrant replaces the root and sinks, O(log K), where a sorted
    row shifted K/2 entries on average (most of the kernel's time while rows fill).
    ``_StreamingMiner.partial`` sorts the rows best first.

    With ``dedup``, an entry with the same prefix hash is kept only if better: the
    better of the two stays, in the worse one's slot (exactly the deduplicated top-K of
    all entries ever seen: an evicted entry of the same prefix was below the whole row).
    """
    if rank <= keys[c, 0]:
        return
    slot = 0
    if dedup:
        for j in range(keys.shape[1]):
            if keys[c, j] != SENTINEL and hashes[c, j] == h:
                if rank <= keys[c, j]:
                    return
                slot = j
                break
    keys[c, slot] = rank
    positions[c, slot] = pos
    hashes[c, slot] = h
    _sift_down(keys, positions, hashes, c, slot)


@_njit()
def _positive_peak(bits: Any) -> Any:
    """The largest positive entry of a row of float32, as its int32 bit pattern (0 where
    none is positive). Positive floats order as their bit patterns do, and an integer
    maximum vectorises where a float one (NaN rules) does not: 10x faster here. The bit
    pattern goes back to a float32 through a one-element array viewed both ways."""
    peak = np.int32(0)
    for c in range(bits.size):
        x = bits[c]
        peak = x if x > peak else peak
    return peak


@_njit(parallel=True)
def _reduce_rows(m: Any, real: Any, sparse_at: Any) -> tuple[Any, Any, Any, Any, Any]:
    """Per sentence and key: max over real positions, its earliest position, the count
    of m > 0 and the sum of m; per sentence, the count of (position, key) with m above a
    tenth of the position's largest m (``TENTH``; none where that is not positive) at the
    positions ``sparse_at`` names. One read of m, a sentence per task, rows contiguous."""
    n_batch, width, d_ff = m.shape
    best = np.empty((n_batch, d_ff), np.float32)
    where = np.zeros((n_batch, d_ff), np.int32)
    count = np.zeros((n_batch, d_ff), np.float32)  # exact: at most 4096 per sentence
    total = np.zeros((n_batch, d_ff), np.float32)
    above = np.zeros(n_batch, np.int64)
    tenth = np.float32(TENTH)
    row_bits = m.view(np.int32)
    for b in numba.prange(n_batch):
        bb = best[b]
        ww = where[b]
        cc = count[b]
        tt = total[b]
        bb[:] = -np.inf
        n_above = 0
        scratch = np.zeros(1, np.int32)  # the peak's bits, read back as a float32
        scratch_f = scratch.view(np.float32)
        for t in range(width):
            if not real[b, t]:
                continue
            row = m[b, t]
            tf = np.int32(t)
            for c in range(d_ff):
                v = row[c]
                gt = v > bb[c]  # strict: the earliest position wins ties
                bb[c] = v if gt else bb[c]
                ww[c] = tf if gt else ww[c]
            for c in range(d_ff):
                v = row[c]
                cc[c] += np.float32(1.0) if v > 0 else np.float32(0.0)
                tt[c] += v
            if not sparse_at[b, t]:
                continue
            # The keys above a tenth of the position's largest positive m; where no m is
            # positive the floor is 0: none. Integer loops, which vectorise (see
            # _positive_peak).
            scratch[0] = _positive_peak(row_bits[b, t])
            floor = tenth * scratch_f[0]
            k = 0
            for c in range(d_ff):
                k += row[c] > floor
            n_above += k
        above[b] = n_above
    return best, where, count, total, above


@_njit(parallel=True)
def _update_keys(
    best: Any,
    where: Any,
    count: Any,
    total: Any,
    sentences: Any,
    prefix_hashes: Any,
    dedup: bool,
    keys: Any,
    positions: Any,
    hashes: Any,
    n_positive: Any,
    sum_fixed: Any,
    maxima: Any,
    hist: Any,
) -> None:
    """Statistics and top-K insertion (rows are min-heaps, see ``_insert``), a block of
    keys per task."""
    n_batch, d_ff = best.shape
    bits = best.view(np.int32)
    n_tasks = (d_ff + KEYS_PER_TASK - 1) // KEYS_PER_TASK
    for task in numba.prange(n_tasks):
        for c in range(task * KEYS_PER_TASK, min(d_ff, (task + 1) * KEYS_PER_TASK)):
            positive = 0.0
            summed = 0.0
            for b in range(n_batch):
                positive += count[b, c]
                summed += total[b, c]
                v = best[b, c]
                if v > maxima[c]:
                    maxima[c] = v
                # Histogram bucket from the exponent bits (see miner.hist_buckets).
                x = bits[b, c]
                magnitude = min(max(((x >> 23) & 0xFF) - 124, 0), 8)
                bucket = 6 - min(magnitude, 6) if x < 0 else magnitude + 7
                hist[c, bucket] += 1
                best[b, c] = v + np.float32(0.0)  # -0.0 -> +0.0: equal floats, equal keys
                x = bits[b, c]
                ordered = x ^ 0x7FFFFFFF if x < 0 else x
                rank = (np.int64(ordered) << 32) | (MAX_SENTENCES - sentences[b])
                if rank > keys[c, 0]:
                    pos = where[b, c]
                    _insert(keys, positions, hashes, c, rank, pos, prefix_hashes[b, pos], dedup)
            n_positive[c] += np.int64(positive)
            sum_fixed[c] += np.int64(np.round(summed * SUM_SCALE))


def sparsity_positions(sentences: np.ndarray, real: np.ndarray) -> np.ndarray:
    """[batch, pos] bool: the real positions where the sparsity count is taken."""
    t = np.arange(real.shape[1])[None, :]
    return real & ((np.asarray(sentences, dtype=np.int64)[:, None] + t) % SPARSITY_EVERY == 0)


def update_layer(
    m: np.ndarray,
    real: np.ndarray,
    sparse_at: np.ndarray,
    sentences: np.ndarray,
    prefix_hashes: np.ndarray,
    dedup: bool,
    state: dict[str, np.ndarray],
) -> int:
    """Fold one layer's coefficients of one batch into its state, in place.

    m [batch, pos, d_ff] float32 (C order); real [batch, pos] bool; sparse_at [batch,
    pos] bool (``sparsity_positions``); sentences [batch]
    int64; prefix_hashes [batch, pos] int64 (zeros for encoders). ``state`` holds the
    layer's views: keys/positions/hashes [d_ff, K], n_positive/sum_fixed/max [d_ff],
    hist [d_ff, bins]. Returns the batch's count of (position, key) above a tenth of
    the position's peak (``Partial.n_above_tenth``).
    """
    best, where, count, total, above = _reduce_rows(m, real, sparse_at)
    _update_keys(
        best, where, count, total, sentences, prefix_hashes, dedup, *(state[n] for n in STATE)
    )
    return int(above.sum())
