"""Redis stopped mid-run (docs/reliability.md, "Faults and attacks tried"): the run
resumes when Redis returns and ends done, with the same study as one uninterrupted pass.
Never "mining" forever: what the broker lost with it is queued again by the workers'
stale-run check.

One real worker process, three runs, one Redis stop each, at three moments:
- while the first shard mines; Redis stays down until that shard is done and the stale
  check has tried in vain to send the second shard again (its queued message is lost);
- while the last shard mines; Redis stays down until the run waits for its merge, whose
  message could not be sent, and the stale check has tried in vain to send it;
- while the first shard mines; Redis is back at once.
The private Redis keeps nothing across a stop (no persistence), the harshest case.
"""

from __future__ import annotations

import pytest

from annotate.models import TriggerPrefix
from config.celery import app
from mining import services
from mining.core import MineConfig, mine
from mining.models import MiningRun, MiningShard
from mining.tasks import prepare_run
from tests.integration.conftest import WorkerProcess
from tests.integration.processes import poll, tiny_job
from tests.integration.processes import private_redis as private_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STALE_AFTER_S = 3
SENTENCES = 2000  # two shards of a few seconds each for the tiny model (minutes under load)
REQUEUED = "its work is queued again"


def _send(task, *args, broker_url: str) -> None:
    with app.connection_for_write(broker_url) as connection:
        task.apply_async(args, connection=connection)


def _shard(run: MiningRun, index: int) -> MiningShard | None:
    return MiningShard.objects.filter(run=run, index=index).first()


def _mining(run: MiningRun, index: int) -> bool:
    shard = _shard(run, index)
    return shard is not None and shard.status == "running" and shard.sentences_done > 0


def _tried_in_vain(run: MiningRun, status: str) -> bool:
    """The run waits in ``status`` with no worker at it, and the stale check has claimed
    it once already (with Redis down, what it sent went nowhere)."""
    run = MiningRun.objects.get(pk=run.pk)
    return run.status == status and run.requeues >= 1


def _rows(run: MiningRun) -> list[tuple]:
    return list(
        TriggerPrefix.objects.filter(key__study=run.study)
        .order_by("key__layer", "key__index", "rank")
        .values_list("key__layer", "key__index", "rank", "sentence_index", "position")
    )


def test_three_redis_stops_mid_run_leave_no_run_stuck(postgres, private_redis, tmp_path, settings):
    data = tmp_path / "data"
    settings.DATA_DIR = data
    # The model and the corpus are written there: the only folder mining may read.
    settings.FFKV_CORPUS_ROOTS = settings.FFKV_MODEL_ROOTS = [data / "corpora"]
    model, corpus = tiny_job(data / "corpora", SENTENCES)
    config = MineConfig(
        model=str(model),
        corpus=str(corpus),
        sentences="lines",
        keys_per_layer=3,
        top_k=5,
        batch_size=8,
        checkpoint_every=5,
    )
    worker = WorkerProcess(
        ["gpu"],
        data,
        tmp_path / "worker.log",
        env={
            "CELERY_BROKER_URL": private_redis.url,
            "FFKV_RUN_STALE_AFTER_S": str(STALE_AFTER_S),
            # Redis may stay down for several stale windows here: never give up on a run.
            "FFKV_RUN_STALE_REQUEUES": "1000",
        },
    )
    try:
        worker.wait_ready()
        reference = mine(MineConfig(**{**config.to_dict(), "store_dir": None}))
        expected = [
            (key.layer + 1, key.index, ex.rank, ex.sentence_index, ex.position)
            for key in sorted(reference.keys, key=lambda k: (k.layer, k.index))
            for ex in key.examples
        ]
        moments = [
            ("first shard mining", 0, lambda run: _tried_in_vain(run, "mining")),
            ("last shard mining", 1, lambda run: _tried_in_vain(run, "merging")),
            ("first shard mining, back at once", 0, lambda run: True),
        ]
        outcomes = []
        for n, (moment, index, back_when) in enumerate(moments):
            run = services.mining_run_create(study_name=f"redis-{n}", config=config, n_shards=2)
            requeued_before = worker.log.read_text().count(REQUEUED)
            _send(prepare_run, run.pk, broker_url=private_redis.url)
            poll(lambda: _mining(run, index), 180, f"run {n}: {moment}", worker.log)  # noqa: B023

            private_redis.stop()
            poll(lambda: back_when(run), 180, f"run {n}: work on without Redis", worker.log)  # noqa: B023
            private_redis.start()

            poll(
                lambda: MiningRun.objects.get(pk=run.pk).finished,  # noqa: B023
                180,
                f"run {n} to finish after Redis came back",
                worker.log,
            )
            run.refresh_from_db()
            assert worker.process.poll() is None, "the worker died with Redis"
            assert run.status == MiningRun.Status.DONE, run.error
            assert _rows(run) == expected
            outcomes.append((moment, worker.log.read_text().count(REQUEUED) - requeued_before))

        # The stops lost messages: every run was finished because the stale-run check
        # sent its work again once Redis was back.
        assert private_redis.stops == 3
        assert all(requeued >= 1 for _, requeued in outcomes), outcomes
        print("redis stops:", outcomes)
    finally:
        worker.stop()
