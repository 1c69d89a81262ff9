"""The loader keeps a trigger example's raw token bytes (hex) beside its decoded text."""

from __future__ import annotations

import pytest

from annotate.models import TriggerPrefix
from mining.core.config import MineConfig
from mining.core.finalize import KeyResult, KeyStats, TriggerExample
from mining.loader import study_load
from mining.models import MiningRun

pytestmark = pytest.mark.django_db


def example(rank: int, trigger_bytes: bytes | None, next_bytes: bytes | None) -> TriggerExample:
    return TriggerExample(
        rank=rank,
        coefficient=1.0 / rank,
        prefix=f"She smiled {rank}",
        trigger_token="\ufffd" if trigger_bytes else f" {rank}",
        trigger_token_id=rank,
        next_token="\ufffd" if next_bytes else " at",
        next_token_id=7,
        suffix=" at the flamingo.",
        sentence=f"She smiled {rank} at the flamingo.",
        sentence_index=rank,
        position=3,
        trigger_token_bytes=trigger_bytes,
        next_token_bytes=next_bytes,
    )


def test_the_loader_writes_a_tokens_raw_bytes_as_hex_and_nothing_where_none(db):
    run = MiningRun.objects.create(
        study_name="bytes", params={"model": "m", "corpus": "c"}, status=MiningRun.Status.MERGING
    )
    result = KeyResult(
        layer=0,
        index=3,
        stats=KeyStats(density=0.5, max=1.0, mean=0.1, histogram=[1]),
        value_top_tokens=[],
        examples=[
            example(1, b"\xf0\x9f", b"\xa6"),
            example(2, None, None),
            example(3, b"\xf0" * 101, None),  # too long to keep: unknown
        ],
    )
    model = {"n_layers": 1, "d_ff": 4, "causal": True, "vocab_size": 10}
    study_load(
        run=run, config=MineConfig(top_k=3), model=model, results=[result], hist_edges=[0, 1]
    )
    rows = TriggerPrefix.objects.order_by("rank").values_list(
        "rank", "trigger_token_bytes", "next_token_bytes"
    )
    assert list(rows) == [(1, "f09f", "a6"), (2, "", ""), (3, "", "")]
