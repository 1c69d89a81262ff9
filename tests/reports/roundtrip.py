"""Helpers for the export/import round trips (tests/reports): a study's JSONL export
as text or lines, a file of lines to import, users in a group, a study given every
evidence field (``with_evidence``), and every column of a study's annotations, gold and
stored examples to compare an imported copy with its original."""

from __future__ import annotations

import io
import json
from typing import Any

from django.contrib.auth.models import Group
from django.db.models import Model

from annotate.models import (
    Annotation,
    GoldAnnotation,
    GoldPattern,
    Key,
    KeyExample,
    Pattern,
    Study,
    TriggerPrefix,
)
from reports.exports import export_jsonl
from reports.imports.load import study_import
from tests.factories import key_examples


def in_group(user, name: str):
    user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user


def export_text(study: Study) -> str:
    return "".join(export_jsonl(study=study))


def export_lines(study: Study) -> list[dict[str, Any]]:
    return [json.loads(line) for line in export_text(study).splitlines()]


def as_text(lines: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def as_file(lines: list[dict[str, Any]]) -> io.BytesIO:
    return io.BytesIO(as_text(lines).encode("utf-8"))


def load(text: str, **kwargs: Any):
    return study_import(file=io.BytesIO(text.encode("utf-8")), **kwargs)


def gold_for(key: Key, *, curator, patterns, **fields) -> GoldAnnotation:
    """``key``'s gold: ``patterns`` as (kind, ranks, source, source annotation or None,
    the source pattern's place in it or None)."""
    gold = GoldAnnotation.objects.create(key=key, curator=curator, **fields)
    by_rank = {p.rank: p for p in key.prefixes.all()}
    for order, (kind, ranks, source, source_ann, place) in enumerate(patterns):
        source_patterns = (
            list(source_ann.patterns.order_by("order", "id")) if source_ann is not None else []
        )
        pattern = GoldPattern.objects.create(
            gold=gold,
            description=f"gold {kind} {order}",
            kind=kind,
            order=order,
            source=source,
            source_annotator=source_ann.annotator if source_ann is not None else None,
            source_pattern=source_patterns[place] if place is not None else None,
        )
        pattern.prefixes.set([by_rank[r] for r in ranks])
    return gold


def with_evidence(study: Study) -> Study:
    """``study`` given every evidence field (docs/evidence.md), on its first key: every
    set of stored examples (``key_examples``, as many held-out ones as ``top_k``), tokens
    and their coefficients on each prefix, and on its patterns a rule, scores (some
    null) and an accepted suggestion's source; the same on its gold patterns."""
    key = Key.objects.filter(study=study).order_by("layer", "index").first()
    assert key is not None
    key_examples(key, top_k=study.top_k, max_coefficient=4.0)
    prefixes = list(TriggerPrefix.objects.filter(key=key))
    for prefix in prefixes:
        prefix.tokens = ["pre", "fix", prefix.trigger_token]
        # Signed: a SwiGLU coefficient can be negative (docs/evidence.md).
        prefix.token_coefficients = [
            (-1) ** i * prefix.coefficient / (i + 1) for i in range(len(prefix.tokens))
        ]
    TriggerPrefix.objects.bulk_update(prefixes, ["tokens", "token_coefficients"])
    patterns = list(
        Pattern.objects.filter(annotation__key=key).exclude(kind="semantic").order_by("id")
    )
    assert patterns, "the key needs a pattern with a shallow side"
    Pattern.objects.filter(pk=patterns[0].pk).update(
        source="suggestion",
        rule={"type": "token", "value": "t1"},
        scores={
            "detection": 0.75,
            "embedding": 0.625,
            "shuffled_detection": 0.5,
            "shuffled_embedding": 0.4375,
        },
    )
    Pattern.objects.filter(annotation__key=key).exclude(pk=patterns[0].pk).update(
        scores={
            "detection": None,
            "embedding": 0.5,
            "shuffled_detection": None,
            "shuffled_embedding": None,
        }
    )
    GoldPattern.objects.filter(gold__key=key, kind="shallow").update(
        rule={"type": "suffix", "value": "ing"},
        scores={
            "detection": 1.0,
            "embedding": 0.0,
            "shuffled_detection": 0.25,
            "shuffled_embedding": None,
        },
    )
    return study


# What is no data of the study: ids, and the browser's token for a retried write.
NOT_EXPORTED = {"id", "client_id"}


def _columns(model: type[Model], *named: str) -> list[str]:
    """The model's concrete columns, less the ids and those ``named`` (compared as what
    they name)."""
    return [
        f.attname for f in model._meta.concrete_fields if f.name not in NOT_EXPORTED | set(named)
    ]


def _ranks(obj) -> list[int]:
    return sorted(p.rank for p in obj.prefixes.all())


def study_rows(study: Study) -> dict[str, Any]:
    """Every concrete column of the study's annotations, patterns, golds and gold
    patterns; a foreign key as what it names (layer and index, username, prefix ranks,
    an annotator pattern as its key, annotator and place), order as the place."""
    ann_fields = _columns(Annotation, "key", "annotator")
    # An accepted suggestion's link to it: the suggestions are no part of the file
    # (docs/data-format.md); its ``source`` is compared.
    pattern_fields = _columns(Pattern, "annotation", "order", "suggestion")
    gold_fields = _columns(GoldAnnotation, "key", "curator")
    gold_pattern_fields = _columns(
        GoldPattern, "gold", "order", "source_pattern", "source_annotator"
    )
    assert {"note", "version", "created_at", "updated_at", "submitted_at"} <= set(ann_fields)
    assert {"active_seconds", "guideline_version", "is_check"} <= set(ann_fields)
    assert {"description", "kind", "created_at", "updated_at"} <= set(pattern_fields)
    assert {"source", "rule", "scores"} <= set(pattern_fields)
    assert {"status", "note", "version", "is_check", "submitted_at"} <= set(gold_fields)
    assert {"description", "kind", "source", "created_at"} <= set(gold_pattern_fields)
    place: dict[int, tuple[Any, ...]] = {}
    annotations = []
    for annotation in (
        Annotation.objects.filter(key__study=study)
        .select_related("key", "annotator")
        .prefetch_related("patterns__prefixes")
        .order_by("key__layer", "key__index", "annotator__username")
    ):
        who = (annotation.key.layer, annotation.key.index, annotation.annotator.get_username())
        patterns = sorted(annotation.patterns.all(), key=lambda p: (p.order, p.id))
        for n, p in enumerate(patterns):
            place[p.pk] = (*who, n)
        annotations.append(
            {
                "who": who,
                **{name: getattr(annotation, name) for name in ann_fields},
                "patterns": [
                    {**{name: getattr(p, name) for name in pattern_fields}, "ranks": _ranks(p)}
                    for p in patterns
                ],
            }
        )
    golds = []
    for gold in (
        GoldAnnotation.objects.filter(key__study=study)
        .select_related("key", "curator")
        .prefetch_related("patterns__prefixes", "patterns__source_annotator")
        .order_by("key__layer", "key__index")
    ):
        golds.append(
            {
                "key": (gold.key.layer, gold.key.index),
                "curator": gold.curator.get_username() if gold.curator else None,
                **{name: getattr(gold, name) for name in gold_fields},
                "patterns": [
                    {
                        **{name: getattr(p, name) for name in gold_pattern_fields},
                        "ranks": _ranks(p),
                        "source_annotator": (
                            p.source_annotator.get_username() if p.source_annotator else None
                        ),
                        "source_pattern": place.get(p.source_pattern_id)
                        if p.source_pattern_id
                        else None,
                    }
                    for p in sorted(gold.patterns.all(), key=lambda p: (p.order, p.id))
                ],
            }
        )
    return {"annotations": annotations, "golds": golds, **example_rows(study)}


def example_rows(study: Study) -> dict[str, Any]:
    """Every concrete column of the study's prefixes and other stored examples, a key as
    its layer and index: in (layer, index, rank) and (layer, index, kind, order) order."""
    prefix_fields = _columns(TriggerPrefix, "key")
    example_fields = _columns(KeyExample, "key")
    assert {"tokens", "token_coefficients"} <= set(prefix_fields)
    assert {"kind", "order", "rank", "band", "band_low", "band_high"} <= set(example_fields)
    return {
        name: [
            {"key": (row.key.layer, row.key.index), **{f: getattr(row, f) for f in fields}}
            for row in model.objects.filter(key__study=study)
            .select_related("key")
            .order_by("key__layer", "key__index", *order)
        ]
        for name, model, fields, order in (
            ("prefixes", TriggerPrefix, prefix_fields, ("rank",)),
            ("examples", KeyExample, example_fields, ("kind", "order")),
        )
    }
