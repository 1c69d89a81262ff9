"""Reads of mining runs."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce

from .models import MiningRun, MiningShard


def mining_run_list() -> QuerySet[MiningRun]:
    """Runs with their progress summed over shards, in one query."""
    running = Q(shards__status=MiningShard.Status.RUNNING)
    return MiningRun.objects.select_related("study").annotate(
        p_sentences=Coalesce(Sum("shards__sentences_done"), Value(0)),
        p_tokens=Coalesce(Sum("shards__tokens_done"), Value(0)),
        p_rate=Coalesce(Sum("shards__tokens_per_second", filter=running), Value(0.0)),
        p_shards_done=Count("shards", filter=Q(shards__status=MiningShard.Status.DONE)),
        p_shards=Count("shards"),
    )


def mining_run_progress(*, run: MiningRun) -> dict[str, Any]:
    """Sentences and tokens done / total, tokens/s and ETA (DESIGN §3.3)."""
    row: Any = run if hasattr(run, "p_tokens") else mining_run_list().get(pk=run.pk)
    tokens, rate = int(row.p_tokens), float(row.p_rate)
    remaining = max(row.tokens_total - tokens, 0)
    return {
        "sentences_done": int(row.p_sentences),
        "sentences_total": row.sentences_total,
        "tokens_done": tokens,
        "tokens_total": row.tokens_total,
        "tokens_per_second": rate,
        "eta_seconds": (remaining / rate) if rate > 0 and remaining else None,
        "shards_done": int(row.p_shards_done),
        "shards_total": int(row.p_shards),
    }
