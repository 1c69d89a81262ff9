"""Scale-out, as production runs it (docs/operations.md, "Scale-out"): three worker
processes on queue ``gpu`` (``celery -A config worker -Q gpu --concurrency 1 -n wN@%h``),
sharing one data folder as a shared volume would be, mine one 6-shard run at once against
PostgreSQL and Redis.

The merged study equals a single pass exactly, each shard was mined once by one worker
(so no shard file had two writers), and more than one worker took part."""

from __future__ import annotations

import pytest

from annotate.models import TriggerPrefix
from config.celery import app
from mining import services
from mining.core import MineConfig, mine
from mining.models import MiningRun, MiningShard
from mining.tasks import prepare_run
from tests.integration.processes import ProductionWorker, poll, tiny_job
from tests.integration.processes import private_redis as private_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WORKERS = ("w1", "w2", "w3")
SHARDS = 6
SENTENCES = 1800


def _rows(study) -> list[tuple]:
    return list(
        TriggerPrefix.objects.filter(key__study=study)
        .order_by("key__layer", "key__index", "rank")
        .values_list(
            "key__layer", "key__index", "rank", "sentence_index", "position", "coefficient", "text"
        )
    )


def test_three_workers_mine_one_six_shard_run_as_one_pass(
    postgres, private_redis, tmp_path, settings
):
    data = tmp_path / "shared-volume"
    settings.DATA_DIR = data
    # The model and the corpus are written there: the only folder mining may read.
    settings.FFKV_CORPUS_ROOTS = settings.FFKV_MODEL_ROOTS = [data / "corpora"]
    model, corpus = tiny_job(data / "corpora", SENTENCES)
    config = MineConfig(
        model=str(model),
        corpus=str(corpus),
        sentences="lines",
        keys_per_layer=4,
        top_k=8,
        batch_size=8,
    )
    workers = [
        ProductionWorker(
            name, data, tmp_path / f"{name}.log", {"CELERY_BROKER_URL": private_redis.url}
        )
        for name in WORKERS
    ]
    try:
        for worker in workers:
            poll(worker.ready, 120, f"worker {worker.name} ready", worker.log)
        run = services.mining_run_create(study_name="scaled", config=config, n_shards=SHARDS)
        with app.connection_for_write(private_redis.url) as connection:
            prepare_run.apply_async((run.pk,), connection=connection)
        poll(
            lambda: MiningRun.objects.get(pk=run.pk).finished,
            300,
            "the run to finish",
            workers[0].log,
        )
    finally:
        for worker in workers:
            worker.stop()
    run.refresh_from_db()
    assert run.status == MiningRun.Status.DONE, run.error

    reference = mine(MineConfig(**{**config.to_dict(), "store_dir": None}))
    expected = [
        (
            key.layer + 1,
            key.index,
            ex.rank,
            ex.sentence_index,
            ex.position,
            ex.coefficient,
            ex.prefix,
        )
        for key in sorted(reference.keys, key=lambda k: (k.layer, k.index))
        for ex in key.examples
    ]
    assert _rows(run.study) == expected

    shards = list(MiningShard.objects.filter(run=run).order_by("index"))
    assert len(shards) == SHARDS
    # Mined once each, by one worker: every shard file had one writer.
    assert [(s.status, s.attempts) for s in shards] == [("done", 1)] * SHARDS
    names = [s.worker.split("@", 1)[0] for s in shards]
    assert set(names) <= set(WORKERS), [s.worker for s in shards]
    assert len(set(names)) >= 2, f"one worker mined every shard: {[s.worker for s in shards]}"
    # Each worker's log shows the shards it received, and no shard was received twice.
    received = [
        line
        for worker in workers
        for line in worker.log.read_text().splitlines()
        if "mining.mine_shard[" in line and "received" in line
    ]
    assert len(received) == SHARDS
    # The run folder holds no partial file nor temporary file of a shard after the merge.
    folder = services.run_dir(run)
    assert not [p.name for p in folder.iterdir() if p.name.startswith(("shard-", ".shard-"))]
    print("scale-out: shards by worker:", {s.index: s.worker for s in shards})
