"""Reports and exports of a study: the report's numbers, its CSV, the export files and the
export jobs that write them in the background (DESIGN §5, §6)."""

from __future__ import annotations

import csv
import io
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from django.utils.text import slugify
from kombu.exceptions import OperationalError as KombuOperationalError

from annotate.models import Study

from . import computations
from .models import ExportJob
from .selectors import ReportFilter, export_chunks, export_key_count, study_arrays

logger = logging.getLogger(__name__)

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
EXPORT_NOT_FINISHED = "This export is not finished."
EXPORT_FILE_MISSING = "The file of this export is gone; start a new export."
UNKNOWN_FORMAT = "The format must be one of jsonl, csv, parquet."

# Where DESIGN is silent, the report says what it computed (computations' docstring).
DEFINITIONS = {
    "rating": "one annotation's label of one prefix of its key",
    "unit": "a (key, prefix rank) cell; its coders are the annotators of that key",
    "figure2_pooled": "shares over all ratings",
    "figure2_majority": "one vote per rated unit; ties split the vote equally between the "
    "tied labels; `ties` counts the tied units",
    "coverage": "share of ratings covered by at least one pattern; mean patterns per "
    "annotation (one annotator's work on one key)",
    "raw_agreement": "agreeing pairs / all pairs of coders, pooled over units with 2+ coders",
    "fleiss_kappa": "over units rated by every selected coder",
    "cohen_kappa_mean": "mean over coder pairs of Cohen's kappa on the units both rated",
    "krippendorff_alpha": "nominal, over units with 2+ coders (missing data allowed)",
    "bootstrap": "keys resampled with replacement within each layer; 95% percentile "
    "interval; only keys with a unit rated by 2+ coders are resampled",
    "pattern_jaccard": "per coder pair and key: each pattern's best Jaccard (covered ranks) "
    "against the other coder's patterns (0 if none), averaged over both coders' patterns; "
    "keys where neither wrote a pattern are left out",
    "value_agreement_every_key": "§4 over every key of every layer, as the paper's authors "
    "computed it (counted by the mining pass, not over the sampled keys): for each key, "
    "the argmax of its value's vocabulary distribution softmax(v_i·E) is compared with "
    "the token after the key's rank-1 trigger prefix (reading a, next token) and with the "
    "prefix's last token (reading b, trigger token). Where the model has a final norm "
    "(e.g. model.norm) both are computed with E applied to v_i directly and to "
    "norm(v_i); the paper projects v_i without it. Denominators: reading (b) every key of "
    "the layer; reading (a) every key except those whose rank-1 prefix ends where the "
    "sentence was cut at the token limit (next_unknown: the next token is unknown, so the "
    "key cannot count either way). A prefix that ends the sentence has no next token: it "
    "stays in the denominator and never matches (next_end). Not defined for encoders, "
    "which see the whole sentence; not available for studies that were imported or "
    "mined before these counts were kept",
    "value_agreement": "the same comparison over the sampled keys only (those with a "
    "known value argmax and a rank-1 prefix); with ~10 keys a layer a rate moves in "
    "steps of 10%. A rank-1 prefix whose next token is unknown (cut sentence) is left out "
    "of reading (a)'s denominator and counted in next_unknown",
    "wilson_interval": "95% Wilson score interval of matches/denominator (z = 1.96): "
    "it stays inside [0, 1] and is not empty at 0 matches, unlike the normal "
    "approximation; the random baseline is 1/|V| for a vocabulary of |V| tokens",
}


# --- the report -------------------------------------------------------------------------


def report_build(
    *,
    study: Study,
    flt: ReportFilter | None = None,
    replicates: int = computations.BOOTSTRAP_REPLICATES,
    seed: int = computations.BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """The whole report of a study (DESIGN §5) as JSON-ready values."""
    flt = flt or ReportFilter()
    arrays = study_arrays(study=study, flt=flt)
    return {
        "study": {
            "id": study.pk,
            "name": study.name,
            "model": study.model_name,
            "corpus": study.corpus,
            "top_k": study.top_k,
        },
        "filters": {
            "annotators": list(flt.annotators) if flt.annotators is not None else None,
            "layers": list(flt.layers) if flt.layers is not None else None,
            "submitted_only": flt.submitted_only,
        },
        "labels": list(computations.LABELS),
        "definitions": report_definitions(study=study),
        **computations.report(arrays, replicates=replicates, seed=seed, is_causal=study.is_causal),
        "value_agreement_every_key": computations.value_agreement_every_key(
            study.value_agreement, is_causal=study.is_causal, layers=flt.layers
        ),
    }


def report_definitions(*, study: Study) -> dict[str, str]:
    """``DEFINITIONS``, with what the mining run of this study ranked and how, and any
    note on its checkpoint (``Study.mining_definitions``), where the study has them."""
    definitions = dict(DEFINITIONS)
    mining = study.mining_definitions if isinstance(study.mining_definitions, dict) else {}
    text, note = mining.get("text"), mining.get("checkpoint_note")
    if isinstance(text, str) and text.strip():
        definitions["mining"] = text.strip()
    if isinstance(note, str) and note.strip():
        definitions["checkpoint"] = note.strip()
    return definitions


REPORT_CSV_COLUMNS = (
    "section",
    "view",
    "layer",
    "annotator",
    "metric",
    "value",
    "low",
    "high",
    "n",
)


def _layer(value: int | None) -> str:
    return "all" if value is None else str(value)


def _rows_of(block: dict[str, Any]) -> list[dict[str, Any]]:
    return [*block["layers"], block["overall"]]


def report_csv_rows(report: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The report as a long table: one number per row."""
    labels = dict(zip(computations.LABEL_KEYS, computations.LABELS, strict=True))
    fig = report["figure2"]
    views = [("pooled", "", fig["pooled"]), ("majority", "", fig["majority"])] + [
        ("per_annotator", block["annotator"], block) for block in fig["per_annotator"]
    ]
    for view, annotator, block in views:
        for row in _rows_of(block):
            for key, label in labels.items():
                yield (
                    "figure2",
                    view,
                    _layer(row["layer"]),
                    annotator,
                    label,
                    row["shares"][key],
                    "",
                    "",
                    row["counts"][key],
                )
    for row in _rows_of(report["coverage"]):
        layer = _layer(row["layer"])
        yield (
            "coverage",
            "",
            layer,
            "",
            "share_covered",
            row["share_covered"],
            "",
            "",
            row["n_prefixes"],
        )
        yield (
            "coverage",
            "",
            layer,
            "",
            "mean_patterns_per_key",
            row["mean_patterns_per_key"],
            "",
            "",
            row["n_annotations"],
        )
    for view in ("labels", "binary"):
        for row in _rows_of(report["agreement"][view]):
            for metric in (
                "krippendorff_alpha",
                "fleiss_kappa",
                "cohen_kappa_mean",
                "raw_agreement",
            ):
                est = row[metric]
                yield (
                    "agreement",
                    view,
                    _layer(row["layer"]),
                    "",
                    metric,
                    est["value"],
                    est["low"],
                    est["high"],
                    est["n_units"],
                )
        for pair in report["agreement"][view]["cohen_kappa_pairs"]:
            yield (
                "agreement",
                view,
                "all",
                "|".join(pair["annotators"]),
                "cohen_kappa",
                pair["value"],
                "",
                "",
                pair["n_units"],
            )
    jac = report["pattern_jaccard"]
    for name, block in [("|".join(p["annotators"]), p) for p in jac["pairs"]] + [("", jac)]:
        for row in _rows_of(block):
            yield (
                "pattern_jaccard",
                "",
                _layer(row["layer"]),
                name,
                "best_match_jaccard",
                row["mean"],
                "",
                "",
                row["n_keys"],
            )
    yield from _value_agreement_csv_rows(report)
    for row in _rows_of(report["perturbation"]):
        for metric in computations.PERTURBATIONS:
            yield (
                "perturbation",
                "",
                _layer(row["layer"]),
                "",
                metric,
                row[metric],
                "",
                "",
                row["n_keys"],
            )


def _rate_row(section: str, view: str, layer: str, rate: dict[str, Any]) -> tuple[Any, ...]:
    return (section, view, layer, "", "rate", rate["rate"], rate["low"], rate["high"], rate["n"])


def _value_agreement_csv_rows(report: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """§4 over every key (section value_agreement_every_key, view ``reading/variant``) and
    over the sampled keys (value_agreement, view ``reading``): per layer a rate row (low,
    high: the Wilson interval; n: the denominator) and a matches row per reading, and
    the keys left out or never matching. A section that does not apply says so in one
    row: metric ``applicable``, value 0, view the reason code."""
    for section, block in (
        ("value_agreement_every_key", report["value_agreement_every_key"]),
        ("value_agreement", report["value_agreement"]),
    ):
        if not block["applicable"]:
            yield (section, block["reason"], "all", "", "applicable", 0, "", "", "")
            continue
        every_key = section == "value_agreement_every_key"
        for row in _rows_of(block):
            layer = _layer(row["layer"])
            for reading in computations.READINGS:
                cells = row[reading].items() if every_key else [("", row[reading])]
                for variant, rate in cells:
                    view = f"{reading}/{variant}" if variant else reading
                    yield _rate_row(section, view, layer, rate)
                    yield (section, view, layer, "", "matches", rate["matches"], "", "", rate["n"])
            for metric in ("next_end", "next_unknown"):
                yield (section, "", layer, "", metric, row[metric], "", "", row["n_keys"])
        yield (
            section,
            "random_baseline",
            "all",
            "",
            "rate",
            block["random_baseline"],
            "",
            "",
            block["vocab_size"],
        )


# --- CSV cells -------------------------------------------------------------------------

# A spreadsheet runs a cell that starts with one of these as a formula (OWASP, "CSV
# injection"); study names, usernames and prefix texts may start so.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """One value as a CSV cell: ``None`` empty, a text that starts like a formula behind a
    ``'`` so that a spreadsheet shows it as text. Every such text is prefixed, a plain
    negative number written as text (``"-0.5"``) too, as OWASP advises: the writer cannot
    tell a number from a formula such as ``-1+A1``. Numbers (int, float) are data and
    stay as they are. Only the CSV writers use this: JSONL and Parquet stay exact."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_writer(out: IO[str]) -> Any:
    """Every CSV of the project: RFC 4180's CRLF rows, which also makes the csv module
    quote a cell holding a lone ``\r`` (with ``\n`` rows Python 3.11 leaves it bare, and
    a reader breaks the row there)."""
    return csv.writer(out, lineterminator="\r\n")


def report_csv(report: dict[str, Any]) -> str:
    """The report as CSV (columns: ``REPORT_CSV_COLUMNS``); text cells pass through
    ``csv_cell``."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(REPORT_CSV_COLUMNS)
    for row in report_csv_rows(report):
        writer.writerow([csv_cell(v) for v in row])
    return out.getvalue()


# --- exports ----------------------------------------------------------------------------


def export_filename(*, study: Study, fmt: str) -> str:
    return f"{slugify(study.name) or f'study-{study.pk}'}.{fmt}"


def _study_header(study: Study) -> dict[str, Any]:
    return {
        "name": study.name,
        "model": study.model_name,
        "corpus": study.corpus,
        "top_k": study.top_k,
        "seed": study.seed,
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
    chunk of keys so that a streamed response holds one chunk at a time."""
    header = _study_header(study)
    for chunk in _chunks(study, layers, chunk_size, progress):
        yield "".join(
            json.dumps(
                {
                    "schema": SCHEMA,
                    "study": header,
                    "key": record["key"],
                    "prefixes": record["prefixes"],
                    "annotations": record["annotations"],
                },
                ensure_ascii=False,
                allow_nan=False,
            )
            + "\n"
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


def export_to_file(
    *,
    study: Study,
    fmt: str,
    path: Path,
    layers: Sequence[int] | None = None,
    progress: ProgressCallback | None = None,
) -> None:
    """Write the export to ``path`` through a temporary file renamed at the end, so that
    a crash never leaves a half file under the final name."""
    if fmt not in FORMATS:
        raise ValueError(UNKNOWN_FORMAT)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    if fmt == "parquet":
        export_parquet(study=study, sink=partial, layers=layers, progress=progress)
    else:
        writer = export_jsonl if fmt == "jsonl" else export_csv
        with partial.open("w", encoding="utf-8", newline="") as out:
            for text in writer(study=study, layers=layers, progress=progress):
                out.write(text)
    os.replace(partial, path)


# --- export jobs ------------------------------------------------------------------------


def exports_dir() -> Path:
    return Path(settings.DATA_DIR) / "exports"


QUEUE_UNAVAILABLE = "The task queue is unavailable; the export was not started."


def export_job_path(job: ExportJob) -> Path | None:
    return exports_dir() / job.file_path if job.file_path else None


def export_job_create(*, study: Study, fmt: str, created_by: Any = None) -> ExportJob:
    """Create the job, then queue it. When the broker cannot be reached the job is marked
    failed (so it never waits forever) and the broker's error is raised to the caller."""
    from .tasks import export_study

    if fmt not in FORMATS:
        raise ValueError(UNKNOWN_FORMAT)
    job = ExportJob.objects.create(
        study=study, format=fmt, created_by=created_by, keys_total=export_key_count(study=study)
    )
    try:
        export_study.delay(job.pk)  # the row is committed: the worker will find it
    except KombuOperationalError:
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportJob.Status.FAILED, error=QUEUE_UNAVAILABLE
        )
        raise
    return job


def export_job_run(*, job: ExportJob) -> ExportJob:
    """Write the job's file, recording progress as keys are written. A rerun (the task
    delivered twice) writes the file again from the start: the result is the same."""
    if job.status == ExportJob.Status.DONE:
        return job
    total = export_key_count(study=job.study)
    ExportJob.objects.filter(pk=job.pk).update(
        status=ExportJob.Status.RUNNING,
        started_at=timezone.now(),
        keys_total=total,
        keys_done=0,
        progress=0.0,
        error="",
    )

    def progress(done: int) -> None:
        ExportJob.objects.filter(pk=job.pk).update(
            keys_done=done, progress=min(1.0, done / total) if total else 1.0
        )

    name = f"export-{job.pk}-{export_filename(study=job.study, fmt=job.format)}"
    try:
        export_to_file(
            study=job.study, fmt=job.format, path=exports_dir() / name, progress=progress
        )
    except DatabaseError:
        raise  # the task retries: the database may be back in a moment (DESIGN §9)
    except Exception as exc:
        logger.exception("export job %s failed", job.pk)
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportJob.Status.FAILED, error=str(exc)[:2000], finished_at=timezone.now()
        )
        job.refresh_from_db()
        return job
    ExportJob.objects.filter(pk=job.pk).update(
        status=ExportJob.Status.DONE,
        progress=1.0,
        keys_done=total,
        file_path=name,
        finished_at=timezone.now(),
    )
    job.refresh_from_db()
    return job
