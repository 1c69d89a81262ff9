"""``study_import``: a JSONL file into a new study, validated in a first pass and written
in a second through ``annotate.imports.study_create_imported``."""

from __future__ import annotations

from typing import IO, Any

from annotate.imports import (
    ImportedStudy,
    ImportFileError,
    ImportResult,
    study_create_imported,
)
from annotate.models import Study
from annotate.services.scores import scores_queue

from .messages import STUDY_NAME_INVALID, STUDY_NAME_TAKEN
from .records import _validate_file, _validated_records

_STUDY_HEADER_ADDITIVE = (
    "is_causal",
    "vocab_size",
    "show_value_tokens",
    "value_agreement",
    "mining_definitions",
)


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
    result = study_create_imported(
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
    # The imported patterns' held-out scores (docs/evidence.md), once the import commits.
    scores_queue(study_id=result.study.pk)
    return result
