"""The loader writes each stored example's tokens and per-token coefficients, and a
key's held-out ranks, samples and held-out random sentences as KeyExample rows, in the
study's one load (docs/evidence.md)."""

from __future__ import annotations

from typing import Any

import pytest

from annotate.models import KeyExample, TriggerPrefix
from mining.core.config import MineConfig
from mining.core.finalize import KeyResult, KeyStats, SampleExample, TriggerExample
from mining.loader import study_load
from mining.models import MiningRun

pytestmark = pytest.mark.django_db

TOP_K = 2


def fields(sentence: int, coefficient: float) -> dict[str, Any]:
    return {
        "coefficient": coefficient,
        "prefix": f"s{sentence} ends",
        "trigger_token": " ends",
        "trigger_token_id": 9,
        "next_token": " here",
        "next_token_id": 8,
        "suffix": " here.",
        "sentence": f"s{sentence} ends here.",
        "sentence_index": sentence,
        "position": 1,
        "tokens": [f"s{sentence}", " ends"],
        "token_coefficients": [coefficient / 2, coefficient],
    }


def test_the_loader_writes_tokens_and_every_kind_of_example(db, django_assert_max_num_queries):
    run = MiningRun.objects.create(
        study_name="evidence", params={"model": "m", "corpus": "c"}, status=MiningRun.Status.MERGING
    )
    result = KeyResult(
        layer=1,
        index=3,
        stats=KeyStats(density=0.5, max=1.0, mean=0.1, histogram=[1]),
        value_top_tokens=[],
        examples=[TriggerExample(rank=r, **fields(r, 1.0 - r / 10)) for r in (1, 2)],
        heldout=[TriggerExample(rank=r, **fields(r, 1.0 - r / 10)) for r in (3, 4)],
        samples=[
            SampleExample(
                rank=1, kind="band", band=1, band_low=0.0, band_high=0.2, **fields(10, 0.1)
            ),
            SampleExample(
                rank=2, kind="band", band=3, band_low=0.4, band_high=0.6, **fields(11, 0.5)
            ),
            SampleExample(rank=1, kind="random", **fields(12, -0.1)),
        ],
        heldout_random=[SampleExample(rank=1, kind="heldout_random", **fields(13, 0.02))],
    )
    model = {"n_layers": 2, "d_ff": 4, "causal": True, "vocab_size": 10}
    with django_assert_max_num_queries(20):  # bulk: a fixed number of queries
        study = study_load(
            run=run,
            config=MineConfig(top_k=TOP_K),
            model=model,
            results=[result],
            hist_edges=[0, 1],
        )
    prefixes = TriggerPrefix.objects.filter(key__study=study).order_by("rank")
    assert [(p.rank, p.tokens, p.token_coefficients) for p in prefixes] == [
        (1, ["s1", " ends"], [0.45, 0.9]),
        (2, ["s2", " ends"], [0.4, 0.8]),
    ]
    rows = KeyExample.objects.filter(key__study=study).order_by("kind", "order")
    got = [
        (e.kind, e.order, e.rank, e.band, e.band_low, e.band_high, e.sentence_index, e.text)
        for e in rows
    ]
    assert got == [
        ("band", 1, None, 1, 0.0, 0.2, 10, "s10 ends"),
        ("band", 2, None, 3, 0.4, 0.6, 11, "s11 ends"),
        ("heldout", 1, 3, None, None, None, 3, "s3 ends"),
        ("heldout", 2, 4, None, None, None, 4, "s4 ends"),
        ("heldout_random", 1, None, None, None, None, 13, "s13 ends"),
        ("random", 1, None, None, None, None, 12, "s12 ends"),
    ]
    random = rows.get(kind="random")
    assert (random.coefficient, random.tokens, random.token_coefficients) == (
        -0.1,
        ["s12", " ends"],
        [-0.05, -0.1],
    )
    assert (random.next_token, random.suffix, random.position) == (" here", " here.", 1)
    # A rerun of the load writes nothing twice.
    study_load(
        run=run, config=MineConfig(top_k=TOP_K), model=model, results=[result], hist_edges=[0, 1]
    )
    assert KeyExample.objects.filter(key__study=study).count() == 6
