"""A line's stored examples beyond the key's top-k (docs/evidence.md): ``heldout``
(ranks top_k+1 … 2·top_k), ``heldout_random`` and ``samples`` (bands 1 … 5, then the
random ones), each entry checked as a prefix is, and no sentence in two of the key's
sets."""

from __future__ import annotations

from typing import Any

from ..contract.records import MAX_KEY_EXAMPLES, N_BANDS, SAMPLE_KINDS
from .fields import _EXAMPLE_FIELDS, _float, _int, _LineError, _list, _object
from .key import _example
from .messages import (
    BAND_NOT_BELOW,
    HELDOUT_RANK_RANGE,
    HELDOUT_RANKS_NOT_CONTIGUOUS,
    NOT_IN_BAND,
    RANDOM_HAS_BAND,
    RANK_REPEATED,
    SAMPLE_KIND_UNKNOWN,
    SENTENCE_TWICE,
    TOO_MANY_EXAMPLES,
    TOO_MANY_HELDOUT,
)


def _entries(obj: dict[str, Any], name: str, limit: int) -> list[tuple[str, dict[str, Any]]]:
    """The line's list ``name`` ([] where the line has none) as (path, entry) pairs, each
    entry with the fields of its level and no others."""
    raw = _list(obj.get(name, []), name)
    if len(raw) > limit:
        if name == "heldout":
            raise _LineError(name, TOO_MANY_HELDOUT.format(top_k=limit, n=len(raw)))
        raise _LineError(name, TOO_MANY_EXAMPLES.format(n=limit, m=len(raw)))
    required, optional = _EXAMPLE_FIELDS[name]
    return [
        (f"{name}[{i}]", _object(entry, f"{name}[{i}]", required, optional))
        for i, entry in enumerate(raw)
    ]


def _heldout(obj: dict[str, Any], top_k: int) -> list[tuple[str, dict[str, Any]]]:
    """``heldout``: ranks top_k+1 … 2·top_k, once each, without gaps."""
    out = []
    seen: set[int] = set()
    lo, hi = top_k + 1, 2 * top_k
    for path, entry in _entries(obj, "heldout", top_k):
        rank = entry["rank"]
        if isinstance(rank, int) and not isinstance(rank, bool) and not lo <= rank <= hi:
            raise _LineError(f"{path}.rank", HELDOUT_RANK_RANGE.format(lo=lo, hi=hi))
        rank = _int(rank, f"{path}.rank", lo, hi)
        if rank in seen:
            raise _LineError(f"{path}.rank", RANK_REPEATED.format(rank=rank))
        seen.add(rank)
        out.append((path, {"rank": rank, **_example(entry, path)}))
    if seen != set(range(lo, lo + len(out))):
        raise _LineError("heldout", HELDOUT_RANKS_NOT_CONTIGUOUS.format(lo=lo))
    return out


def _sample(entry: dict[str, Any], path: str) -> dict[str, Any]:
    """One of ``samples``: a band sample's band (1 … N_BANDS), its bounds (low below
    high) and a coefficient between them; a random one's band and bounds null."""
    kind = entry["kind"]
    if kind not in SAMPLE_KINDS:
        raise _LineError(f"{path}.kind", SAMPLE_KIND_UNKNOWN)
    body = _example(entry, path)
    if kind == "random":
        for name in ("band", "band_low", "band_high"):
            if entry[name] is not None:
                raise _LineError(f"{path}.{name}", RANDOM_HAS_BAND)
        return {"kind": kind, "band": None, "band_low": None, "band_high": None, **body}
    band = _int(entry["band"], f"{path}.band", 1, N_BANDS)
    low = _float(entry["band_low"], f"{path}.band_low")
    high = _float(entry["band_high"], f"{path}.band_high")
    if not low < high:
        raise _LineError(f"{path}.band_low", BAND_NOT_BELOW.format(high=high))
    # The coefficient is its sentence's maximum, drawn from its band (the bounds as
    # mining wrote them; an end point counts as inside).
    if not low <= body["coefficient"] <= high:
        raise _LineError(f"{path}.coefficient", NOT_IN_BAND.format(low=low, high=high))
    return {"kind": kind, "band": band, "band_low": low, "band_high": high, **body}


# Which sets' sentences an entry of a set must not repeat, besides its own set's: a sample
# none of the top-k's; a held-out example none of the visible ones (top-k and samples).
# A band sample may be a random one too, and a held-out example a held-out random one.
_APART_FROM = {
    "band": ("prefixes",),
    "random": ("prefixes",),
    "heldout": ("prefixes", "band", "random"),
    "heldout_random": ("prefixes", "band", "random"),
}


def _distinct(
    prefixes: list[dict[str, Any]], sets: dict[str, list[tuple[str, dict[str, Any]]]]
) -> None:
    """No sentence twice in one set (a sample's kind is its set), and none in two sets
    that must stay apart (``_APART_FROM``; docs/evidence.md, "What is stored per sampled
    key"). Names the entry at fault by its place in the file, and where the other is."""
    first: dict[str, dict[int, str]] = {"prefixes": {}}
    for i, prefix in enumerate(prefixes):
        first["prefixes"].setdefault(prefix["sentence_index"], f"prefixes[{i}]")
    by_set: dict[str, list[tuple[str, int]]] = {}
    for name, entries in sets.items():
        for path, example in entries:
            kind = example.get("kind", name)
            index = example["sentence_index"]
            seen = first.setdefault(kind, {})
            if index in seen:
                raise _LineError(
                    f"{path}.sentence_index", SENTENCE_TWICE.format(index=index, where=seen[index])
                )
            seen[index] = path
            by_set.setdefault(kind, []).append((path, index))
    for kind, places in by_set.items():
        for path, index in places:
            for other in _APART_FROM[kind]:
                where = first.get(other, {}).get(index)
                if where is not None:
                    raise _LineError(
                        f"{path}.sentence_index", SENTENCE_TWICE.format(index=index, where=where)
                    )


def _examples(
    obj: dict[str, Any], top_k: int, prefixes: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """The line's ``heldout`` (by rank), ``heldout_random`` (in the file's order) and
    ``samples`` (the band samples by band, in the file's order within a band, then the
    random ones), each [] where the line has none."""
    sets = {
        "heldout": _heldout(obj, top_k),
        "heldout_random": [
            (path, _example(entry, path))
            for path, entry in _entries(obj, "heldout_random", MAX_KEY_EXAMPLES)
        ],
        "samples": [
            (path, _sample(entry, path))
            for path, entry in _entries(obj, "samples", MAX_KEY_EXAMPLES)
        ],
    }
    _distinct(prefixes, sets)
    out = {name: [example for _, example in entries] for name, entries in sets.items()}
    out["heldout"].sort(key=lambda x: x["rank"])
    out["samples"].sort(key=lambda x: (x["kind"] == "random", x["band"] or 0))
    return out
