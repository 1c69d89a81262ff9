"""Export files of a study (docs/data-format.md): JSONL (the contract), CSV and Parquet (each a zip
of four tables: the prefixes' labels, the annotations' patterns, a key's gold
annotation among them as rows with ``gold`` true, the annotators' flags on keys, and
every stored example of a key with its per-token coefficients),
streamed chunk by chunk, and ``export_to_file``, which never leaves a partial file under
the final name."""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import shutil
import tempfile
import uuid
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from django.utils.text import slugify

from annotate.models import Study

from .contract.records import EXAMPLE_SETS, SCHEMA, SCORE_NAMES, STUDY
from .contract.tables import EXAMPLES, FLAGS, LABELS, PATTERNS, TABLES
from .csv_cells import csv_cell, csv_writer
from .selectors.export_records import EXPORT_CHUNK, export_chunks

FORMATS = ("jsonl", "csv", "parquet")
# CSV and Parquet carry four tables, so each downloads as a zip of four files (README,
# "Backup and restore"): ``labels``, ``patterns``, ``flags`` and ``examples``, named by
# ``TABLE_FILES``.
CONTENT_TYPES = {
    "jsonl": "application/jsonl",
    "csv": "application/zip",
    "parquet": "application/zip",
}
FILE_SUFFIXES = {"jsonl": ".jsonl", "csv": ".csv.zip", "parquet": ".parquet.zip"}
# The three tables' columns (``reports.contract.tables``): one row per prefix × annotator
# (``LABEL_COLUMNS``); one per key × annotator × pattern (``PATTERN_COLUMNS``: an
# annotation without patterns has one row, its pattern columns empty, so that its note
# and times are not lost; a key's gold annotation comes after its annotators' rows,
# ``gold`` true, its curator in ``annotator``; ``check`` is the annotation's ``check`` or
# the gold's ``is_check``; ``source_pattern`` is the ``pattern`` number of the adopted
# pattern among ``source_annotator``'s rows of the key; a pattern's rule and scores are
# flat columns, empty where it has none); one per flag (``FLAG_COLUMNS``); one per stored
# example of a key, its top-k and the other sets, with its tokens (``EXAMPLE_COLUMNS``).
LABEL_COLUMNS = LABELS.names
PATTERN_COLUMNS = PATTERNS.names
FLAG_COLUMNS = FLAGS.names
EXAMPLE_COLUMNS = EXAMPLES.names
# The lists of a line whose entries are a key's stored examples, in the line's order.
EXAMPLE_LISTS = ("prefixes", *(name for name, _, _ in EXAMPLE_SETS))
TABLE_FILES = {fmt: tuple(f"{table.name}.{fmt}" for table in TABLES) for fmt in ("csv", "parquet")}
UNKNOWN_FORMAT = "The format must be one of jsonl, csv, parquet."


def export_basename(study: Study) -> str:
    """The study's name as a file name, without a suffix."""
    return slugify(study.name) or f"study-{study.pk}"


def export_filename(*, study: Study, fmt: str) -> str:
    return export_basename(study) + FILE_SUFFIXES[fmt]


def _study_header(study: Study) -> dict[str, Any]:
    """The line's ``study``: the v1 contract's five fields, then the additive ones
    (docs/data-format.md, "Additive fields") that the report reads and a mined study
    cannot be given back without."""
    return {f.name: getattr(study, f.column or f.name) for f in STUDY.fields}


ProgressCallback = Callable[[int], None]


def _chunks(
    study: Study, layers: Sequence[int] | None, chunk_size: int, progress: ProgressCallback | None
) -> Iterator[list[dict[str, Any]]]:
    done = 0
    for chunk in export_chunks(study=study, layers=layers, chunk_size=chunk_size):
        yield chunk
        done += len(chunk)
        if progress is not None:
            progress(done)


def export_jsonl(
    *,
    study: Study,
    layers: Sequence[int] | None = None,
    chunk_size: int = EXPORT_CHUNK,
    progress: ProgressCallback | None = None,
) -> Iterator[str]:
    """The JSONL v1 (docs/data-format.md, "JSONL v1"): one line per key, in (layer,
    index) order; yields one string per chunk of keys so that a streamed response holds
    one chunk at a time.

    Beside the v1 contract every line carries additive fields, so that an import gives
    back the study's report exactly (``reports.imports`` validates and keeps them): the
    study's ``n_layers``, ``d_ff``, ``is_causal``, ``vocab_size``,
    ``show_value_tokens``, ``value_agreement`` (§4 over every key,
    ffkv.value-agreement/v1) and ``mining_definitions``; per key ``value_top_token_ids``,
    ``density``, ``max_coefficient``, ``mean_coefficient``, ``histogram`` and
    ``perturbation``; per prefix ``trigger_token_id``, ``next_token_id``, ``suffix`` and
    ``trigger_start``, ``trigger_end`` (the trigger's character span in ``text``, null
    where unknown); per annotation ``active_seconds``, ``guideline_version`` and
    ``check`` (made on a check key: kept here, left out of the reports), per pattern
    ``source`` ("written" or "suggestion"), ``rule`` (null or {type, value}) and
    ``scores`` ({} until scored); and per key ``gold``: null, or the curated annotation
    (its curator as ``annotator``, ``is_check``, and per pattern ``source`` "written" or
    "adopted", ``source_annotator`` and ``source_pattern``, the adopted pattern's
    0-based place in that annotator's ``patterns`` on this line, null where unknown,
    ``rule`` and ``scores``); and per key ``flags``: the annotators' flags on it
    (``reason``, ``note``, ``annotator``, ``created_at``) by username, [] where none.
    Evidence beyond the top-k (docs/evidence.md): per prefix ``tokens`` and
    ``token_coefficients``; per key ``heldout`` (shaped like ``prefixes``, ranks top_k+1
    on), ``heldout_random`` (the same without ``rank``) and ``samples`` (without
    ``rank``, with ``kind``, ``band``, ``band_low``, ``band_high``; bands 1 to 5, then
    the random ones), [] where none. An export is for curators and admins only, so the
    held-out sets belong in it.
    Each line is ``json.dumps`` of its object; the study's part, the same on every line,
    is serialised once."""

    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    head = f'{{"schema": {dumps(SCHEMA)}, "study": {dumps(_study_header(study))}, "key": '
    for chunk in _chunks(study, layers, chunk_size, progress):
        yield "".join(
            f"{head}{dumps(record['key'])}, "
            f'"prefixes": {dumps(record["prefixes"])}, '
            f'"heldout": {dumps(record["heldout"])}, '
            f'"heldout_random": {dumps(record["heldout_random"])}, '
            f'"samples": {dumps(record["samples"])}, '
            f'"annotations": {dumps(record["annotations"])}, '
            f'"gold": {dumps(record["gold"])}, '
            f'"flags": {dumps(record["flags"])}}}\n'
            for record in chunk
        )


def _label_rows(study_name: str, chunk: list[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """The labels table (``LABEL_COLUMNS``): one row per prefix × annotation, then the
    key's gold annotation (``gold`` true); a key no one annotated or curated still gives
    one row per prefix (annotator, status, label and patterns empty), so that no prefix
    is lost. ``patterns`` lists the 1-based numbers of the annotation's patterns that
    cover the prefix (the patterns table's ``pattern``)."""
    for record in chunk:
        key = record["key"]
        annotations: list[dict[str, Any] | None] = [*_annotations_and_gold(record)] or [None]
        for position, prefix in enumerate(record["prefixes"]):
            base = (
                study_name,
                key["layer"],
                key["index"],
                prefix["rank"],
                prefix["coefficient"],
                prefix["text"],
                prefix["trigger_token"],
                prefix["next_token"],
                prefix["sentence"],
                prefix["sentence_index"],
                prefix["position"],
            )
            for ann in annotations:
                if ann is None:
                    yield (*base, None, None, None, None, None, None)
                    continue
                covering = [
                    str(n)
                    for n, pattern in enumerate(ann["patterns"], start=1)
                    if prefix["rank"] in pattern["prefix_ranks"]
                ]
                yield (
                    *base,
                    ann["annotator"],
                    ann["status"],
                    ann["labels"][position],
                    ";".join(covering),
                    ann is record["gold"],
                    _check(ann, record),
                )


def _annotations_and_gold(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The key's annotations, then its gold annotation where it has one."""
    gold = record["gold"]
    return [*record["annotations"], gold] if gold is not None else record["annotations"]


def _check(ann: dict[str, Any], record: dict[str, Any]) -> bool:
    return bool(ann["is_check"] if ann is record["gold"] else ann["check"])


def _pattern_rows(
    study_name: str, chunk: list[dict[str, Any]], ranks: Callable[[list[int]], Any]
) -> Iterator[tuple[Any, ...]]:
    """The patterns table (``PATTERN_COLUMNS``); ``ranks`` writes a pattern's prefix
    ranks as the format holds them. Times are the export's ISO 8601 texts."""
    for record in chunk:
        key = record["key"]
        for ann in _annotations_and_gold(record):
            is_gold = ann is record["gold"]
            base = (
                study_name,
                key["layer"],
                key["index"],
                ann["annotator"],
                ann["status"],
                ann["note"],
                ann["version"],
                ann["created_at"],
                ann["updated_at"],
                ann["submitted_at"],
                is_gold,
                _check(ann, record),
                None if is_gold else ann["active_seconds"],
                None if is_gold else ann["guideline_version"],
            )
            if not ann["patterns"]:
                yield (*base, *(None,) * (len(PATTERN_COLUMNS) - len(base)))
            for n, pattern in enumerate(ann["patterns"], start=1):
                source_pattern = pattern.get("source_pattern")
                rule = pattern["rule"] or {}
                scores = pattern["scores"]
                yield (
                    *base,
                    n,
                    pattern["description"],
                    pattern["kind"],
                    ranks(pattern["prefix_ranks"]),
                    pattern["created_at"],
                    pattern["updated_at"],
                    pattern["source"],
                    pattern.get("source_annotator"),
                    None if source_pattern is None else source_pattern + 1,
                    rule.get("type"),
                    rule.get("value"),
                    *(scores.get(name) for name in SCORE_NAMES),
                )


def _example_rows(
    study_name: str, chunk: list[dict[str, Any]], tokens: Callable[[list[Any]], Any]
) -> Iterator[tuple[Any, ...]]:
    """The examples table (``EXAMPLE_COLUMNS``): one row per stored example of each key,
    its top-k first (``set`` the line's list: ``prefixes``, then ``heldout``,
    ``heldout_random``, ``samples``); ``tokens`` writes a list of tokens or of
    coefficients as the format holds it."""
    for record in chunk:
        key = record["key"]
        for name in EXAMPLE_LISTS:
            for example in record[name]:
                yield (
                    study_name,
                    key["layer"],
                    key["index"],
                    name,
                    example.get("rank"),
                    example.get("kind"),
                    example.get("band"),
                    example.get("band_low"),
                    example.get("band_high"),
                    example["coefficient"],
                    example["text"],
                    example["trigger_token"],
                    example["next_token"],
                    example["sentence"],
                    example["sentence_index"],
                    example["position"],
                    tokens(example["tokens"]),
                    tokens(example["token_coefficients"]),
                )


def _json_cell(values: list[Any]) -> str:
    """A list in one CSV cell: a JSON array (a token may hold ``;`` or a comma)."""
    return json.dumps(values, ensure_ascii=False, allow_nan=False)


def _flag_rows(study_name: str, chunk: list[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """The flags table (``FLAG_COLUMNS``): one row per flag, times as ISO 8601 texts."""
    for record in chunk:
        key = record["key"]
        for flag in record["flags"]:
            yield (
                study_name,
                key["layer"],
                key["index"],
                flag["annotator"],
                flag["reason"],
                flag["note"],
                flag["created_at"],
            )


class _Pipe:
    """An unseekable sink for a zip written on the fly: ``take`` hands out what was
    written since the last call (``zipfile`` writes data descriptors to such a sink)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts.clear()
        return out


COPY_BLOCK = 1 << 20
SPOOL_BYTES = 16 << 20


def _csv_text(rows: Iterator[tuple[Any, ...]]) -> bytes:
    out = io.StringIO()
    csv_writer(out).writerows([csv_cell(v) for v in row] for row in rows)
    return out.getvalue().encode("utf-8")


def _csv_header(columns: Sequence[str]) -> bytes:
    return _csv_text(iter([tuple(columns)]))


def export_csv(
    *,
    study: Study,
    layers: Sequence[int] | None = None,
    chunk_size: int = EXPORT_CHUNK,
    progress: ProgressCallback | None = None,
) -> Iterator[bytes]:
    """A zip of four CSV files, yielded piece by piece as it is written (one chunk of
    keys at a time): ``labels.csv`` (``LABEL_COLUMNS``), ``patterns.csv``
    (``PATTERN_COLUMNS``; prefix ranks as ``1;2;5``), ``flags.csv`` (``FLAG_COLUMNS``)
    and ``examples.csv`` (``EXAMPLE_COLUMNS``; tokens and their coefficients as JSON
    arrays). The labels are written into the zip as they are read; the other tables wait
    in spooled temporary files (memory up to ``SPOOL_BYTES`` each, then disk) and
    follow. A text cell that starts with ``= + - @``, a tab or a carriage return
    (a study name, a username, a note, a prefix's text or token) is written behind a
    ``'`` so that a spreadsheet never runs it as a formula (``csv_cell``); numbers, and the
    JSONL and Parquet exports, are exact."""
    labels_name, patterns_name, flags_name, examples_name = TABLE_FILES["csv"]
    pipe = _Pipe()
    with (
        tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as held,
        tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as held_flags,
        tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as held_examples,
        zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED) as archive,
    ):
        held.write(_csv_header(PATTERN_COLUMNS))
        held_flags.write(_csv_header(FLAG_COLUMNS))
        held_examples.write(_csv_header(EXAMPLE_COLUMNS))
        with archive.open(labels_name, "w", force_zip64=True) as labels:
            labels.write(_csv_header(LABEL_COLUMNS))
            for chunk in _chunks(study, layers, chunk_size, progress):
                labels.write(_csv_text(_label_rows(study.name, chunk)))
                held.write(_csv_text(_pattern_rows(study.name, chunk, _ranks_text)))
                held_flags.write(_csv_text(_flag_rows(study.name, chunk)))
                held_examples.write(_csv_text(_example_rows(study.name, chunk, _json_cell)))
                yield pipe.take()
        for name, spooled in (
            (patterns_name, held),
            (flags_name, held_flags),
            (examples_name, held_examples),
        ):
            spooled.seek(0)
            with archive.open(name, "w", force_zip64=True) as table:
                while block := spooled.read(COPY_BLOCK):
                    table.write(block)
                    yield pipe.take()
    yield pipe.take()


def _ranks_text(ranks: list[int]) -> str:
    return ";".join(str(r) for r in ranks)


_TIME_COLUMNS = frozenset().union(*(table.time_columns for table in TABLES))


def _arrow_table(rows: list[tuple[Any, ...]], schema: Any) -> Any:
    import pyarrow as pa

    columns = list(zip(*rows, strict=True))
    arrays = []
    for values, f in zip(columns, schema, strict=True):
        if f.name in _TIME_COLUMNS:
            times = [None if v is None else datetime.fromisoformat(v) for v in values]
            arrays.append(pa.array(times, type=f.type))
        else:
            arrays.append(pa.array(values, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def export_parquet(
    *,
    study: Study,
    sink: str | Path | IO[bytes],
    layers: Sequence[int] | None = None,
    chunk_size: int = EXPORT_CHUNK,
    progress: ProgressCallback | None = None,
) -> None:
    """A zip of four Parquet files, typed: ``labels.parquet`` (``LABEL_COLUMNS``),
    ``patterns.parquet`` (``PATTERN_COLUMNS``; prefix ranks a list of integers, times UTC
    timestamps), ``flags.parquet`` (``FLAG_COLUMNS``, the time a UTC timestamp) and
    ``examples.parquet`` (``EXAMPLE_COLUMNS``; tokens a list of strings, coefficients a
    list of floats), one row group per chunk of keys. Each is written to an anonymous
    temporary file in one pass over the study (Parquet's footer comes last), then all
    are stored in the zip as they are (Parquet compresses its own pages)."""
    import pyarrow.parquet as pq

    schemas = tuple(table.arrow_schema() for table in TABLES)

    def rows(chunk: list[dict[str, Any]]) -> tuple[list[tuple[Any, ...]], ...]:
        return (
            list(_label_rows(study.name, chunk)),
            list(_pattern_rows(study.name, chunk, list)),
            list(_flag_rows(study.name, chunk)),
            list(_example_rows(study.name, chunk, list)),
        )

    with (
        tempfile.TemporaryFile() as labels_file,
        tempfile.TemporaryFile() as patterns_file,
        tempfile.TemporaryFile() as flags_file,
        tempfile.TemporaryFile() as examples_file,
    ):
        files = (labels_file, patterns_file, flags_file, examples_file)
        with (
            pq.ParquetWriter(labels_file, schemas[0]) as labels,
            pq.ParquetWriter(patterns_file, schemas[1]) as patterns,
            pq.ParquetWriter(flags_file, schemas[2]) as flags,
            pq.ParquetWriter(examples_file, schemas[3]) as examples,
        ):
            writers = (labels, patterns, flags, examples)
            wrote = [False] * len(writers)
            for chunk in _chunks(study, layers, chunk_size, progress):
                for t, table_rows in enumerate(rows(chunk)):
                    if table_rows:
                        writers[t].write_table(_arrow_table(table_rows, schemas[t]))
                        wrote[t] = True
            for t, schema in enumerate(schemas):
                if not wrote[t]:
                    writers[t].write_table(schema.empty_table())
        with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_STORED) as archive:
            for name, f in zip(TABLE_FILES["parquet"], files, strict=True):
                f.seek(0)
                with archive.open(name, "w", force_zip64=True) as entry:
                    shutil.copyfileobj(f, entry, COPY_BLOCK)


@dataclass(frozen=True)
class WrittenFile:
    """What ``export_to_file`` put under its path: recorded so that a reader can tell the
    file it serves is the one that was completed."""

    size: int
    sha256: str


PARTIAL_SUFFIX = ".part"


def partial_files(path: Path) -> list[Path]:
    """The temporary files that writers of ``path`` left behind (killed mid-write)."""
    return sorted(path.parent.glob(f".{glob.escape(path.name)}.*{PARTIAL_SUFFIX}"))


def export_to_file(
    *,
    study: Study,
    fmt: str,
    path: Path,
    layers: Sequence[int] | None = None,
    progress: ProgressCallback | None = None,
) -> WrittenFile:
    """Write the export to ``path`` through a temporary file of its own in the same
    folder (``.NAME.<random>.part``), synced to disk and then renamed over ``path`` in one
    step. A writer killed at any moment leaves ``path`` as it was (absent, or an earlier
    complete file) and at most its ``.part`` file; two writers of one path (a task
    delivered twice) never share a temporary file. Returns the size and SHA-256 of the
    file, read back from the disk."""
    if fmt not in FORMATS:
        raise ValueError(UNKNOWN_FORMAT)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}{PARTIAL_SUFFIX}")
    try:
        with partial.open("xb") as out:  # "x": a name of its own, never another's file
            if fmt == "parquet":
                export_parquet(study=study, sink=out, layers=layers, progress=progress)
            elif fmt == "csv":
                for data in export_csv(study=study, layers=layers, progress=progress):
                    out.write(data)
            else:
                for text in export_jsonl(study=study, layers=layers, progress=progress):
                    out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        with partial.open("rb") as done:
            written = WrittenFile(
                size=os.fstat(done.fileno()).st_size,
                sha256=hashlib.file_digest(done, "sha256").hexdigest(),
            )
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return written
