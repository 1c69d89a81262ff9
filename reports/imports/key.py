"""A line's ``key`` and each of its ``prefixes``: their additive fields (token ids, the
key's statistics, histogram and perturbation, the trigger's span, token bytes, the
per-token coefficients)."""

from __future__ import annotations

import itertools
import math
from typing import Any

from annotate.imports import (
    NEXT_TOKEN_UNKNOWN,
)

from ..contract.records import (
    MAX_INT,
    MAX_TOKEN,
)
from ..stats.perturbation import PERTURBATIONS
from .fields import (
    _HEX_BYTES,
    _NEXT_TOKEN_ID,
    _POSITION,
    _PREFIX_STRINGS,
    _SENTENCE_INDEX,
    _TRIGGER_TOKEN_ID,
    _float,
    _int,
    _LineError,
    _list,
    _object,
    _str,
)
from .messages import (
    HISTOGRAM_COUNTS,
    HISTOGRAM_EDGES,
    NEXT_ID_NOT_UNKNOWN,
    NEXT_ID_UNKNOWN,
    NOT_NUMBER,
    NOT_NUMBER_OR_NULL,
    NOT_OBJECT,
    TOKEN_BYTES_NOT_HEX,
    TOKEN_COUNT,
    TOKENS_PAIR,
    TRIGGER_SPAN_PAIR,
    TRIGGER_SPAN_RANGE,
    VALUE_IDS_COUNT,
)

MAX_COUNT = 2**53  # a count that JSON carries exactly


def _histogram(value: Any) -> dict[str, Any]:
    """``key.histogram``: {} or the per-sentence maxima's counts between ascending edges
    (``mining.core.miner.HIST_EDGES``), one more count than edges."""
    path = "key.histogram"
    if not isinstance(value, dict):
        raise _LineError(path, NOT_OBJECT)
    if not value:
        return {}
    hist = _object(value, path, {"edges", "counts"})
    edges = [
        _float(e, f"{path}.edges[{i}]") for i, e in enumerate(_list(hist["edges"], f"{path}.edges"))
    ]
    if any(b <= a for a, b in itertools.pairwise(edges)):
        raise _LineError(f"{path}.edges", HISTOGRAM_EDGES)
    counts = [
        _int(c, f"{path}.counts[{i}]", 0, MAX_COUNT)
        for i, c in enumerate(_list(hist["counts"], f"{path}.counts"))
    ]
    if len(counts) != len(edges) + 1:
        raise _LineError(f"{path}.counts", HISTOGRAM_COUNTS.format(n=len(edges) + 1, m=len(counts)))
    return {"edges": edges, "counts": counts}


def _perturbation(value: Any) -> dict[str, Any]:
    """``key.perturbation``: §3.2's mean relative change per removal, null where none
    could be measured; {} where the run did not measure it."""
    perturbation = _object(value, "key.perturbation", set(), set(PERTURBATIONS))
    out: dict[str, float | None] = {}
    for name, x in perturbation.items():
        if x is not None and (
            isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x)
        ):
            raise _LineError(f"key.perturbation.{name}", NOT_NUMBER_OR_NULL)
        out[name] = None if x is None else float(x)
    return out


def _key_additive(key: dict[str, Any], out: dict[str, Any]) -> None:
    """The key's additive fields that the line has, checked, into ``out``."""
    if "value_top_token_ids" in key:
        ids = _list(key["value_top_token_ids"], "key.value_top_token_ids")
        n = len(out["value_top_tokens"])
        if ids and len(ids) != n:
            raise _LineError("key.value_top_token_ids", VALUE_IDS_COUNT.format(n=n, m=len(ids)))
        out["value_top_token_ids"] = [
            _int(t, f"key.value_top_token_ids[{i}]") for i, t in enumerate(ids)
        ]
    if "density" in key:
        out["density"] = _float(key["density"], "key.density", 0, 1)
    for name in ("max_coefficient", "mean_coefficient"):
        if name in key:
            out[name] = _float(key[name], f"key.{name}")
    if "histogram" in key:
        out["histogram"] = _histogram(key["histogram"])
    if "perturbation" in key:
        out["perturbation"] = _perturbation(key["perturbation"])


def _example(example: dict[str, Any], path: str) -> dict[str, Any]:
    """The fields that every stored example has (a prefix of the top-k, a held-out one, a
    sample: ``reports.contract.records``), checked, with the additive ones it has; its
    ``rank`` (or ``kind`` and band) is its caller's."""
    out = {
        "coefficient": _float(example["coefficient"], f"{path}.coefficient"),
        **{
            name: (
                None
                if name == "next_token" and example[name] is None
                else _str(example[name], f"{path}.{name}", max_len)
            )
            for name, max_len in _PREFIX_STRINGS.items()
        },
        "sentence_index": _int(
            example["sentence_index"], f"{path}.sentence_index", *_SENTENCE_INDEX
        ),
        "position": _int(example["position"], f"{path}.position", *_POSITION),
    }
    _prefix_additive(example, out, path)
    return out


def _prefix_additive(prefix: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """The prefix's additive fields that the line has, checked, into ``out``: token ids
    (-1: none, or the end of the sentence for the next token; -2: the next token is
    unknown, where it is null) and the rest of the sentence."""
    if "trigger_token_id" in prefix:
        out["trigger_token_id"] = _int(
            prefix["trigger_token_id"], f"{path}.trigger_token_id", *_TRIGGER_TOKEN_ID
        )
    if "next_token_id" in prefix:
        next_id = _int(prefix["next_token_id"], f"{path}.next_token_id", *_NEXT_TOKEN_ID)
        if out["next_token"] is None and next_id != NEXT_TOKEN_UNKNOWN:
            raise _LineError(f"{path}.next_token_id", NEXT_ID_NOT_UNKNOWN)
        if out["next_token"] is not None and next_id == NEXT_TOKEN_UNKNOWN:
            raise _LineError(f"{path}.next_token_id", NEXT_ID_UNKNOWN)
        out["next_token_id"] = next_id
    if "suffix" in prefix:
        out["suffix"] = _str(prefix["suffix"], f"{path}.suffix")
    start, end = prefix.get("trigger_start"), prefix.get("trigger_end")
    if start is not None or end is not None:  # absent or both null: no span (unknown)
        if start is None or end is None:
            raise _LineError(f"{path}.trigger_start", TRIGGER_SPAN_PAIR)
        start = _int(start, f"{path}.trigger_start", 0, MAX_INT)
        end = _int(end, f"{path}.trigger_end", 0, MAX_INT)
        if not start < end <= len(out["text"]):
            raise _LineError(f"{path}.trigger_end", TRIGGER_SPAN_RANGE.format(n=len(out["text"])))
        out["trigger_start"], out["trigger_end"] = start, end
    for name in ("trigger_token_bytes", "next_token_bytes"):
        if name in prefix:
            value = _str(prefix[name], f"{path}.{name}")
            if not _HEX_BYTES.fullmatch(value):
                raise _LineError(f"{path}.{name}", TOKEN_BYTES_NOT_HEX)
            out[name] = value
    _token_lists(prefix, out, path)


def _token_lists(example: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """An example's ``tokens`` and ``token_coefficients`` (both or neither): token strings
    as a prefix's trigger token is checked, finite coefficients, one per token. Checked
    list-wide first (a few thousand tokens a line); the entry at fault is looked for only
    when a check fails."""
    has_tokens, has_coefficients = "tokens" in example, "token_coefficients" in example
    if not has_tokens and not has_coefficients:
        return
    if not has_tokens or not has_coefficients:
        raise _LineError(f"{path}.{'token_coefficients' if has_tokens else 'tokens'}", TOKENS_PAIR)
    tokens = _list(example["tokens"], f"{path}.tokens")
    coefficients = _list(example["token_coefficients"], f"{path}.token_coefficients")
    if not all(type(t) is str for t in tokens) or not _plain_text("".join(tokens)):
        for i, token in enumerate(tokens):
            _str(token, f"{path}.tokens[{i}]", MAX_TOKEN)
    if any(len(t) > MAX_TOKEN for t in tokens):
        i = next(i for i, t in enumerate(tokens) if len(t) > MAX_TOKEN)
        _str(tokens[i], f"{path}.tokens[{i}]", MAX_TOKEN)
    if not all(type(x) is float or type(x) is int for x in coefficients) or not all(
        map(math.isfinite, coefficients)
    ):
        i = next(
            i
            for i, x in enumerate(coefficients)
            if not (type(x) is float or type(x) is int) or not math.isfinite(x)
        )
        raise _LineError(f"{path}.token_coefficients[{i}]", NOT_NUMBER)
    if len(coefficients) != len(tokens):
        raise _LineError(
            f"{path}.token_coefficients", TOKEN_COUNT.format(n=len(tokens), m=len(coefficients))
        )
    out["tokens"] = tokens
    out["token_coefficients"] = [float(x) for x in coefficients]


def _plain_text(text: str) -> bool:
    """Whether ``text`` is what a text column stores: no NUL, no lone surrogate."""
    if "\x00" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
