"""A token's raw bytes (where it alone is part of a multi-byte character) in the JSONL
export and import: additive, optional fields per prefix, written only where a prefix has
them, validated on import."""

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

NAMES = ("trigger_token_bytes", "next_token_bytes")


def _lines(study: Study, name: str = "copy") -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in "".join(export_jsonl(study=study)).splitlines()]
    for line in lines:
        line["study"]["name"] = name
    return lines


def _file(lines: list[dict[str, Any]]) -> io.BytesIO:
    return io.BytesIO(("\n".join(json.dumps(x) for x in lines) + "\n").encode("utf-8"))


@pytest.fixture
def split(hand_study) -> Study:
    """hand_study with one prefix whose trigger and next tokens are bytes of an emoji."""
    TriggerPrefix.objects.filter(key__study=hand_study, key__layer=1, rank=2).update(
        trigger_token="\ufffd",
        trigger_token_bytes="f09f",
        next_token="\ufffd",
        next_token_bytes="a6",
    )
    return hand_study


def _bytes(study: Study) -> list[tuple[int, int, str, str]]:
    return list(
        TriggerPrefix.objects.filter(key__study=study)
        .order_by("key__layer", "rank")
        .values_list("key__layer", "rank", *NAMES)
    )


def test_the_export_writes_the_bytes_only_where_a_prefix_has_them(split):
    first, second = _lines(split)
    with_bytes = [p for p in first["prefixes"] if any(name in p for name in NAMES)]
    assert [(p["rank"], p["trigger_token_bytes"], p["next_token_bytes"]) for p in with_bytes] == [
        (2, "f09f", "a6")
    ]
    assert not any(name in p for p in second["prefixes"] for name in NAMES)


def test_an_import_keeps_the_bytes_and_exports_them_again(split):
    lines = _lines(split)
    study = study_import(file=_file(lines)).study
    assert _bytes(study) == _bytes(split)
    assert _lines(study) == lines


@pytest.mark.parametrize("value", ["F09F", "f09", "zz", "0x41", "ab" * 101, 7, None])
def test_bad_bytes_name_their_line_and_field_and_write_nothing(split, value):
    lines = _lines(split)
    lines[0]["prefixes"][1]["trigger_token_bytes"] = value
    studies = Study.objects.count()
    with pytest.raises(ImportFileError) as info:
        study_import(file=_file(lines))
    assert info.value.errors[0].startswith("line 1: prefixes[1].trigger_token_bytes: ")
    assert Study.objects.count() == studies
