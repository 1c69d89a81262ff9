"""Import the JSONL v1 (docs/data-format.md, "Import") into a new study: validate every
line, then write in one go.

Two passes over the file: the first validates every line (and stops collecting after
``MAX_ERRORS`` errors); only a file without errors is read a second time and written, in
one transaction. So a bad line anywhere means nothing is written, and memory holds one
chunk of keys at a time, not the file.

Additive fields (docs/data-format.md, "Additive fields": v1 stays v1; the import
validates and keeps each one), as ``reports.exports`` writes them, so that a mined study
exported and imported gives the same report:

- ``study``: ``n_layers``, ``d_ff``, ``vocab_size`` (integers, 0: not known; every key's
  layer at most n_layers and index below d_ff), ``is_causal``, ``show_value_tokens``
  (booleans), ``value_agreement`` ({} or §4's counts over every key in the format
  ffkv.value-agreement/v1, checked as the report reads them, against n_layers and
  vocab_size; {} for an encoder), ``mining_definitions`` (names to a text or null);
- ``key``: ``value_top_token_ids`` (none, or one id per value_top_tokens entry),
  ``density`` (0 to 1), ``max_coefficient``, ``mean_coefficient``, ``histogram`` ({} or
  ascending ``edges`` and one more ``counts``), ``perturbation`` (first, last, random: a
  number or null);
- ``prefixes[i]``: ``trigger_token_id`` (-1: none), ``next_token_id`` (-1: the end of the
  sentence, or none; -2, unknown, exactly where next_token is null), ``suffix``,
  ``trigger_start`` and ``trigger_end`` (together: the trigger's character span in
  ``text``, 0 <= start < end <= len(text), or both null: unknown),
  ``trigger_token_bytes`` and ``next_token_bytes`` (the token's raw bytes as lowercase
  hex, at most 100 bytes, where it alone is part of a multi-byte character; "" none).

A file without them imports as a v1 file: no token ids (so §4 over the sampled keys has
no keys), no counts of §4 over every key, no mining definitions, no perturbation or key
statistics, vocabulary size 0, n_layers the largest layer and d_ff the largest index + 1,
each prefix's suffix the rest of its sentence, no trigger span (the workspace then finds
the trigger at the end of the text).

- ``annotations[j]``: ``note`` (at most ``MAX_NOTE`` characters), ``version`` (from 1),
  ``created_at``, ``updated_at`` (ISO 8601 with a UTC offset; updated not before
  created), ``submitted_at`` (the same, or null); each pattern's ``created_at`` and
  ``updated_at``.

- ``annotations[j]``: ``active_seconds`` (a finite number, 0 or more),
  ``guideline_version`` (from 1, or null), ``check`` (true or false: made on a check
  key; the export keeps such annotations, the reports leave them out); each pattern's
  ``source``, which for an annotator's pattern can only be "written".
- ``gold`` (per key): null, or the key's gold annotation, checked as an annotation is
  (status, patterns by the 3-prefix rule, labels that follow from them, note, version,
  times) with ``annotator`` its curator's username or null, ``is_check``, and per
  pattern ``source`` ("written", the default, or "adopted"), ``source_annotator`` and
  ``source_pattern``: null both for a written pattern; for an adopted one a username or
  null (any username: an account may annotate no key of the file), and null or the
  0-based place of the adopted pattern in the ``patterns`` of that annotator's
  annotation on the same line, which must exist.

- ``flags`` (per key): the annotators' flags on the key, each ``reason`` (a known one),
  ``annotator`` (a username: one flag each, an unknown one becomes an inactive
  annotator), ``note`` and ``created_at`` (optional: empty, the time of the import),
  checked as a flag is when it is raised (``annotate.services.key_flag_checked``).

A file without them: an empty note, version 1, the time of the import (submitted_at too
for a submitted annotation), no active time, no guideline version, no check
annotations, no gold, no flags. A curator unknown here becomes an inactive member of the
curator group; a known one must be an admin or in that group (``annotate.imports``).

What the round trip normalises (export(import(x)) equals x up to these): lines come out
in (layer, index) order, prefixes by rank, annotations by annotator; a pattern's
prefix_ranks ascending; a pattern's description without surrounding spaces; integers
given for float fields (coefficient, density, histogram edges, perturbation) come back
as floats; additive fields that x lacks come out with the values the import gave them; times come
out in UTC (``+00:00``).
A null next_token (the sentence was cut: docs/data-format.md, "JSONL v1") stays null.

The study object is the same on every line: a line whose study is written as the last
valid one's is not checked again (its §4 counts are the largest part of it).
"""

from __future__ import annotations

import codecs
import itertools
import json
import math
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError

from annotate.imports import (
    NEXT_TOKEN_UNKNOWN,
    ImportedStudy,
    ImportFileError,
    ImportResult,
    study_create_imported,
)
from annotate.limits import MAX_ANNOTATORS_PER_KEY, MAX_PATTERNS_PER_ANNOTATION
from annotate.models import Annotation, GoldPattern, KeyFlag, Pattern, Study
from annotate.selectors import LABELS, label_for_kinds
from annotate.services import PATTERN_MIN_PREFIXES, ServiceError, key_flag_checked

from .contract.records import (
    ANNOTATION,
    FLAG,
    GOLD,
    GOLD_PATTERN,
    KEY,
    LINE,
    MAX_INT,
    PATTERN,
    PREFIX,
    SCHEMA,
    STUDY,
    Field,
)
from .stats.perturbation import PERTURBATIONS
from .stats.value_agreement import COUNTS_INVALID, READINGS, value_agreement_every_key

__all__ = ["ImportFileError", "ImportResult", "study_import"]

MAX_ERRORS = 20
MAX_COUNT = 2**53  # a count that JSON carries exactly
# The file is read this many bytes at a time, and a line may hold at most
# ``MAX_LINE_BYTES``: an export's line is one key (a few kilobytes; a key of 64 prefixes
# with long sentences and many annotators, some hundreds). A longer line is refused
# without being held: the first as soon as it passes the limit, as is a first line that
# does not start with ``{`` as soon as its first byte is read.
READ_CHUNK = 1 << 20
MAX_LINE_BYTES = 16 << 20

NOT_JSON = "line {line}: not valid JSON"
NESTED_TOO_DEEPLY = "line {line}: not valid JSON (nested too deeply)"
NOT_UTF8 = "line {line}: not valid UTF-8"
FIELD_ERROR = "line {line}: {field}: {message}"
EMPTY_FILE = "The file holds no keys."
# Worded for no one interface: the command line and the browser's form add how to give
# another name (ImportFileError.code "study_name_taken").
STUDY_NAME_TAKEN = "A study named {name!r} already exists; give the new study another name."
NOT_JSONL = (
    "This is not a JSONL file: {why}. Import takes a JSONL export (ffkv.annotations/v1: "
    "UTF-8 text, one JSON object per line); CSV and Parquet exports cannot be imported."
)
NOT_JSONL_TEXT = "it is not UTF-8 text"
NOT_JSONL_FIRST_LINE = "its first line is not a JSON object"
LINE_TOO_LONG = "line {line}: longer than {limit} MiB (a line of an export holds one key)"
STUDY_NAME_INVALID = "The study name must be 1 to 200 characters."
MORE_ERRORS = "... and more errors (only the first {n} are listed)."

MISSING = "required field missing"
UNKNOWN_FIELD = "unknown field"
NOT_OBJECT = "must be an object"
NOT_LIST = "must be a list"
NOT_INT = "must be an integer"
NOT_NUMBER = "must be a finite number"
NOT_STRING = "must be a string"
OUT_OF_RANGE = "must be between {lo} and {hi}"
TOO_LONG = "must be at most {n} characters"
EMPTY_STRING = "must not be empty"
NUL_CHARACTER = "must not contain a NUL character"
SURROGATE_CHARACTER = "must not contain a lone surrogate (\\ud800-\\udfff)"
SCHEMA_WRONG = f"must be {SCHEMA!r}"
STUDY_DIFFERS = "differs from the study of line {line}"
RANK_OUT_OF_RANGE = "must be between 1 and top_k ({top_k})"
TOO_MANY_PREFIXES = "at most top_k ({top_k}) prefixes, got {n}"
TOO_MANY_ANNOTATIONS = f"at most {MAX_ANNOTATORS_PER_KEY} annotations per key, got {{n}}"
TOO_MANY_PATTERNS = f"at most {MAX_PATTERNS_PER_ANNOTATION} patterns per annotation, got {{n}}"
RANK_REPEATED = "rank {rank} appears twice"
RANKS_NOT_CONTIGUOUS = "ranks must run from 1 to the number of prefixes without gaps"
NO_PREFIXES = "a key needs at least one prefix"
DUPLICATE_KEY = "layer {layer}, index {index} is already on line {line}"
PAIR_NOT_TWO = "must be a [token, probability] pair"
STATUS_UNKNOWN = "must be 'draft' or 'submitted'"
KIND_UNKNOWN = "must be 'shallow', 'semantic' or 'shallow+semantic'"
PATTERN_TOO_FEW = f"a pattern must cover at least {PATTERN_MIN_PREFIXES} prefixes"
PATTERN_RANK_REPEATED = "a pattern cannot cover the same prefix twice"
PATTERN_RANK_UNKNOWN = "rank {rank} is not a prefix of this key"
ANNOTATOR_TWICE = "{name!r} annotates this key twice"
ANNOTATOR_INVALID = "is not a valid username (letters, digits and @.+-_ only, 150 at most)"
LABEL_UNKNOWN = "unknown label {label!r}"
LABEL_COUNT = "one label per prefix: expected {n}, got {m}"
LABEL_MISMATCH = "{label!r} does not follow from the patterns (expected {expected!r})"
# The additive fields (docs/data-format.md, "Additive fields")
NOT_BOOL = "must be true or false"
NOT_STRING_OR_NULL = "must be a string or null"
NOT_NUMBER_OR_NULL = "must be a finite number or null"
TOO_MANY_ENTRIES = "must have at most {n} entries"
LAYER_ABOVE_N_LAYERS = "must be at most study.n_layers ({n})"
INDEX_NOT_BELOW_D_FF = "must be below study.d_ff ({n})"
VOCAB_DIFFERS = "must equal study.vocab_size ({n})"
COUNTS_ON_ENCODER = "must be empty for an encoder (is_causal false)"
VALUE_IDS_COUNT = "one id per value_top_tokens entry (or none): expected {n}, got {m}"
HISTOGRAM_COUNTS = "one more count than edges: expected {n}, got {m}"
HISTOGRAM_EDGES = "must ascend"
NEXT_ID_NOT_UNKNOWN = "must be -2 where next_token is null (the sentence was cut)"
NEXT_ID_UNKNOWN = "-2 (unknown) only where next_token is null"
TRIGGER_SPAN_PAIR = "trigger_start and trigger_end go together: both integers, or both null"
TRIGGER_SPAN_RANGE = "must be a span of text: 0 <= trigger_start < trigger_end <= {n}"
NOT_TIME = "must be an ISO 8601 date and time with a UTC offset (2026-12-01T09:30:00+00:00)"
NOT_TIME_OR_NULL = f"{NOT_TIME} or null"
UPDATED_BEFORE_CREATED = "must not be before created_at"
NOT_NEGATIVE_NUMBER = "must be a finite number, 0 or more"
NOT_INT_OR_NULL = "must be an integer from 1, or null"
SOURCE_NOT_WRITTEN = "an annotator's pattern must be 'written'"
SOURCE_UNKNOWN = "must be 'written' or 'adopted'"
SOURCE_OF_WRITTEN = "only an adopted pattern has a source (must be null)"
SOURCE_PATTERN_NEEDS_ANNOTATOR = "needs source_annotator, one of this key's annotators"
SOURCE_ANNOTATOR_NOT_HERE = "{name!r} does not annotate this key (source_pattern names a pattern)"
SOURCE_PATTERN_OUT_OF_RANGE = "{name!r} has {n} patterns on this key: must be from 0 to {last}"
FLAG_REASON_UNKNOWN = "must be one of " + ", ".join(repr(r) for r in KeyFlag.Reason.values)
FLAG_TWICE = "{name!r} flags this key twice (one flag per annotator and key)"
TOO_MANY_FLAGS = f"at most {MAX_ANNOTATORS_PER_KEY} flags per key, got {{n}}"

# Every level's fields, required and additive, and their bounds: the contract's
# (``reports.contract.records``). Additive fields are optional: a file without them
# imports as a v1 file (docs/data-format.md, "Additive fields").
_STUDY_FIELDS = {f.name: f.max_len for f in STUDY.fields if f.required and f.type == "string"}
_PREFIX_STRINGS = {
    f.name: f.max_len for f in PREFIX.fields if f.required and f.type.startswith("string")
}
_STUDY_ADDITIVE = STUDY.additive
_STUDY_HEADER_ADDITIVE = (
    "is_causal",
    "vocab_size",
    "show_value_tokens",
    "value_agreement",
    "mining_definitions",
)
_KEY_ADDITIVE = KEY.additive
_PREFIX_ADDITIVE = PREFIX.additive
TOKEN_BYTES_NOT_HEX = "must be the token's bytes as lowercase hex (two digits a byte, at most 200)"
_HEX_BYTES = re.compile(r"(?:[0-9a-f]{2}){0,100}")
_ANNOTATION_ADDITIVE = ANNOTATION.additive
_PATTERN_ADDITIVE = PATTERN.additive
# The key's gold annotation (additive): an annotation whose annotator is its curator.
_GOLD_ADDITIVE = GOLD.additive
_FLAG_OPTIONAL = FLAG.additive
_GOLD_PATTERN_ADDITIVE = GOLD_PATTERN.additive


def _bounds(field: Field) -> tuple[int, int]:
    """An integer field's (lo, hi) as the contract gives them."""
    return (0 if field.lo is None else field.lo, MAX_INT if field.hi is None else field.hi)


_MAX_NOTE = ANNOTATION["note"].max_len
_MAX_DESCRIPTION = PATTERN["description"].max_len
_MAX_FLAG_NOTE = FLAG["note"].max_len
_MAX_USERNAME = ANNOTATION["annotator"].max_len or 150
_TOP_K = _bounds(STUDY["top_k"])
_SHAPE = {name: _bounds(STUDY[name]) for name in ("n_layers", "d_ff", "vocab_size")}
_SEED = _bounds(STUDY["seed"])
_LAYER = _bounds(KEY["layer"])
_INDEX = _bounds(KEY["index"])
_SENTENCE_INDEX = _bounds(PREFIX["sentence_index"])
_POSITION = _bounds(PREFIX["position"])
_TRIGGER_TOKEN_ID = _bounds(PREFIX["trigger_token_id"])
_NEXT_TOKEN_ID = _bounds(PREFIX["next_token_id"])
_VERSION = _bounds(ANNOTATION["version"])
# Study.value_agreement's contract (mining.core.value_agreement, ffkv.value-agreement/v1)
_COUNTS_FIELDS = {"format", "vocab_size", "variants", "final_norm", "layers"}
_COUNTS_ROW_FIELDS = {"layer", "n_keys", "next_end", "next_unknown", "next_token", "trigger_token"}
# Study.mining_definitions: short names, text values (mining.core.pipeline)
MAX_DEFINITIONS = 50
MAX_DEFINITION_NAME = 100
MAX_DEFINITION_TEXT = 10_000


class _LineError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


# --- validation -------------------------------------------------------------------------


def _object(
    value: Any,
    path: str,
    fields: AbstractSet[str],
    optional: AbstractSet[str] = frozenset(),
) -> dict[str, Any]:
    """``value`` as an object with every one of ``fields``, and nothing but ``fields``
    and ``optional``."""
    if not isinstance(value, dict):
        raise _LineError(path, NOT_OBJECT)
    for name in sorted(fields):
        if name not in value:
            raise _LineError(f"{path}.{name}" if path else name, MISSING)
    for name in value:
        if name not in fields and name not in optional:
            raise _LineError(f"{path}.{name}" if path else str(name), UNKNOWN_FIELD)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _LineError(path, NOT_LIST)
    return value


def _int(value: Any, path: str, lo: int = 0, hi: int = MAX_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _LineError(path, NOT_INT)
    if not lo <= value <= hi:
        raise _LineError(path, OUT_OF_RANGE.format(lo=lo, hi=hi))
    return value


def _float(value: Any, path: str, lo: float | None = None, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _LineError(path, NOT_NUMBER)
    if lo is not None and hi is not None and not lo <= value <= hi:
        raise _LineError(path, OUT_OF_RANGE.format(lo=lo, hi=hi))
    return float(value)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _LineError(path, NOT_BOOL)
    return value


def _str(value: Any, path: str, max_len: int | None = None, non_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise _LineError(path, NOT_STRING)
    if "\x00" in value:
        # PostgreSQL cannot store it in a text column.
        raise _LineError(path, NUL_CHARACTER)
    if not value.isascii():  # a flag of the string: no scan for the usual ASCII text
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # JSON can escape one ("\ud800"); no database column can store it.
            raise _LineError(path, SURROGATE_CHARACTER) from None
    if max_len is not None and len(value) > max_len:
        raise _LineError(path, TOO_LONG.format(n=max_len))
    if non_empty and not value.strip():
        raise _LineError(path, EMPTY_STRING)
    return value


_username = UnicodeUsernameValidator()


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


def _time(value: Any, path: str) -> datetime:
    """An ISO 8601 date and time with a UTC offset, as an aware datetime in UTC."""
    if not isinstance(value, str) or len(value) > 64:
        raise _LineError(path, NOT_TIME)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise _LineError(path, NOT_TIME) from None
    if parsed.tzinfo is None:
        raise _LineError(path, NOT_TIME)
    return parsed.astimezone(UTC)


def _times(raw: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """``created_at`` and ``updated_at`` that ``raw`` has, checked, into ``out``."""
    for name in ("created_at", "updated_at"):
        if name in raw:
            out[name] = _time(raw[name], f"{path}.{name}")
    if "created_at" in out and "updated_at" in out and out["updated_at"] < out["created_at"]:
        raise _LineError(f"{path}.updated_at", UPDATED_BEFORE_CREATED)


def _annotation_additive(ann: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """The annotation's additive fields that the line has, checked, into ``out``."""
    if "note" in ann:
        out["note"] = _str(ann["note"], f"{path}.note", _MAX_NOTE)
    if "version" in ann:
        out["version"] = _int(ann["version"], f"{path}.version", *_VERSION)
    _times(ann, out, path)
    if "submitted_at" in ann:
        value = ann["submitted_at"]
        if value is not None and not isinstance(value, str):
            raise _LineError(f"{path}.submitted_at", NOT_TIME_OR_NULL)
        out["submitted_at"] = None if value is None else _time(value, f"{path}.submitted_at")


def _annotation_more(ann: dict[str, Any], out: dict[str, Any], path: str) -> None:
    """The annotation's additive active time, guideline version and check flag."""
    if "active_seconds" in ann:
        seconds = _float(ann["active_seconds"], f"{path}.active_seconds")
        if seconds < 0:
            raise _LineError(f"{path}.active_seconds", NOT_NEGATIVE_NUMBER)
        out["active_seconds"] = seconds
    if "guideline_version" in ann:
        value = ann["guideline_version"]
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INT
        ):
            raise _LineError(f"{path}.guideline_version", NOT_INT_OR_NULL)
        out["guideline_version"] = value
    if "check" in ann:
        out["check"] = _bool(ann["check"], f"{path}.check")


def _username_of(value: Any, path: str) -> str:
    name = _str(value, path, _MAX_USERNAME, non_empty=True)
    try:
        _username(name)
    except ValidationError:
        raise _LineError(path, ANNOTATOR_INVALID) from None
    return name


def _patterns(
    raw: Any,
    path: str,
    seen_ranks: set[int],
    required: AbstractSet[str],
    optional: AbstractSet[str],
) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], dict[int, set[str]]]:
    """An annotation's ``patterns``: each (as the file has it, normalised with its
    times), and the kinds that cover each rank."""
    out = []
    kinds: dict[int, set[str]] = {}
    raw_patterns = _list(raw, path)
    if len(raw_patterns) > MAX_PATTERNS_PER_ANNOTATION:
        raise _LineError(path, TOO_MANY_PATTERNS.format(n=len(raw_patterns)))
    for q, raw_pattern in enumerate(raw_patterns):
        ppath = f"{path}[{q}]"
        pattern = _object(raw_pattern, ppath, required, optional)
        description = _str(
            pattern["description"], f"{ppath}.description", _MAX_DESCRIPTION, non_empty=True
        ).strip()
        kind = pattern["kind"]
        if kind not in Pattern.Kind.values:
            raise _LineError(f"{ppath}.kind", KIND_UNKNOWN)
        covered = [
            _int(r, f"{ppath}.prefix_ranks[{i}]", 1, MAX_INT)
            for i, r in enumerate(_list(pattern["prefix_ranks"], f"{ppath}.prefix_ranks"))
        ]
        if len(set(covered)) != len(covered):
            raise _LineError(f"{ppath}.prefix_ranks", PATTERN_RANK_REPEATED)
        unknown = [r for r in covered if r not in seen_ranks]
        if unknown:
            raise _LineError(f"{ppath}.prefix_ranks", PATTERN_RANK_UNKNOWN.format(rank=unknown[0]))
        if len(covered) < PATTERN_MIN_PREFIXES:
            raise _LineError(f"{ppath}.prefix_ranks", PATTERN_TOO_FEW)
        for r in covered:
            kinds.setdefault(r, set()).add(kind)
        normal = {"description": description, "kind": kind, "prefix_ranks": sorted(covered)}
        _times(pattern, normal, ppath)
        out.append((pattern, normal))
    return out, kinds


# The label of every set of kinds that can cover a prefix (``label_for_kinds``), looked
# up once per prefix and annotation instead of computed.
_LABEL_OF_KINDS = {
    frozenset(kinds): label_for_kinds(kinds)
    for n in range(len(Pattern.Kind.values) + 1)
    for kinds in itertools.combinations(Pattern.Kind.values, n)
}
_NOT_COVERED = label_for_kinds(())


def _labels(raw: Any, path: str, ranks: list[int], kinds: dict[int, set[str]]) -> None:
    """An annotation's ``labels``: one per prefix, each what its patterns make it."""
    labels = _list(raw, path)
    for i, label in enumerate(labels):
        if label not in LABELS:
            raise _LineError(f"{path}[{i}]", LABEL_UNKNOWN.format(label=label))
    if len(labels) != len(ranks):
        raise _LineError(path, LABEL_COUNT.format(n=len(ranks), m=len(labels)))
    for i, (rank, label) in enumerate(zip(ranks, labels, strict=True)):
        covering = kinds.get(rank)
        expected = _NOT_COVERED if covering is None else _LABEL_OF_KINDS[frozenset(covering)]
        if label != expected:
            raise _LineError(f"{path}[{i}]", LABEL_MISMATCH.format(label=label, expected=expected))


def _gold(
    raw: Any, seen_ranks: set[int], ranks: list[int], annotations: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The line's ``gold``: null, or the key's curated annotation, checked like an
    annotation; its ``annotator`` is its curator (or null), and each pattern's source is
    "written" (no source_annotator, no source_pattern) or "adopted" (source_annotator a
    username or null; source_pattern null or the 0-based place of the adopted pattern in
    source_annotator's ``patterns`` on this line)."""
    if raw is None:
        return None
    path = "gold"
    gold = _object(raw, path, GOLD.required, _GOLD_ADDITIVE)
    curator = gold["annotator"]
    out: dict[str, Any] = {
        "annotator": None if curator is None else _username_of(curator, f"{path}.annotator")
    }
    if gold["status"] not in Annotation.Status.values:
        raise _LineError(f"{path}.status", STATUS_UNKNOWN)
    out["status"] = gold["status"]
    patterns, kinds = _patterns(
        gold["patterns"],
        f"{path}.patterns",
        seen_ranks,
        GOLD_PATTERN.required,
        _GOLD_PATTERN_ADDITIVE,
    )
    n_patterns = {a["annotator"]: len(a["patterns"]) for a in annotations}
    for q, (pattern, normal) in enumerate(patterns):
        ppath = f"{path}.patterns[{q}]"
        source = pattern.get("source", GoldPattern.Source.WRITTEN)
        if source not in GoldPattern.Source.values:
            raise _LineError(f"{ppath}.source", SOURCE_UNKNOWN)
        by, place = pattern.get("source_annotator"), pattern.get("source_pattern")
        if source == GoldPattern.Source.WRITTEN:
            for name in ("source_annotator", "source_pattern"):
                if pattern.get(name) is not None:
                    raise _LineError(f"{ppath}.{name}", SOURCE_OF_WRITTEN)
        if by is not None:
            by = _username_of(by, f"{ppath}.source_annotator")
        if place is not None:
            if isinstance(place, bool) or not isinstance(place, int):
                raise _LineError(f"{ppath}.source_pattern", NOT_INT)
            if by is None:
                raise _LineError(f"{ppath}.source_pattern", SOURCE_PATTERN_NEEDS_ANNOTATOR)
            if by not in n_patterns:
                raise _LineError(
                    f"{ppath}.source_annotator", SOURCE_ANNOTATOR_NOT_HERE.format(name=by)
                )
            n = n_patterns[by]
            if not 0 <= place < n:
                raise _LineError(
                    f"{ppath}.source_pattern",
                    SOURCE_PATTERN_OUT_OF_RANGE.format(name=by, n=n, last=n - 1),
                )
        normal.update(source=source, source_annotator=by, source_pattern=place)
    out["patterns"] = [normal for _, normal in patterns]
    _labels(gold["labels"], f"{path}.labels", ranks, kinds)
    _annotation_additive(gold, out, path)
    if "is_check" in gold:
        out["is_check"] = _bool(gold["is_check"], f"{path}.is_check")
    return out


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
        prefixes.append(
            {
                "rank": rank,
                "coefficient": _float(prefix["coefficient"], f"{path}.coefficient"),
                **{
                    name: (
                        None
                        if name == "next_token" and prefix[name] is None
                        else _str(prefix[name], f"{path}.{name}", max_len)
                    )
                    for name, max_len in _PREFIX_STRINGS.items()
                },
                "sentence_index": _int(
                    prefix["sentence_index"], f"{path}.sentence_index", *_SENTENCE_INDEX
                ),
                "position": _int(prefix["position"], f"{path}.position", *_POSITION),
            }
        )
        _prefix_additive(prefix, prefixes[-1], path)
    if not prefixes:
        raise _LineError("prefixes", NO_PREFIXES)
    if seen_ranks != set(range(1, len(prefixes) + 1)):
        raise _LineError("prefixes", RANKS_NOT_CONTIGUOUS)
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
        for q, (pattern, _) in enumerate(patterns):
            if "source" in pattern and pattern["source"] != GoldPattern.Source.WRITTEN:
                raise _LineError(f"{path}.patterns[{q}].source", SOURCE_NOT_WRITTEN)
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
        "annotations": annotations,
        "gold": gold,
        "flags": _flags(obj.get("flags", [])),
    }


def _flags(raw: Any) -> list[dict[str, Any]]:
    """The line's ``flags`` (additive): the annotators' flags on the key, each a known
    ``reason``, the ``annotator``'s username (one flag each), and optionally a ``note``
    (checked as a flag's note is written: ``annotate.services.key_flag_checked``) and
    ``created_at``; by username, as the export writes them."""
    flags = _list(raw, "flags")
    if len(flags) > MAX_ANNOTATORS_PER_KEY:
        raise _LineError("flags", TOO_MANY_FLAGS.format(n=len(flags)))
    out = []
    seen: set[str] = set()
    for f, value in enumerate(flags):
        path = f"flags[{f}]"
        flag = _object(value, path, FLAG.required, _FLAG_OPTIONAL)
        name = _username_of(flag["annotator"], f"{path}.annotator")
        if name in seen:
            raise _LineError(f"{path}.annotator", FLAG_TWICE.format(name=name))
        seen.add(name)
        if flag["reason"] not in KeyFlag.Reason.values:
            raise _LineError(f"{path}.reason", FLAG_REASON_UNKNOWN)
        note = _str(flag.get("note", ""), f"{path}.note", _MAX_FLAG_NOTE)
        try:
            note = key_flag_checked(reason=flag["reason"], note=note)
        except ServiceError as exc:
            raise _LineError(f"{path}.note", exc.message) from None
        normal = {"reason": flag["reason"], "note": note, "annotator": name}
        if "created_at" in flag:
            normal["created_at"] = _time(flag["created_at"], f"{path}.created_at")
        out.append(normal)
    return sorted(out, key=lambda x: x["annotator"])


_JSON_SPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


def _not_jsonl(start: bytes) -> ImportFileError:
    """The refusal of a file whose first line is no JSON object; ``start``: the bytes of it
    read so far, which say whether it is text at all."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(start, final=False)
    except UnicodeDecodeError:  # a binary file (a zip, Parquet) or another encoding
        return ImportFileError([NOT_JSONL.format(why=NOT_JSONL_TEXT)], code="not_jsonl")
    return ImportFileError([NOT_JSONL.format(why=NOT_JSONL_FIRST_LINE)], code="not_jsonl")


def _lines(file: IO[bytes]) -> Iterator[tuple[int, bytes | None]]:
    """(line number, the line without its end) for every line of the file, read
    ``READ_CHUNK`` bytes at a time; None for a line longer than ``MAX_LINE_BYTES``, which
    is skipped without being held (so memory never holds more than one line and one
    chunk). Refuses the file (``ImportFileError``, ``not_jsonl``) as soon as the first
    byte of text (after a UTF-8 byte order mark and blank space) is not the ``{`` that
    starts a JSON object, and when the first line of text is too long."""
    number = 0  # of the last line ended
    parts: list[bytes] = []
    size = 0
    skipping = False  # the line under way is too long, and was reported
    started = False  # the first byte of text was read (and is a "{")
    at_start = True  # nothing read yet but perhaps the byte order mark

    bom = b""  # the file's first bytes while they may still be a byte order mark

    def first_text(piece: bytes) -> None:
        nonlocal started, at_start, bom
        if at_start:
            head = bom + piece
            if len(head) < len(_BOM) and _BOM.startswith(head):
                bom = head  # read on before deciding
                return
            at_start = False
            piece = head.removeprefix(_BOM)
        rest = piece.lstrip(_JSON_SPACE)
        if rest:
            if not rest.startswith(b"{"):
                raise _not_jsonl(b"".join(parts) + piece)
            started = True

    def too_long(line: int) -> None:
        if not started or line == first_line:
            raise ImportFileError([LINE_TOO_LONG.format(line=line, limit=MAX_LINE_BYTES >> 20)])

    first_line = 0  # the number of the line whose text came first
    while chunk := file.read(READ_CHUNK):
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8", "surrogatepass")
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not started:
                first_text(piece)
                if started:
                    first_line = number + 1
            if not skipping:
                size += len(piece)
                if size > MAX_LINE_BYTES:
                    too_long(number + 1)
                    skipping = True
                    parts = []
                    yield number + 1, None
                else:
                    parts.append(piece)
            if end < 0:
                break
            number += 1
            if not skipping:
                yield number, b"".join(parts)
            parts, size, skipping = [], 0, False
            start = end + 1
    if parts and not skipping:
        yield number + 1, b"".join(parts)


def _records(file: IO[bytes]) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, record, error) for every non-blank line of the file."""
    headers = _Headers()
    first = True  # no line with text read yet
    for number, raw in _lines(file):
        if raw is None:
            first = False
            yield number, None, LINE_TOO_LONG.format(line=number, limit=MAX_LINE_BYTES >> 20)
            continue
        try:
            # A UTF-8 byte order mark, which some editors write, is no part of the JSON.
            text = raw.decode("utf-8-sig" if first else "utf-8")
        except UnicodeDecodeError:
            if first:  # a binary file (a zip, Parquet) or another encoding
                raise ImportFileError(
                    [NOT_JSONL.format(why=NOT_JSONL_TEXT)], code="not_jsonl"
                ) from None
            yield number, None, NOT_UTF8.format(line=number)
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except ValueError:
            if first:  # a CSV, or any other text: one error, not one per line
                raise ImportFileError(
                    [NOT_JSONL.format(why=NOT_JSONL_FIRST_LINE)], code="not_jsonl"
                ) from None
            first = False
            yield number, None, NOT_JSON.format(line=number)
            continue
        except RecursionError:
            first = False
            yield number, None, NESTED_TOO_DEEPLY.format(line=number)
            continue
        first = False
        try:
            record = _validate_record(obj, headers)
        except _LineError as exc:
            where = f"{exc.field}: " if exc.field else ""
            # The field's path holds the file's own names: an unknown one may be anything.
            message = f"line {number}: {where}{exc.message}"
            yield number, None, message.encode("utf-8", "backslashreplace").decode("utf-8")
            continue
        yield number, record, None


@dataclass
class _Summary:
    header: dict[str, Any] | None = None
    keys: int = 0
    # username -> (line, field) where it first appears
    annotators: dict[str, tuple[int, str]] = field(default_factory=dict)
    # the same for the curators of gold annotations
    curators: dict[str, tuple[int, str]] = field(default_factory=dict)
    max_layer: int = 0
    max_index: int = 0
    max_rank: int = 0


def _validate_file(file: IO[bytes]) -> _Summary:
    errors: list[str] = []
    summary = _Summary()
    header_line = 0
    seen: dict[tuple[int, int], int] = {}
    for number, record, error in _records(file):
        if record is not None:
            key = (record["key"]["layer"], record["key"]["index"])
            if summary.header is None:
                summary.header, header_line = record["study"], number
            if record["study"] != summary.header:
                error = FIELD_ERROR.format(
                    line=number, field="study", message=STUDY_DIFFERS.format(line=header_line)
                )
            elif key in seen:
                error = FIELD_ERROR.format(
                    line=number,
                    field="key",
                    message=DUPLICATE_KEY.format(layer=key[0], index=key[1], line=seen[key]),
                )
            else:
                seen[key] = number
                summary.keys += 1
                for a, ann in enumerate(record["annotations"]):
                    summary.annotators.setdefault(
                        ann["annotator"], (number, f"annotations[{a}].annotator")
                    )
                for f, flag in enumerate(record["flags"]):
                    summary.annotators.setdefault(
                        flag["annotator"], (number, f"flags[{f}].annotator")
                    )
                gold = record["gold"]
                if gold is not None:
                    if gold["annotator"] is not None:
                        summary.curators.setdefault(gold["annotator"], (number, "gold.annotator"))
                    for q, pattern in enumerate(gold["patterns"]):
                        if pattern["source_annotator"] is not None:
                            summary.annotators.setdefault(
                                pattern["source_annotator"],
                                (number, f"gold.patterns[{q}].source_annotator"),
                            )
                summary.max_layer = max(summary.max_layer, key[0])
                summary.max_index = max(summary.max_index, key[1])
                summary.max_rank = max(summary.max_rank, len(record["prefixes"]))
        if error is not None:
            errors.append(error)
            if len(errors) >= MAX_ERRORS:
                errors.append(MORE_ERRORS.format(n=MAX_ERRORS))
                break
    if errors:
        raise ImportFileError(errors)
    if summary.header is None:
        raise ImportFileError([EMPTY_FILE])
    return summary


# --- writing ----------------------------------------------------------------------------


def _validated_records(file: IO[bytes]) -> Iterator[dict[str, Any]]:
    """The second pass: every record again, now known to be valid."""
    for _, record, error in _records(file):
        if error is not None or record is None:  # the file changed between the passes
            raise ImportFileError([error or EMPTY_FILE])
        yield record


def study_import(
    *,
    file: IO[bytes],
    study_name: str | None = None,
    created_by: Any = None,
    live: bool = False,
    assign: bool = False,
) -> ImportResult:
    """Load a JSONL export into a new study (docs/data-format.md, "Import"). ``file`` must
    be seekable: it is read twice (validate, then write through
    ``annotate.imports.study_create_imported``). Annotators that do not exist become
    inactive annotator accounts with unusable passwords; an existing account that is not an
    annotator is an error; the imported keys form one batch, ``imported``. The study is
    archived (read-only, out of every annotator's sight) unless ``live``; ``assign`` (with
    ``live``) gives the batch to each annotator for the keys they annotated."""
    summary = _validate_file(file)
    assert summary.header is not None
    name = study_name if study_name is not None else summary.header["name"]
    if not 1 <= len(name.strip()) <= 200:
        raise ImportFileError([STUDY_NAME_INVALID])
    if Study.objects.filter(name=name).exists():
        raise ImportFileError(
            [STUDY_NAME_TAKEN.format(name=name)], code="study_name_taken", name=name
        )
    file.seek(0)
    header = summary.header
    return study_create_imported(
        header=ImportedStudy(
            name=name,
            model=header["model"],
            corpus=header["corpus"],
            top_k=header["top_k"],
            seed=header["seed"],
            # A file without the study's shape: the largest layer, the largest index + 1.
            n_layers=header.get("n_layers", summary.max_layer),
            d_ff=header.get("d_ff", summary.max_index + 1),
            **{name: header[name] for name in _STUDY_HEADER_ADDITIVE if name in header},
        ),
        annotators=summary.annotators,
        curators=summary.curators,
        records=_validated_records(file),
        created_by=created_by,
        live=live,
        assign=assign,
    )
