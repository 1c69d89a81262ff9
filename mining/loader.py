"""Write a finished mining run into annotate's tables: bulk, one transaction, rerunnable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.db import transaction

from annotate.db import analyze
from annotate.models import Key, KeyExample, Study, TriggerPrefix
from mining.core.config import MineConfig
from mining.core.errors import MiningError, MiningStopped

from .models import MiningRun

if TYPE_CHECKING:  # finalize imports torch: web processes import this module
    from mining.core.finalize import KeyResult, TriggerExample

STUDY_EXISTS = "A study named {name!r} already exists; choose another study name."
PREFIX_BATCH = 5000
# TriggerPrefix.*_token_bytes hold up to 200 hex digits.
MAX_TOKEN_BYTES = 100


def _hex(raw: bytes | None) -> str:
    """A token's raw bytes as stored: hex, or "" (none needed, or too long to keep)."""
    return raw.hex() if raw and len(raw) <= MAX_TOKEN_BYTES else ""


def _text_fields(example: TriggerExample) -> dict[str, Any]:
    """The fields a TriggerPrefix and a KeyExample share."""
    return {
        "coefficient": example.coefficient,
        "text": example.prefix,
        "trigger_token": example.trigger_token[:200],
        "trigger_token_id": example.trigger_token_id,
        "next_token": None if example.next_token is None else example.next_token[:200],
        "next_token_id": example.next_token_id,
        "suffix": example.suffix,
        "sentence": example.sentence,
        "sentence_index": example.sentence_index,
        "position": example.position,
        "trigger_start": example.trigger_start,
        "trigger_end": example.trigger_end,
        "trigger_token_bytes": _hex(example.trigger_token_bytes),
        "next_token_bytes": _hex(example.next_token_bytes),
        "tokens": list(example.tokens),
        "token_coefficients": [float(c) for c in example.token_coefficients],
    }


def _key_examples(key: Key, result: KeyResult, top_k: int) -> list[KeyExample]:
    """The key's held-out ranks, samples and held-out random sentences as rows."""
    rows = [
        KeyExample(
            key=key,
            kind=KeyExample.Kind.HELDOUT,
            order=e.rank - top_k,
            rank=e.rank,
            **_text_fields(e),
        )
        for e in result.heldout
    ]
    for e in [*result.samples, *result.heldout_random]:
        band = e.band if e.kind == KeyExample.Kind.BAND else None
        rows.append(
            KeyExample(
                key=key,
                kind=e.kind,
                order=e.rank,
                band=band,
                band_low=e.band_low if band else None,
                band_high=e.band_high if band else None,
                **_text_fields(e),
            )
        )
    return rows


@transaction.atomic
def study_load(
    *,
    run: MiningRun,
    config: MineConfig,
    model: dict[str, Any],
    results: Sequence[KeyResult],
    hist_edges: Sequence[float],
    perturbation: dict[tuple[int, int], dict[str, float | None]] | None = None,
    value_agreement: dict[str, Any] | None = None,
    sparsity: dict[str, Any] | None = None,
    definitions: dict[str, Any] | None = None,
) -> Study:
    """Create the run's study with its sampled keys, their trigger prefixes (with their
    per-token coefficients) and their other examples (``KeyExample``: held-out ranks,
    samples below the top, held-out random sentences; docs/evidence.md).

    A rerun (the merge task delivered twice, or retried after a crash) finds the study
    already loaded for this run and writes nothing; unique constraints guard the rest.
    The run's row stays locked until the caller's transaction ends: a run that is no
    longer merging (cancelled) is refused here, and a cancel waits for the load.
    """
    run = MiningRun.objects.select_for_update().get(pk=run.pk)
    if run.study_id is not None:
        return Study.objects.get(pk=run.study_id)
    if run.status != MiningRun.Status.MERGING or run.cancel_requested:
        # Cancelled (or failed) since the merge began: no study, whatever was computed.
        raise MiningStopped(f"run {run.pk} is {run.status}: its study is not loaded")
    if Study.objects.filter(name=run.study_name).exists():
        raise MiningError(STUDY_EXISTS.format(name=run.study_name))
    study = Study.objects.create(
        name=run.study_name,
        model_name=config.model,
        corpus=config.corpus,
        top_k=config.top_k,
        seed=config.seed,
        n_layers=model["n_layers"],
        d_ff=model["d_ff"],
        is_causal=model["causal"],
        vocab_size=model["vocab_size"],
        value_agreement=value_agreement or {},
        sparsity=sparsity or {},
        mining_definitions=definitions or {},
        created_by=run.created_by,
    )
    edges = [float(e) for e in hist_edges]
    keys = Key.objects.bulk_create(
        [
            Key(
                study=study,
                layer=result.layer + 1,  # 1-based in the database and every interface
                index=result.index,
                density=result.stats.density,
                max_coefficient=result.stats.max,
                mean_coefficient=result.stats.mean,
                histogram={"edges": edges, "counts": list(result.stats.histogram)},
                value_top_tokens=[[v.token, v.probability] for v in result.value_top_tokens],
                value_top_token_ids=[v.token_id for v in result.value_top_tokens],
                perturbation=(perturbation or {}).get((result.layer, result.index), {}),
            )
            for result in results
        ]
    )
    TriggerPrefix.objects.bulk_create(
        [
            TriggerPrefix(key=key, rank=example.rank, **_text_fields(example))
            for key, result in zip(keys, results, strict=True)
            for example in result.examples
        ],
        batch_size=PREFIX_BATCH,
    )
    KeyExample.objects.bulk_create(
        [
            row
            for key, result in zip(keys, results, strict=True)
            for row in _key_examples(key, result, config.top_k)
        ],
        batch_size=PREFIX_BATCH,
    )
    run.study = study
    run.save(update_fields=["study"])
    analyze(Key, TriggerPrefix, KeyExample)
    return study
