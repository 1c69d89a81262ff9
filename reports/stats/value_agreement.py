"""§4 value agreement: over the sampled keys (counted here) and over every key of every
layer (from the mining pass's counts), with Wilson 95% intervals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .arrays import StudyArrays, layer_positions, num

# The 97.5th percentile of the standard normal: Wilson 95% intervals.
Z95 = 1.959963984540054


def wilson_interval(
    successes: np.ndarray | int, n: np.ndarray | int, z: float = Z95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion (Wilson 1927; Newcombe 1998's
    method 3): unlike the normal approximation it stays inside [0, 1] and is not empty
    at 0 successes, which is what §4's rates near 0 need. Elementwise; nan where n = 0."""
    k = np.asarray(successes, dtype=np.float64)
    total = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / total
        z2n = z * z / total
        centre = (p + z2n / 2) / (1 + z2n)
        half = z / (1 + z2n) * np.sqrt(p * (1 - p) / total + z2n / (4 * total))
        low = np.where(k <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))
        high = np.where(k >= total, 1.0, np.clip(centre + half, 0.0, 1.0))
    empty = total <= 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def rate_block(matches: int, n: int) -> dict[str, Any]:
    """A §4 rate: matches of n, the rate and its Wilson 95% interval (null where n = 0)."""
    low, high = wilson_interval(matches, n)
    return {
        "matches": int(matches),
        "n": int(n),
        "rate": num(matches / n) if n else None,
        "low": num(low),
        "high": num(high),
    }


# Why §4 has no rate for a study; the UI translates the code.
NOT_APPLICABLE_ENCODER = "encoder"  # no next token: the model sees the whole sentence
NOT_COUNTED = "not_counted"  # imported, or mined before the pass counted every key
COUNTS_INVALID = "counts_invalid"  # the stored counts do not follow their contract
REASONS = (NOT_APPLICABLE_ENCODER, NOT_COUNTED, COUNTS_INVALID)
VALUE_AGREEMENT_FORMAT = "ffkv.value-agreement/v1"
READINGS = ("next_token", "trigger_token")
VARIANTS = ("without_final_norm", "with_final_norm")
NEXT_TOKEN_END = -1  # the trigger is the sentence's last token
NEXT_TOKEN_UNKNOWN = -2  # the sentence was cut at max_tokens: the next token is unknown


def value_agreement(
    arrays: StudyArrays, *, is_causal: bool = True, keys: np.ndarray | None = None
) -> dict[str, Any]:
    """§4 over the sampled keys: how often the value's argmax token is the next token (a)
    or the trigger token (b) of the key's rank-1 trigger prefix. An end of sentence (-1)
    never matches and stays in the denominator; an unknown next token (-2, a cut
    sentence) is left out of reading (a)'s denominator and counted in ``next_unknown``.
    ``keys`` [K] bool: only these keys (the curated ones, for the gold view)."""
    layer_pos = layer_positions(arrays)
    n_layers = len(arrays.layers)
    known = (arrays.value_top_id >= 0) & arrays.prefix_exists[:, :1].any(axis=1)
    if keys is not None:
        known &= keys
    end = known & (arrays.top1_next_id == NEXT_TOKEN_END)
    unknown = known & (arrays.top1_next_id == NEXT_TOKEN_UNKNOWN)
    nxt = known & (arrays.top1_next_id >= 0) & (arrays.value_top_id == arrays.top1_next_id)
    trg = known & (arrays.top1_trigger_id >= 0) & (arrays.value_top_id == arrays.top1_trigger_id)
    counts = np.stack(
        [
            np.bincount(layer_pos[mask], minlength=n_layers)
            for mask in (known, end, unknown, nxt, trg)
        ],
        axis=1,
    )  # [L, 5]: keys, end of sentence, unknown next token, next- and trigger-token matches

    def row(layer: int | None, c: np.ndarray) -> dict[str, Any]:
        k, e, u, a, b = (int(x) for x in c)
        return {
            "layer": layer,
            "n_keys": k,
            "next_end": e,
            "next_unknown": u,
            "next_token": rate_block(a, k - u),
            "trigger_token": rate_block(b, k),
        }

    return {
        "applicable": is_causal,
        "reason": None if is_causal else NOT_APPLICABLE_ENCODER,
        "vocab_size": arrays.vocab_size,
        "random_baseline": 1.0 / arrays.vocab_size if arrays.vocab_size else None,
        "layers": (
            [row(int(layer), counts[s]) for s, layer in enumerate(arrays.layers)]
            if is_causal
            else []
        ),
        "overall": row(None, counts.sum(axis=0)) if is_causal else None,
    }


class CountsInvalid(ValueError):
    """The stored §4 counts break ``Study.value_agreement``'s contract."""


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CountsInvalid(f"{where} must be a non-negative integer")
    return value


def _parse_every_key(stored: Any) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The stored counts as (variants, layers [L], counts [L, 3 + 2·V]): n_keys,
    next_end, next_unknown, then next-token matches per variant, trigger-token matches
    per variant. Raises ``CountsInvalid`` naming the first thing wrong."""
    if not isinstance(stored, dict) or stored.get("format") != VALUE_AGREEMENT_FORMAT:
        raise CountsInvalid(f"format must be {VALUE_AGREEMENT_FORMAT!r}")
    variants = stored.get("variants")
    if (
        not isinstance(variants, list)
        or not variants
        or any(v not in VARIANTS for v in variants)
        or len(set(variants)) != len(variants)
    ):
        raise CountsInvalid(f"variants must be a list of {', '.join(VARIANTS)}")
    rows = stored.get("layers")
    if not isinstance(rows, list):
        raise CountsInvalid("layers must be a list")
    layers, counts = [], []
    for i, row in enumerate(rows):
        where = f"layers[{i}]"
        if not isinstance(row, dict):
            raise CountsInvalid(f"{where} must be an object")
        layer = _count(row.get("layer"), f"{where}.layer")
        n, end, unknown = (
            _count(row.get(name), f"{where}.{name}")
            for name in ("n_keys", "next_end", "next_unknown")
        )
        if layer < 1 or layer in layers:
            raise CountsInvalid(f"{where}.layer must be a new layer, from 1")
        if end + unknown > n:
            raise CountsInvalid(f"{where}: next_end + next_unknown exceed n_keys")
        matches = []
        for reading, denominator in (("next_token", n - unknown - end), ("trigger_token", n)):
            by_variant = row.get(reading)
            if not isinstance(by_variant, dict):
                raise CountsInvalid(f"{where}.{reading} must be an object")
            for variant in variants:
                m = _count(by_variant.get(variant), f"{where}.{reading}.{variant}")
                if m > denominator:
                    raise CountsInvalid(f"{where}.{reading}.{variant} exceeds its keys")
                matches.append(m)
        layers.append(layer)
        counts.append([n, end, unknown, *matches])
    order = np.argsort(layers, kind="stable")
    table = np.asarray(counts, dtype=np.int64).reshape(len(rows), 3 + 2 * len(variants))
    return list(variants), np.asarray(layers, dtype=np.int64)[order], table[order]


def value_agreement_every_key(
    stored: Any, *, is_causal: bool, layers: Sequence[int] | None = None
) -> dict[str, Any]:
    """§4 over every key of every layer, from the counts the mining pass stored
    (``Study.value_agreement``): per layer and overall, per reading and variant, the
    matches, the denominator, the rate and its Wilson 95% interval. Reading (a)'s
    denominator leaves out the keys whose next token is unknown (a cut sentence);
    reading (b)'s is every key. ``layers`` (from 1) restricts it to the report's layers."""
    base: dict[str, Any] = {
        "applicable": False,
        "reason": None,
        "detail": None,
        "format": None,
        "vocab_size": None,
        "random_baseline": None,
        "final_norm": None,
        "variants": [],
        "layers": [],
        "overall": None,
    }
    if not is_causal:
        return {**base, "reason": NOT_APPLICABLE_ENCODER}
    if not stored:
        return {**base, "reason": NOT_COUNTED}
    try:
        variants, present, counts = _parse_every_key(stored)
        vocab = _count(stored.get("vocab_size"), "vocab_size")
        final_norm = stored.get("final_norm")
        if final_norm is not None and not isinstance(final_norm, str):
            raise CountsInvalid("final_norm must be a module path or null")
    except CountsInvalid as exc:
        return {**base, "reason": COUNTS_INVALID, "detail": str(exc)}
    if layers is not None:
        keep = np.isin(present, np.asarray(list(layers), dtype=np.int64))
        present, counts = present[keep], counts[keep]
    n_var = len(variants)

    def row(layer: int | None, c: np.ndarray) -> dict[str, Any]:
        n, end, unknown = (int(x) for x in c[:3])
        next_n = n - unknown
        return {
            "layer": layer,
            "n_keys": n,
            "next_end": end,
            "next_unknown": unknown,
            "next_token": {v: rate_block(int(c[3 + i]), next_n) for i, v in enumerate(variants)},
            "trigger_token": {
                v: rate_block(int(c[3 + n_var + i]), n) for i, v in enumerate(variants)
            },
        }

    return {
        **base,
        "applicable": True,
        "format": VALUE_AGREEMENT_FORMAT,
        "vocab_size": vocab,
        "random_baseline": 1.0 / vocab if vocab else None,
        "final_norm": final_norm,
        "variants": variants,
        "layers": [row(int(layer), counts[s]) for s, layer in enumerate(present)],
        "overall": row(None, counts.sum(axis=0)),
    }
