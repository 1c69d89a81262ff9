"""A mining run cancelled in any state, against a real worker process: it ends cancelled,
no shard is claimed or written after the cancel, no progress either, and no study is
made. Each state is reached by polling the run's row (or the worker's log) until the run
is in it, with a corpus long enough that the state lasts; the worker has taken up every
message about the run once a marker task queued after the cancel has run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from annotate.models import Study
from config.celery import app
from mining import services
from mining.core import MineConfig
from mining.models import MiningRun, MiningShard
from mining.tasks import merge_run, prepare_run
from tests.integration.processes import poll, tiny_job
from tests.unit.mining.conftest import random_sentences

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DEADLINE_S = 120  # generous: the machine is shared; nothing here waits on it otherwise
LONG_PREPARE = 30_000  # lines: tokenizing them keeps a run "preparing" for seconds


@pytest.fixture
def worker(start_worker, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    settings.FFKV_CORPUS_ROOTS = [tmp_path]  # the worker gets the same roots
    settings.FFKV_MODEL_ROOTS = [tmp_path]
    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge("gpu")
    return start_worker(queues=["gpu"], data_dir=settings.DATA_DIR)


def _config(model: Path, corpus: Path) -> MineConfig:
    return MineConfig(
        model=str(model),
        corpus=str(corpus),
        sentences="lines",
        keys_per_layer=2,
        top_k=3,
        batch_size=8,
    )


def _lines(path: Path, n: int) -> Path:
    path.write_text("\n".join(random_sentences(n, seed=5)) + "\n", encoding="utf-8")
    return path


def _create(name: str, config: MineConfig, shards: int = 1) -> MiningRun:
    return services.mining_run_create(study_name=name, config=config, n_shards=shards)


def _status(run: MiningRun) -> str:
    return MiningRun.objects.values_list("status", flat=True).get(pk=run.pk)


def _rows(run: MiningRun) -> dict[str, Any]:
    """Everything recorded about the run: its row and its shards' rows (progress, claim)."""
    return {
        "run": MiningRun.objects.filter(pk=run.pk).values().get(),
        "shards": list(MiningShard.objects.filter(run=run).order_by("index").values()),
    }


def _drain(worker) -> None:
    """Wait until the worker has run everything queued before now: a marker task (a merge
    of no run, which returns at once) is queued last and must have succeeded."""
    marker = merge_run.apply_async(args=[0])
    poll(
        lambda: f"mining.merge_run[{marker.id}] succeeded".encode() in worker.log.read_bytes(),
        DEADLINE_S,
        "the worker to take up every message queued before the marker",
        worker.log,
    )


def _cancelled_and_untouched(run: MiningRun, at_cancel: dict[str, Any]) -> None:
    after = _rows(run)
    assert after == at_cancel, "the run or its shards were written after the cancel"
    assert after["run"]["status"] == MiningRun.Status.CANCELLED
    assert after["run"]["cancel_requested"] and after["run"]["study_id"] is None
    assert not Study.objects.filter(name=run.study_name).exists()


def test_a_run_cancelled_while_queued_never_starts(worker, tmp_path):
    model, corpus = tiny_job(tmp_path, 200)
    run = _create("queued", _config(model, corpus))
    message = prepare_run.delay(run.pk)
    # The worker holds the message, the run still reads queued: the task is importing the
    # engine (seconds, in a fresh worker), as in the report where the cancel was undone.
    poll(
        lambda: f"mining.prepare_run[{message.id}] received".encode() in worker.log.read_bytes(),
        DEADLINE_S,
        "the worker to receive the prepare task",
        worker.log,
    )
    assert services.mining_run_cancel(run=run) == MiningRun.Status.QUEUED
    at_cancel = _rows(run)

    _drain(worker)

    _cancelled_and_untouched(run, at_cancel)
    assert at_cancel["run"]["started_at"] is None and at_cancel["shards"] == []


def test_a_run_cancelled_while_preparing_makes_no_shard(worker, tmp_path):
    model, _ = tiny_job(tmp_path, 10)
    run = _create("preparing", _config(model, _lines(tmp_path / "long.txt", LONG_PREPARE)))
    prepare_run.delay(run.pk)
    poll(lambda: _status(run) == MiningRun.Status.PREPARING, DEADLINE_S, "preparing", worker.log)
    assert services.mining_run_cancel(run=run) == MiningRun.Status.PREPARING, (
        "the run left preparing before the cancel; make the corpus longer"
    )
    at_cancel = _rows(run)

    _drain(worker)  # the prepare stops at its next check between chunks of the corpus

    _cancelled_and_untouched(run, at_cancel)
    assert at_cancel["shards"] == []
    assert not (services.run_dir(run) / "store" / "meta.json").exists()


def test_a_run_cancelled_while_mining_stops_writing_and_claims_no_more_shards(worker, tmp_path):
    model, corpus = tiny_job(tmp_path, 4000)
    run = _create("mining", _config(model, corpus), shards=2)
    prepare_run.delay(run.pk)

    def mid_shard() -> bool:
        return MiningShard.objects.filter(
            run=run, status=MiningShard.Status.RUNNING, sentences_done__gt=0
        ).exists()

    poll(mid_shard, DEADLINE_S, "the first shard to write its progress", worker.log)
    assert services.mining_run_cancel(run=run) == MiningRun.Status.MINING, (
        "the run left mining before the cancel; make the corpus longer"
    )
    at_cancel = _rows(run)

    _drain(worker)  # the running shard stops at its next check; the other never starts

    _cancelled_and_untouched(run, at_cancel)
    first, second = at_cancel["shards"]
    assert first["status"] == MiningShard.Status.RUNNING and first["attempts"] == 1
    assert 0 < first["sentences_done"] < first["end"] - first["start"]
    assert (second["status"], second["attempts"], second["worker"]) == ("pending", 0, "")


def test_a_run_cancelled_while_merging_gets_no_study(worker, tmp_path):
    model, corpus = tiny_job(tmp_path, 3000)
    run = _create("merging", _config(model, corpus))
    prepare_run.delay(run.pk)
    poll(
        lambda: MiningShard.objects.filter(run=run, status=MiningShard.Status.RUNNING).exists(),
        DEADLINE_S,
        "the shard to start",
        worker.log,
    )
    # Another run's prepare, queued now, comes before this run's merge (queued when its
    # shard ends): the worker is busy with it while this run reads "merging".
    other = _create("other", _config(model, _lines(tmp_path / "long.txt", LONG_PREPARE)))
    prepare_run.delay(other.pk)
    poll(lambda: _status(run) != MiningRun.Status.MINING, DEADLINE_S, "the merge", worker.log)
    assert services.mining_run_cancel(run=run) == MiningRun.Status.MERGING, (
        "the run was merged before the cancel; make its corpus longer"
    )
    at_cancel = _rows(run)
    services.mining_run_cancel(run=other)  # so that the worker gets to the merge soon

    _drain(worker)  # the merge task has run, and refused the cancelled run

    _cancelled_and_untouched(run, at_cancel)
    assert {shard["status"] for shard in at_cancel["shards"]} == {MiningShard.Status.DONE}
    assert _status(other) == MiningRun.Status.CANCELLED
    assert not Study.objects.exists()
