"""The bootstrap over keys: replicate sums of per-key stats, drawn with replacement within
each layer, and percentile intervals from them."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from .arrays import num

BOOTSTRAP_REPLICATES = 1000
BOOTSTRAP_SEED = 0
BOOTSTRAP_CHUNK = 100
# An interval resampled from fewer keys than this is marked as resting on few keys. Over
# a handful of keys the bootstrap is lumpy (n keys give at most C(2n−1, n) distinct
# resamples: 10 for 3 keys, 92,378 for 10) and too narrow (the spread of the resampled
# statistic shrinks with the (n−1)/n of the plug-in variance), so its interval looks
# surer than the data are. 10 keys a layer is also the paper's sample.
MIN_BOOTSTRAP_KEYS = 10


def exact_dtype(rows: np.ndarray, n_draws: int) -> type[np.floating[Any]]:
    """float32 where every replicate sum of ``rows`` (``n_draws`` rows drawn) is exact in
    it, as in float64: non-negative integers or halves whose largest possible sum stays
    under 2^24 (counted in halves). The product then costs half as much. float64
    otherwise."""
    if rows.size == 0 or rows.min() < 0:
        return np.float64
    halves = rows * 2
    if not np.array_equal(halves, np.round(halves)):
        return np.float64
    scale = 1 if np.array_equal(rows, np.round(rows)) else 2
    exact = n_draws < 2**24 and scale * n_draws * float(rows.max()) < 2**24
    return np.float32 if exact else np.float64


@functools.cache
def _controller() -> ThreadpoolController:
    # Built once: it lists the loaded native libraries, which costs a scan of them.
    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run numpy's matrix products on the calling thread only. OpenBLAS's other threads
    spin after each product, waiting for the next: on a busy machine they take the cores
    that the bootstrap's draws and counts need between products (measured on 2 busy
    cores: the bootstrap took 4.3 s with them, 1.6 s without). threadpoolctl finds the
    BLAS that numpy loaded, whichever it is, and restores its thread count on exit."""
    with _controller().limit(limits=1, user_api="blas"):
        yield


def bootstrap_sums(
    stats: np.ndarray, strata: np.ndarray, n_strata: int, replicates: int, seed: int
) -> np.ndarray:
    """[n_strata, B, S]: per stratum, B replicate sums of keys drawn with replacement
    within the stratum. One matrix product per stratum and chunk of replicates."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n_strata, replicates, stats.shape[1]))
    with one_blas_thread():
        for s in range(n_strata):
            _replicate_sums(out[s], stats[strata == s], rng, replicates)
    return out


def _replicate_sums(
    out: np.ndarray, rows: np.ndarray, rng: np.random.Generator, replicates: int
) -> None:
    """``out`` [B, S] ← B sums of ``rows`` drawn with replacement, B = ``replicates``."""
    n = rows.shape[0]
    if n:
        dtype = exact_dtype(rows, n)
        rows = rows.astype(dtype)
        weights = np.empty((BOOTSTRAP_CHUNK, n), dtype=dtype)
        for start in range(0, replicates, BOOTSTRAP_CHUNK):
            b = min(BOOTSTRAP_CHUNK, replicates - start)
            draws = rng.integers(0, n, size=(b, n))
            # Weights: how often each key was drawn in each replicate. One count per
            # replicate: its n counters stay in cache (one count over all b·n is ~4×
            # slower).
            for r in range(b):
                weights[r] = np.bincount(draws[r], minlength=n)
            out[start : start + b] = weights[:b] @ rows


def estimate(
    point: float, replicates: np.ndarray, n_units: float, n_keys: int = 0
) -> dict[str, Any]:
    """A statistic, its 95% percentile interval over ``replicates`` (none where it is
    undefined), the units it is computed over and the ``n_keys`` keys the bootstrap
    resampled; ``few_keys`` where there is an interval and it rests on fewer than
    ``MIN_BOOTSTRAP_KEYS`` keys."""
    ok = replicates[~np.isnan(replicates)]
    low = high = None
    if ok.size and math.isfinite(point):
        low, high = (float(x) for x in np.percentile(ok, [2.5, 97.5]))
    return {
        "value": num(point),
        "low": low,
        "high": high,
        "n_units": int(n_units),
        "n_keys": int(n_keys),
        "few_keys": low is not None and n_keys < MIN_BOOTSTRAP_KEYS,
    }
