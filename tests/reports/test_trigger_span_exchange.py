"""The trigger's character span in the JSONL export and import: an additive, optional
pair of fields per prefix (docs/data-format.md), validated on import."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from annotate.imports import ImportFileError
from annotate.models import Study, TriggerPrefix
from reports.exports import export_jsonl
from reports.imports.load import study_import

pytestmark = pytest.mark.django_db


def _lines(study: Study, name: str = "copy") -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in "".join(export_jsonl(study=study)).splitlines()]
    for line in lines:
        line["study"]["name"] = name
    return lines


def _file(lines: list[dict[str, Any]]) -> io.BytesIO:
    return io.BytesIO(("\n".join(json.dumps(x) for x in lines) + "\n").encode("utf-8"))


@pytest.fixture
def spanned(hand_study) -> Study:
    """hand_study with a known span on every prefix of one key ("prefix" in "prefix 3 of
    …"), none on the other's."""
    prefixes = TriggerPrefix.objects.filter(key__study=hand_study, key__layer=1)
    prefixes.update(trigger_start=0, trigger_end=6)
    return hand_study


def _spans(study: Study) -> list[tuple[int, int, int | None, int | None]]:
    return list(
        TriggerPrefix.objects.filter(key__study=study)
        .order_by("key__layer", "rank")
        .values_list("key__layer", "rank", "trigger_start", "trigger_end")
    )


def test_the_export_writes_each_prefixs_trigger_span_and_null_where_unknown(spanned):
    first, second = _lines(spanned)
    assert {(p["trigger_start"], p["trigger_end"]) for p in first["prefixes"]} == {(0, 6)}
    assert {p["text"][0:6] for p in first["prefixes"]} == {"prefix"}
    assert {(p["trigger_start"], p["trigger_end"]) for p in second["prefixes"]} == {(None, None)}


def test_an_import_keeps_the_trigger_spans_and_exports_them_again(spanned):
    lines = _lines(spanned)
    study = study_import(file=_file(lines)).study
    assert _spans(study) == _spans(spanned)
    assert _lines(study) == lines


def test_a_file_without_trigger_spans_imports_without_them(spanned):
    lines = _lines(spanned)
    for line in lines:
        for prefix in line["prefixes"]:
            del prefix["trigger_start"], prefix["trigger_end"]
    study = study_import(file=_file(lines)).study
    assert {(start, end) for _, _, start, end in _spans(study)} == {(None, None)}


@pytest.mark.parametrize(
    ("start", "end", "field", "message"),
    [
        (0, None, "trigger_start", "go together: both integers, or both null"),
        (None, 6, "trigger_start", "go together: both integers, or both null"),
        (4, 4, "trigger_end", "must be a span of text: 0 <= trigger_start < trigger_end <= "),
        (5, 2, "trigger_end", "must be a span of text"),
        (0, 999, "trigger_end", "must be a span of text: 0 <= trigger_start < trigger_end <= "),
        (-1, 3, "trigger_start", "must be between 0 and"),
        ("0", 3, "trigger_start", "must be an integer"),
        (0, 2.5, "trigger_end", "must be an integer"),
    ],
)
def test_a_bad_trigger_span_names_its_line_and_field_and_writes_nothing(
    spanned, start, end, field, message
):
    lines = _lines(spanned)
    lines[0]["prefixes"][2].update(trigger_start=start, trigger_end=end)
    studies = Study.objects.count()
    with pytest.raises(ImportFileError) as info:
        study_import(file=_file(lines))
    first = info.value.errors[0]
    assert first.startswith(f"line 1: prefixes[2].{field}: "), info.value.errors
    assert message in first, first
    assert Study.objects.count() == studies


def test_one_field_of_the_pair_alone_is_refused(spanned):
    lines = _lines(spanned)
    del lines[0]["prefixes"][0]["trigger_end"]
    with pytest.raises(ImportFileError) as info:
        study_import(file=_file(lines))
    assert info.value.errors[0].startswith("line 1: prefixes[0].trigger_start: ")
