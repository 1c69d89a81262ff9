"""One line's object, checked field by field against the contract and normalised."""

from __future__ import annotations

from typing import Any

from annotate.limits import MAX_ANNOTATORS_PER_KEY
from annotate.models import Annotation, Pattern

from ..contract.records import (
    ANNOTATION,
    KEY,
    LINE,
    PATTERN,
    PREFIX,
    SCHEMA,
)
from .annotations import _annotation_additive, _annotation_more, _flags, _gold, _labels, _patterns
from .examples import _examples
from .fields import (
    _ANNOTATION_ADDITIVE,
    _INDEX,
    _KEY_ADDITIVE,
    _LAYER,
    _PATTERN_ADDITIVE,
    _PREFIX_ADDITIVE,
    _float,
    _int,
    _LineError,
    _list,
    _object,
    _str,
    _username_of,
)
from .key import _example, _key_additive
from .messages import (
    ANNOTATOR_TWICE,
    INDEX_NOT_BELOW_D_FF,
    LAYER_ABOVE_N_LAYERS,
    NO_PREFIXES,
    PAIR_NOT_TWO,
    RANK_OUT_OF_RANGE,
    RANK_REPEATED,
    RANKS_NOT_CONTIGUOUS,
    SCHEMA_WRONG,
    SOURCE_NOT_ANNOTATORS,
    STATUS_UNKNOWN,
    TOO_MANY_ANNOTATIONS,
    TOO_MANY_PREFIXES,
)
from .study import _Headers


def _validate_record(obj: Any, headers: _Headers) -> dict[str, Any]:
    """A line's object, checked field by field; returns it normalised."""
    obj = _object(obj, "", LINE.required, LINE.additive)
    if obj["schema"] != SCHEMA:
        raise _LineError("schema", SCHEMA_WRONG)
    header = headers.validate(obj["study"])
    top_k: int = header["top_k"]

    key = _object(obj["key"], "key", KEY.required, _KEY_ADDITIVE)
    tokens = []
    for t, pair in enumerate(_list(key["value_top_tokens"], "key.value_top_tokens")):
        path = f"key.value_top_tokens[{t}]"
        if not isinstance(pair, list) or len(pair) != 2:
            raise _LineError(path, PAIR_NOT_TWO)
        tokens.append([_str(pair[0], f"{path}[0]"), _float(pair[1], f"{path}[1]")])
    key_out = {
        "layer": _int(key["layer"], "key.layer", *_LAYER),
        "index": _int(key["index"], "key.index", *_INDEX),
        "value_top_tokens": tokens,
    }
    if header.get("n_layers") and key_out["layer"] > header["n_layers"]:
        raise _LineError("key.layer", LAYER_ABOVE_N_LAYERS.format(n=header["n_layers"]))
    if header.get("d_ff") and key_out["index"] >= header["d_ff"]:
        raise _LineError("key.index", INDEX_NOT_BELOW_D_FF.format(n=header["d_ff"]))
    _key_additive(key, key_out)

    prefixes: list[dict[str, Any]] = []
    seen_ranks: set[int] = set()
    prefix_fields = PREFIX.required
    raw_prefixes = _list(obj["prefixes"], "prefixes")
    if len(raw_prefixes) > top_k:
        raise _LineError("prefixes", TOO_MANY_PREFIXES.format(top_k=top_k, n=len(raw_prefixes)))
    for p, raw in enumerate(raw_prefixes):
        path = f"prefixes[{p}]"
        prefix = _object(raw, path, prefix_fields, _PREFIX_ADDITIVE)
        rank = prefix["rank"]
        if isinstance(rank, int) and not isinstance(rank, bool) and not 1 <= rank <= top_k:
            raise _LineError(f"{path}.rank", RANK_OUT_OF_RANGE.format(top_k=top_k))
        rank = _int(rank, f"{path}.rank", 1, top_k)
        if rank in seen_ranks:
            raise _LineError(f"{path}.rank", RANK_REPEATED.format(rank=rank))
        seen_ranks.add(rank)
        prefixes.append({"rank": rank, **_example(prefix, path)})
    if not prefixes:
        raise _LineError("prefixes", NO_PREFIXES)
    if seen_ranks != set(range(1, len(prefixes) + 1)):
        raise _LineError("prefixes", RANKS_NOT_CONTIGUOUS)
    examples = _examples(obj, top_k, prefixes)  # before the sort: the file's places
    prefixes.sort(key=lambda x: x["rank"])
    ranks: list[int] = [x["rank"] for x in prefixes]

    annotations: list[dict[str, Any]] = []
    annotators: set[str] = set()
    ann_fields = ANNOTATION.required
    raw_annotations = _list(obj["annotations"], "annotations")
    if len(raw_annotations) > MAX_ANNOTATORS_PER_KEY:
        raise _LineError("annotations", TOO_MANY_ANNOTATIONS.format(n=len(raw_annotations)))
    for a, raw in enumerate(raw_annotations):
        path = f"annotations[{a}]"
        ann = _object(raw, path, ann_fields, _ANNOTATION_ADDITIVE)
        name = _username_of(ann["annotator"], f"{path}.annotator")
        if name in annotators:
            raise _LineError(f"{path}.annotator", ANNOTATOR_TWICE.format(name=name))
        annotators.add(name)
        status = ann["status"]
        if status not in Annotation.Status.values:
            raise _LineError(f"{path}.status", STATUS_UNKNOWN)
        patterns, kinds = _patterns(
            ann["patterns"], f"{path}.patterns", seen_ranks, PATTERN.required, _PATTERN_ADDITIVE
        )
        for q, (pattern, normal) in enumerate(patterns):
            source = pattern.get("source", Pattern.Source.WRITTEN)
            if source not in Pattern.Source.values:
                raise _LineError(f"{path}.patterns[{q}].source", SOURCE_NOT_ANNOTATORS)
            normal["source"] = source
        _labels(ann["labels"], f"{path}.labels", ranks, kinds)
        annotations.append(
            {"annotator": name, "status": status, "patterns": [p for _, p in patterns]}
        )
        _annotation_additive(ann, annotations[-1], path)
        _annotation_more(ann, annotations[-1], path)
    gold = _gold(obj.get("gold"), seen_ranks, ranks, annotations)
    annotations.sort(key=lambda x: x["annotator"])
    return {
        "study": header,
        "key": key_out,
        "prefixes": prefixes,
        **examples,
        "annotations": annotations,
        "gold": gold,
        "flags": _flags(obj.get("flags", [])),
    }
