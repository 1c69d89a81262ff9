"""A line's ``study``: the contract's fields, the additive ones it has (§4's counts over
every key, the mining definitions), and ``_Headers``, which checks the study once for
the lines that repeat it as written."""

from __future__ import annotations

import json
from typing import Any

from ..contract.records import (
    STUDY,
)
from ..stats.value_agreement import COUNTS_INVALID, READINGS, value_agreement_every_key
from .fields import (
    _SEED,
    _SHAPE,
    _STUDY_ADDITIVE,
    _STUDY_FIELDS,
    _TOP_K,
    _bool,
    _int,
    _LineError,
    _object,
    _str,
)
from .messages import (
    COUNTS_ON_ENCODER,
    LAYER_ABOVE_N_LAYERS,
    NOT_OBJECT,
    NOT_STRING_OR_NULL,
    TOO_MANY_ENTRIES,
    VOCAB_DIFFERS,
)

# Study.value_agreement's contract (mining.core.value_agreement, ffkv.value-agreement/v1)
_COUNTS_FIELDS = {"format", "vocab_size", "variants", "final_norm", "layers"}
_COUNTS_ROW_FIELDS = {"layer", "n_keys", "next_end", "next_unknown", "next_token", "trigger_token"}
# Study.mining_definitions: short names, text values (mining.core.pipeline)
MAX_DEFINITIONS = 50
MAX_DEFINITION_NAME = 100
MAX_DEFINITION_TEXT = 10_000


def _definitions(value: Any) -> dict[str, Any]:
    """``study.mining_definitions``: short names, each a text or null."""
    path = "study.mining_definitions"
    if not isinstance(value, dict):
        raise _LineError(path, NOT_OBJECT)
    if len(value) > MAX_DEFINITIONS:
        raise _LineError(path, TOO_MANY_ENTRIES.format(n=MAX_DEFINITIONS))
    for name, text in value.items():
        _str(name, f"{path} (a name)", MAX_DEFINITION_NAME, non_empty=True)
        if text is not None:
            if not isinstance(text, str):
                raise _LineError(f"{path}.{name}", NOT_STRING_OR_NULL)
            _str(text, f"{path}.{name}", MAX_DEFINITION_TEXT)
    return value


def _counts(value: Any, header: dict[str, Any]) -> dict[str, Any]:
    """``study.value_agreement``: {} (not counted), or §4's counts over every key in the
    format ffkv.value-agreement/v1 (``mining.core.value_agreement``), checked by the
    report's own reading of them, and against the study's shape."""
    path = "study.value_agreement"
    if not isinstance(value, dict):
        raise _LineError(path, NOT_OBJECT)
    if not value:
        return value
    if not header.get("is_causal", True):
        raise _LineError(path, COUNTS_ON_ENCODER)
    _object(value, path, set(), _COUNTS_FIELDS)
    read = value_agreement_every_key(value, is_causal=True)
    if read["reason"] == COUNTS_INVALID:
        raise _LineError(path, str(read["detail"]))
    if value.get("final_norm") is not None:
        _str(value["final_norm"], f"{path}.final_norm", 500)
    variants = set(value["variants"])
    n_layers = header.get("n_layers")
    for i, row in enumerate(value["layers"]):
        where = f"{path}.layers[{i}]"
        _object(row, where, set(), _COUNTS_ROW_FIELDS)
        for reading in READINGS:
            _object(row[reading], f"{where}.{reading}", set(), variants)
        if n_layers and row["layer"] > n_layers:
            raise _LineError(f"{where}.layer", LAYER_ABOVE_N_LAYERS.format(n=n_layers))
    if "vocab_size" in header and value["vocab_size"] != header["vocab_size"]:
        raise _LineError(f"{path}.vocab_size", VOCAB_DIFFERS.format(n=header["vocab_size"]))
    return value


def _study_header(raw: Any) -> dict[str, Any]:
    """A line's ``study``: the contract's fields, and the additive ones it has."""
    study = _object(raw, "study", STUDY.required, _STUDY_ADDITIVE)
    header: dict[str, Any] = {
        name: _str(study[name], f"study.{name}", max_len, non_empty=(name == "name"))
        for name, max_len in _STUDY_FIELDS.items()
    }
    # Mining's own bound (annotate.limits.MAX_TOP_K): a larger top_k is no mined study.
    header["top_k"] = _int(study["top_k"], "study.top_k", *_TOP_K)
    header["seed"] = _int(study["seed"], "study.seed", *_SEED)
    for name in ("n_layers", "d_ff", "vocab_size"):  # 0: not known
        if name in study:
            header[name] = _int(study[name], f"study.{name}", *_SHAPE[name])
    for name in ("is_causal", "show_value_tokens"):
        if name in study:
            header[name] = _bool(study[name], f"study.{name}")
    if "mining_definitions" in study:
        header["mining_definitions"] = _definitions(study["mining_definitions"])
    if "value_agreement" in study:
        header["value_agreement"] = _counts(study["value_agreement"], header)
    return header


class _Headers:
    """Every line repeats the study; its §4 counts and definitions are not small. A line
    whose study is written exactly as the last valid one's (the same JSON text: true, 1
    and 1.0 differ) takes that one's checked header."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.header: dict[str, Any] = {}

    def validate(self, raw: Any) -> dict[str, Any]:
        try:
            text = json.dumps(raw, ensure_ascii=False)
        except (ValueError, RecursionError):  # NaN, or too deep: checked below
            text = None
        if text is not None and text == self.text:
            return self.header
        header = _study_header(raw)
        self.text, self.header = text, header
        return header
