"""(g) A real worker process killed with -9 mid-shard: the shard is delivered again,
resumes from its checkpoint, and the study is the same as an uninterrupted pass, with
no duplicate rows."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from annotate.models import TriggerPrefix
from config.celery import app
from mining import services
from mining.core import MineConfig, mine
from mining.models import MiningRun, MiningShard
from mining.tasks import prepare_run

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WIKITEXT = (
    Path(__file__).resolve().parents[2]
    / ".."
    / "shared"
    / "corpora"
    / "wikitext103-valid"
    / "wiki.valid.tokens"
).resolve()
VISIBILITY_TIMEOUT_S = "3"  # Redis hands an unacknowledged task to another worker after it


def _wait(condition, timeout: float, what: str, worker=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    log = worker.log.read_text()[-4000:] if worker else ""
    raise AssertionError(f"timed out waiting for {what}\n{log}")


def test_a_worker_killed_mid_shard_leaves_the_same_study_and_no_duplicates(
    start_worker, settings, tmp_path
):
    if not WIKITEXT.is_file():
        pytest.fail(f"the shared corpus is missing: {WIKITEXT}")
    settings.DATA_DIR = tmp_path / "data"
    settings.FFKV_CORPUS_ROOTS = [WIKITEXT.parent]  # the workers get the same roots
    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge("gpu")
    config = MineConfig(
        model="builtin:minilm",
        corpus=str(WIKITEXT),
        max_sentences=800,  # the kill comes after 200: 600 sentences of margin
        keys_per_layer=4,
        top_k=10,
        batch_size=8,
        sort_window=4,
        checkpoint_every=3,
    )
    run = services.mining_run_create(study_name="killed", config=config, n_shards=1)
    env = {"CELERY_VISIBILITY_TIMEOUT": VISIBILITY_TIMEOUT_S}
    first = start_worker(queues=["gpu"], data_dir=settings.DATA_DIR, env=env)
    prepare_run.delay(run.pk)

    def checkpointed_mid_shard():
        shard = MiningShard.objects.filter(run=run).first()
        return (
            shard is not None
            and shard.status == MiningShard.Status.RUNNING
            and shard.sentences_done >= 200
            and services.shard_path(shard).is_file()
        )

    _wait(checkpointed_mid_shard, 180, "the shard to checkpoint", first)
    first.kill()
    killed_at = MiningShard.objects.get(run=run).sentences_done
    assert killed_at < 800, "the shard finished before the kill; make it longer"

    second = start_worker(queues=["gpu"], data_dir=settings.DATA_DIR, env=env)
    _wait(lambda: MiningRun.objects.get(pk=run.pk).finished, 240, "the run to finish", second)
    run.refresh_from_db()
    assert run.status == MiningRun.Status.DONE, run.error
    assert MiningShard.objects.get(run=run).attempts == 2

    rows = list(
        TriggerPrefix.objects.filter(key__study=run.study)
        .order_by("key__layer", "key__index", "rank")
        .values_list("key__layer", "key__index", "rank", "sentence_index", "position")
    )
    assert len(rows) == 6 * 4 * 10
    assert len(set(rows)) == len(rows)

    reference = mine(MineConfig(**{**config.to_dict(), "store_dir": None}))
    expected = [
        (key.layer + 1, key.index, ex.rank, ex.sentence_index, ex.position)
        for key in sorted(reference.keys, key=lambda k: (k.layer, k.index))
        for ex in key.examples
    ]
    assert rows == expected
