"""Export files of a study (DESIGN §6): JSONL (the contract), CSV and Parquet, streamed
chunk by chunk, and ``export_to_file``, which never leaves a partial file under the
final name."""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from django.utils.text import slugify

from annotate.models import Study

from .csv_cells import csv_cell, csv_writer
from .selectors import export_chunks

SCHEMA = "ffkv.annotations/v1"
FORMATS = ("jsonl", "csv", "parquet")
CONTENT_TYPES = {
    "jsonl": "application/jsonl",
    "csv": "text/csv",
    "parquet": "application/vnd.apache.parquet",
}
CSV_COLUMNS = (
    "study",
    "layer",
    "index",
    "rank",
    "coefficient",
    "text",
    "trigger_token",
    "next_token",
    "sentence",
    "sentence_index",
    "position",
    "annotator",
    "status",
    "label",
    "patterns",
)
UNKNOWN_FORMAT = "The format must be one of jsonl, csv, parquet."


def export_filename(*, study: Study, fmt: str) -> str:
    return f"{slugify(study.name) or f'study-{study.pk}'}.{fmt}"


def _study_header(study: Study) -> dict[str, Any]:
    """The line's ``study``: the v1 contract's five fields, then the additive ones
    (DESIGN §6) that the report reads and a mined study cannot be given back without."""
    return {
        "name": study.name,
        "model": study.model_name,
        "corpus": study.corpus,
        "top_k": study.top_k,
        "seed": study.seed,
        "n_layers": study.n_layers,
        "d_ff": study.d_ff,
        "is_causal": study.is_causal,
        "vocab_size": study.vocab_size,
        "show_value_tokens": study.show_value_tokens,
        "value_agreement": study.value_agreement,
        "mining_definitions": study.mining_definitions,
    }


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
    chunk_size: int = 500,
    progress: ProgressCallback | None = None,
) -> Iterator[str]:
    """DESIGN §6's JSONL: one line per key, in (layer, index) order; yields one string per
    chunk of keys so that a streamed response holds one chunk at a time.

    Beside the v1 contract every line carries additive fields, so that an import gives
    back the study's report exactly (``reports.imports`` validates and keeps them): the
    study's ``n_layers``, ``d_ff``, ``is_causal``, ``vocab_size``,
    ``show_value_tokens``, ``value_agreement`` (§4 over every key,
    ffkv.value-agreement/v1) and ``mining_definitions``; per key ``value_top_token_ids``,
    ``density``, ``max_coefficient``, ``mean_coefficient``, ``histogram`` and
    ``perturbation``; per prefix ``trigger_token_id``, ``next_token_id``, ``suffix`` and
    ``trigger_start``, ``trigger_end`` (the trigger's character span in ``text``, null
    where unknown).
    Each line is ``json.dumps`` of its object; the study's part, the same on every line,
    is serialised once."""

    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    head = f'{{"schema": {dumps(SCHEMA)}, "study": {dumps(_study_header(study))}, "key": '
    for chunk in _chunks(study, layers, chunk_size, progress):
        yield "".join(
            f"{head}{dumps(record['key'])}, "
            f'"prefixes": {dumps(record["prefixes"])}, '
            f'"annotations": {dumps(record["annotations"])}}}\n'
            for record in chunk
        )


def _table_rows(study_name: str, chunk: list[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """One row per prefix × annotation; a key no one annotated still gives one row per
    prefix (annotator, status, label and patterns empty), so that no prefix is lost."""
    for record in chunk:
        key = record["key"]
        annotations = record["annotations"] or [None]
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
                    yield (*base, None, None, None, None)
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
                )


def export_csv(
    *,
    study: Study,
    layers: Sequence[int] | None = None,
    chunk_size: int = 500,
    progress: ProgressCallback | None = None,
) -> Iterator[str]:
    """CSV, one row per prefix × annotator (columns: ``CSV_COLUMNS``); ``patterns`` lists
    the 1-based numbers of the annotation's patterns that cover the prefix. A text cell
    that starts with ``= + - @``, a tab or a carriage return (a study name, a username, a
    prefix's text or token) is written behind a ``'`` so that a spreadsheet never runs it
    as a formula (``csv_cell``); numbers, and the JSONL and Parquet exports, are exact."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(CSV_COLUMNS)
    for chunk in _chunks(study, layers, chunk_size, progress):
        writer.writerows([csv_cell(v) for v in row] for row in _table_rows(study.name, chunk))
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    if out.tell():
        yield out.getvalue()


def _parquet_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("study", pa.string()),
            ("layer", pa.int32()),
            ("index", pa.int64()),
            ("rank", pa.int32()),
            ("coefficient", pa.float64()),
            ("text", pa.string()),
            ("trigger_token", pa.string()),
            ("next_token", pa.string()),
            ("sentence", pa.string()),
            ("sentence_index", pa.int64()),
            ("position", pa.int32()),
            ("annotator", pa.string()),
            ("status", pa.string()),
            ("label", pa.string()),
            ("patterns", pa.string()),
        ]
    )


def export_parquet(
    *,
    study: Study,
    sink: str | Path | IO[bytes],
    layers: Sequence[int] | None = None,
    chunk_size: int = 500,
    progress: ProgressCallback | None = None,
) -> None:
    """The CSV's rows, typed, into a Parquet file: one row group per chunk of keys."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _parquet_schema()
    with pq.ParquetWriter(sink, schema) as writer:
        wrote = False
        for chunk in _chunks(study, layers, chunk_size, progress):
            columns = list(zip(*_table_rows(study.name, chunk), strict=True))
            if not columns:
                continue
            writer.write_table(
                pa.Table.from_arrays(
                    [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)],
                    schema=schema,
                )
            )
            wrote = True
        if not wrote:
            writer.write_table(schema.empty_table())


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
            else:
                writer = export_jsonl if fmt == "jsonl" else export_csv
                for text in writer(study=study, layers=layers, progress=progress):
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
