"""Import DESIGN §6's JSONL into a new study: validate every line, then write in one go.

Two passes over the file: the first validates every line (and stops collecting after
``MAX_ERRORS`` errors); only a file without errors is read a second time and written, in
one transaction. So a bad line anywhere means nothing is written, and memory holds one
chunk of keys at a time, not the file.

What the round trip normalises (export(import(x)) equals x up to these): lines come out
in (layer, index) order, prefixes by rank, annotations by annotator; a pattern's
prefix_ranks ascending; a pattern's description without surrounding spaces; integers
given for float fields (coefficient) come back as floats. A null next_token (the
sentence was cut, DESIGN §6) stays null. Fields outside the v1 contract start empty in
the imported study: token ids (so §4 value agreement has no keys), the counts of §4 over
every key and the mining definitions, perturbation, the vocabulary size, annotation
notes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError

from annotate.imports import ImportedStudy, ImportFileError, ImportResult, study_create_imported
from annotate.limits import MAX_DESCRIPTION
from annotate.models import Annotation, Pattern, Study
from annotate.selectors import LABELS, label_for_kinds
from annotate.services import PATTERN_MIN_PREFIXES

__all__ = ["ImportFileError", "ImportResult", "study_import"]

SCHEMA = "ffkv.annotations/v1"
MAX_ERRORS = 20
MAX_INT = 2**31 - 1

NOT_JSON = "line {line}: not valid JSON"
NESTED_TOO_DEEPLY = "line {line}: not valid JSON (nested too deeply)"
NOT_UTF8 = "line {line}: not valid UTF-8"
FIELD_ERROR = "line {line}: {field}: {message}"
EMPTY_FILE = "The file holds no keys."
STUDY_NAME_TAKEN = (
    "A study named {name!r} already exists; choose another name (--study-name, or "
    "study_name in the upload)."
)
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

_STUDY_FIELDS = {"name": 200, "model": 500, "corpus": 500}
_PREFIX_STRINGS = {"text": None, "trigger_token": 200, "next_token": 200, "sentence": None}


class _LineError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


# --- validation -------------------------------------------------------------------------


def _object(value: Any, path: str, fields: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _LineError(path, NOT_OBJECT)
    for name in sorted(fields):
        if name not in value:
            raise _LineError(f"{path}.{name}" if path else name, MISSING)
    for name in value:
        if name not in fields:
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


def _float(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _LineError(path, NOT_NUMBER)
    return float(value)


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


def _validate_record(obj: Any) -> dict[str, Any]:
    """A line's object, checked field by field; returns it normalised."""
    obj = _object(obj, "", {"schema", "study", "key", "prefixes", "annotations"})
    if obj["schema"] != SCHEMA:
        raise _LineError("schema", SCHEMA_WRONG)
    study = _object(obj["study"], "study", {"name", "model", "corpus", "top_k", "seed"})
    header: dict[str, Any] = {
        name: _str(study[name], f"study.{name}", max_len, non_empty=(name == "name"))
        for name, max_len in _STUDY_FIELDS.items()
    }
    header["top_k"] = _int(study["top_k"], "study.top_k", 1)
    header["seed"] = _int(study["seed"], "study.seed", -(2**31), MAX_INT)
    top_k: int = header["top_k"]

    key = _object(obj["key"], "key", {"layer", "index", "value_top_tokens"})
    tokens = []
    for t, pair in enumerate(_list(key["value_top_tokens"], "key.value_top_tokens")):
        path = f"key.value_top_tokens[{t}]"
        if not isinstance(pair, list) or len(pair) != 2:
            raise _LineError(path, PAIR_NOT_TWO)
        tokens.append([_str(pair[0], f"{path}[0]"), _float(pair[1], f"{path}[1]")])
    key_out = {
        "layer": _int(key["layer"], "key.layer", 1),
        "index": _int(key["index"], "key.index", 0),
        "value_top_tokens": tokens,
    }

    prefixes: list[dict[str, Any]] = []
    seen_ranks: set[int] = set()
    prefix_fields = {"rank", "coefficient", "sentence_index", "position", *_PREFIX_STRINGS}
    for p, raw in enumerate(_list(obj["prefixes"], "prefixes")):
        path = f"prefixes[{p}]"
        prefix = _object(raw, path, prefix_fields)
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
                "sentence_index": _int(prefix["sentence_index"], f"{path}.sentence_index"),
                "position": _int(prefix["position"], f"{path}.position"),
            }
        )
    if not prefixes:
        raise _LineError("prefixes", NO_PREFIXES)
    if seen_ranks != set(range(1, len(prefixes) + 1)):
        raise _LineError("prefixes", RANKS_NOT_CONTIGUOUS)
    prefixes.sort(key=lambda x: x["rank"])
    ranks: list[int] = [x["rank"] for x in prefixes]

    annotations: list[dict[str, Any]] = []
    annotators: set[str] = set()
    ann_fields = {"annotator", "status", "patterns", "labels"}
    for a, raw in enumerate(_list(obj["annotations"], "annotations")):
        path = f"annotations[{a}]"
        ann = _object(raw, path, ann_fields)
        name = _str(ann["annotator"], f"{path}.annotator", 150, non_empty=True)
        try:
            _username(name)
        except ValidationError:
            raise _LineError(f"{path}.annotator", ANNOTATOR_INVALID) from None
        if name in annotators:
            raise _LineError(f"{path}.annotator", ANNOTATOR_TWICE.format(name=name))
        annotators.add(name)
        status = ann["status"]
        if status not in Annotation.Status.values:
            raise _LineError(f"{path}.status", STATUS_UNKNOWN)
        patterns = []
        kinds: dict[int, set[str]] = {}
        for q, raw_pattern in enumerate(_list(ann["patterns"], f"{path}.patterns")):
            ppath = f"{path}.patterns[{q}]"
            pattern = _object(raw_pattern, ppath, {"description", "kind", "prefix_ranks"})
            description = _str(
                pattern["description"], f"{ppath}.description", MAX_DESCRIPTION, non_empty=True
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
                raise _LineError(
                    f"{ppath}.prefix_ranks", PATTERN_RANK_UNKNOWN.format(rank=unknown[0])
                )
            if len(covered) < PATTERN_MIN_PREFIXES:
                raise _LineError(f"{ppath}.prefix_ranks", PATTERN_TOO_FEW)
            for r in covered:
                kinds.setdefault(r, set()).add(kind)
            patterns.append(
                {"description": description, "kind": kind, "prefix_ranks": sorted(covered)}
            )
        labels = _list(ann["labels"], f"{path}.labels")
        for i, label in enumerate(labels):
            if label not in LABELS:
                raise _LineError(f"{path}.labels[{i}]", LABEL_UNKNOWN.format(label=label))
        if len(labels) != len(ranks):
            raise _LineError(f"{path}.labels", LABEL_COUNT.format(n=len(ranks), m=len(labels)))
        for i, (rank, label) in enumerate(zip(ranks, labels, strict=True)):
            expected = label_for_kinds(kinds.get(rank, ()))
            if label != expected:
                raise _LineError(
                    f"{path}.labels[{i}]", LABEL_MISMATCH.format(label=label, expected=expected)
                )
        annotations.append({"annotator": name, "status": status, "patterns": patterns})
    annotations.sort(key=lambda x: x["annotator"])
    return {"study": header, "key": key_out, "prefixes": prefixes, "annotations": annotations}


def _records(file: IO[bytes]) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, record, error) for every non-blank line of the file."""
    for number, raw in enumerate(file, start=1):
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            yield number, None, NOT_UTF8.format(line=number)
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except ValueError:
            yield number, None, NOT_JSON.format(line=number)
            continue
        except RecursionError:
            yield number, None, NESTED_TOO_DEEPLY.format(line=number)
            continue
        try:
            record = _validate_record(obj)
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
    *, file: IO[bytes], study_name: str | None = None, created_by: Any = None
) -> ImportResult:
    """Load a JSONL export into a new study (DESIGN §6). ``file`` must be seekable: it is
    read twice (validate, then write through ``annotate.imports.study_create_imported``).
    Annotators that do not exist become inactive annotator accounts with unusable
    passwords; an existing account that is not an annotator is an error; the imported keys
    form one batch, ``imported``, assigned to each annotator for the keys they annotated."""
    summary = _validate_file(file)
    assert summary.header is not None
    name = study_name if study_name is not None else summary.header["name"]
    if not 1 <= len(name.strip()) <= 200:
        raise ImportFileError([STUDY_NAME_INVALID])
    if Study.objects.filter(name=name).exists():
        raise ImportFileError([STUDY_NAME_TAKEN.format(name=name)])
    file.seek(0)
    header = summary.header
    return study_create_imported(
        header=ImportedStudy(
            name=name,
            model=header["model"],
            corpus=header["corpus"],
            top_k=header["top_k"],
            seed=header["seed"],
            n_layers=summary.max_layer,
            d_ff=summary.max_index + 1,
        ),
        annotators=summary.annotators,
        records=_validated_records(file),
        created_by=created_by,
    )
