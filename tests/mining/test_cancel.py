"""A cancelled run never runs again: every change of a run's state is conditional on the
state it comes from, so a worker that read the run before the cancel cannot undo it; a
shard of a cancelled run is never claimed, writes no progress and is never done; a run
cancelled while merging gets no study. Here the services and tasks run in this process,
with the object a worker would have read before the cancel; tests/integration/
test_mining_cancel.py does the same against real worker processes."""

from __future__ import annotations

from unittest import mock

import pytest

from annotate.models import Study
from mining import services
from mining.core import MineConfig, MiningStopped
from mining.loader import study_load
from mining.models import MiningRun, MiningShard
from mining.tasks import merge_run, mine_shard, prepare_run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def config(tiny_gpt2_dir, tiny_corpus) -> MineConfig:
    return MineConfig(
        model=str(tiny_gpt2_dir),
        corpus=str(tiny_corpus),
        sentences="lines",
        keys_per_layer=2,
        top_k=3,
        batch_size=8,
    )


@pytest.fixture
def no_queue():
    """The tasks run here, called directly; what they would queue is only recorded."""
    with (
        mock.patch("mining.tasks.mine_shard.delay") as mine_shard_delay,
        mock.patch("mining.tasks.merge_run.delay") as merge_run_delay,
    ):
        yield {"mine_shard": mine_shard_delay, "merge_run": merge_run_delay}


def _create(config: MineConfig, shards: int = 1) -> MiningRun:
    return services.mining_run_create(study_name="to cancel", config=config, n_shards=shards)


def _row(run: MiningRun) -> dict:
    return MiningRun.objects.filter(pk=run.pk).values().get()


def _shard_rows(run: MiningRun) -> list[dict]:
    return list(MiningShard.objects.filter(run=run).order_by("index").values())


def test_a_run_cancelled_after_its_prepare_task_read_it_is_never_prepared(config, carol):
    run = _create(config)
    as_the_worker_read_it = MiningRun.objects.get(pk=run.pk)  # queued, not cancelled

    assert services.mining_run_cancel(run=run, user=carol) == MiningRun.Status.QUEUED
    at_cancel = _row(run)
    with pytest.raises(MiningStopped):
        services.mining_run_prepare(run=as_the_worker_read_it)

    assert _row(run) == at_cancel
    assert at_cancel["status"] == MiningRun.Status.CANCELLED
    assert at_cancel["started_at"] is None and at_cancel["error"] == "Cancelled by carol."
    assert not MiningShard.objects.filter(run=run).exists()


def test_the_prepare_task_of_a_cancelled_run_queues_no_shard(config, no_queue):
    run = _create(config)
    services.mining_run_cancel(run=run)
    prepare_run(run.pk)
    assert _row(run)["status"] == MiningRun.Status.CANCELLED
    no_queue["mine_shard"].assert_not_called()


def test_a_run_cancelled_while_preparing_is_not_moved_on_to_mining(config):
    run = _create(config)
    # A worker has started preparing it (and holds the run as it read it then).
    MiningRun.objects.filter(pk=run.pk).update(status=MiningRun.Status.PREPARING)
    as_the_worker_read_it = MiningRun.objects.get(pk=run.pk)

    assert services.mining_run_cancel(run=run) == MiningRun.Status.PREPARING
    at_cancel = _row(run)
    with pytest.raises(MiningStopped):
        services.mining_run_prepare(run=as_the_worker_read_it)

    assert _row(run) == at_cancel
    assert not MiningShard.objects.filter(run=run).exists()


def test_a_shard_of_a_cancelled_run_is_never_claimed(config, no_queue):
    run = _create(config, shards=2)
    shards = services.mining_run_prepare(run=run)  # each holds the run, "mining"
    assert {shard.run.status for shard in shards} == {MiningRun.Status.MINING}

    assert services.mining_run_cancel(run=run) == MiningRun.Status.MINING
    at_cancel = _shard_rows(run)
    for shard in shards:
        with pytest.raises(MiningStopped):
            services.mining_shard_mine(shard=shard)
    mine_shard(shards[0].pk)  # the task: stops quietly

    assert _shard_rows(run) == at_cancel
    assert {row["status"] for row in at_cancel} == {MiningShard.Status.PENDING}
    assert {row["attempts"] for row in at_cancel} == {0}
    assert not any(services.shard_path(shard).exists() for shard in shards)
    no_queue["merge_run"].assert_not_called()


def test_a_shard_cancelled_mid_way_writes_no_progress_and_is_never_done(config, no_queue):
    run = _create(config)
    (shard,) = services.mining_run_prepare(run=run)
    seen: dict = {}

    def progress(sentences: int, tokens: int) -> None:
        # After the second batch (the first one's progress is written): the admin cancels.
        if sentences >= 2 * config.batch_size and not seen:
            services.mining_run_cancel(run=run)
            seen["run"], seen["shards"] = _row(run), _shard_rows(run)

    with pytest.raises(MiningStopped):
        services.mining_shard_mine(shard=shard, progress=progress)

    assert seen, "the shard ended before the cancel; make the corpus longer"
    assert _shard_rows(run) == seen["shards"]
    assert _row(run) == seen["run"]
    (row,) = seen["shards"]
    assert row["status"] == MiningShard.Status.RUNNING and row["attempts"] == 1
    assert 0 < row["sentences_done"] < shard.end - shard.start
    no_queue["merge_run"].assert_not_called()


def _to_merging(config: MineConfig) -> MiningRun:
    run = _create(config, shards=2)
    merges = [services.mining_shard_mine(shard=s) for s in services.mining_run_prepare(run=run)]
    assert merges == [False, True]
    run.refresh_from_db()
    assert run.status == MiningRun.Status.MERGING
    return run


def test_a_run_cancelled_while_merging_ends_cancelled_without_a_study(config):
    run = _to_merging(config)
    assert services.mining_run_cancel(run=run) == MiningRun.Status.MERGING
    at_cancel = _row(run)

    merge_run(run.pk)  # the task, as the worker runs it
    with pytest.raises(MiningStopped):
        services.mining_run_merge(run=run)  # and the service, for a run read before

    assert _row(run) == at_cancel
    assert at_cancel["status"] == MiningRun.Status.CANCELLED and at_cancel["study_id"] is None
    assert not Study.objects.exists()


def test_the_load_refuses_a_run_that_is_no_longer_merging(config):
    run = _to_merging(config)
    as_the_merge_read_it = MiningRun.objects.get(pk=run.pk)
    services.mining_run_cancel(run=run)
    model = {"n_layers": 2, "d_ff": 48, "causal": True, "vocab_size": 54}
    with pytest.raises(MiningStopped):
        study_load(run=as_the_merge_read_it, config=config, model=model, results=[], hist_edges=[])
    assert not Study.objects.exists()
    assert _row(run)["status"] == MiningRun.Status.CANCELLED


def test_a_cancel_after_the_study_is_loaded_changes_nothing(config):
    run = _to_merging(config)
    services.mining_run_merge(run=run)
    done = _row(run)
    assert done["status"] == MiningRun.Status.DONE and done["study_id"] is not None

    assert services.mining_run_cancel(run=run) is None
    assert _row(run) == done


def test_a_failure_after_the_cancel_leaves_the_run_cancelled(config):
    run = _create(config)
    services.mining_run_cancel(run=run)
    services.mining_run_fail(run=run, error="the model folder went away")
    row = _row(run)
    assert (row["status"], row["error"]) == (MiningRun.Status.CANCELLED, "Cancelled by an admin.")


def test_the_store_build_stops_between_chunks_and_leaves_nothing(tmp_path, tiny_gpt2_dir):
    from mining.core import build_store, load_model

    tokenizer = load_model(str(tiny_gpt2_dir)).tokenizer
    asked: list[int] = []

    def should_stop() -> bool:
        asked.append(1)
        return len(asked) > 1  # the second chunk

    sentences = (f"Sentence number {i}." for i in range(5000))
    with pytest.raises(MiningStopped, match="stopped after 1000 sentences"):
        build_store(
            sentences, tokenizer, tmp_path / "store", chunk_size=1000, should_stop=should_stop
        )
    assert not (tmp_path / "store").exists() and not (tmp_path / "store.partial").exists()
