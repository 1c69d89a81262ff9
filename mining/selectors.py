"""Reads of mining runs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from .models import MiningRun, MiningShard


def mining_run_list() -> QuerySet[MiningRun]:
    """Runs, newest first, with their progress summed over shards, in one query."""
    running = Q(shards__status=MiningShard.Status.RUNNING)
    return (
        MiningRun.objects.select_related("study")
        .order_by("-created_at", "-id")
        .annotate(
            p_sentences=Coalesce(Sum("shards__sentences_done"), Value(0)),
            p_tokens=Coalesce(Sum("shards__tokens_done"), Value(0)),
            p_rate=Coalesce(Sum("shards__tokens_per_second", filter=running), Value(0.0)),
            p_shards_done=Count("shards", filter=Q(shards__status=MiningShard.Status.DONE)),
            p_shards=Count("shards"),
        )
    )


def mining_run_list_preparing_for(*, user: Any) -> QuerySet[MiningRun]:
    """The runs under way whose study will be given to ``user`` (``MiningRun.assign_to``),
    oldest first, with their progress: all an annotator may follow of mining, never
    another run."""
    named = MiningRun.assign_to.through.objects.filter(user_id=user.pk).values("miningrun_id")
    finished = [MiningRun.Status.DONE, MiningRun.Status.FAILED, MiningRun.Status.CANCELLED]
    return (
        mining_run_list()
        .filter(pk__in=named, cancel_requested=False)
        .exclude(status__in=finished)
        .order_by("created_at", "id")
    )


def mining_run_progress(*, run: MiningRun) -> dict[str, Any]:
    """Sentences and tokens done / total, tokens/s and ETA, as the run's page shows them."""
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


def mining_run_duration_seconds(*, run: MiningRun, now: datetime | None = None) -> float | None:
    """Seconds from the start of the run to its end (to ``now`` while it goes on)."""
    if run.started_at is None:
        return None
    end = run.finished_at or (None if run.finished else (now or timezone.now()))
    if end is None:
        return None
    return max((end - run.started_at).total_seconds(), 0.0)


def mining_run_final_rate(*, run: MiningRun) -> float | None:
    """Tokens mined per second of the mining phase, once the phase is over."""
    if run.mining_started_at is None or run.mining_finished_at is None:
        return None
    seconds = (run.mining_finished_at - run.mining_started_at).total_seconds()
    if seconds <= 0:
        return None
    row: Any = run if hasattr(run, "p_tokens") else mining_run_list().get(pk=run.pk)
    return int(row.p_tokens) / seconds
