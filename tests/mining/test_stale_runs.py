"""The heartbeat (docs/mining.md, "Runs, shards and the merge"): a run whose workers
stopped giving signs of life has its work queued again, and fails with the reason after a
few re-queues; it never stays "mining" forever. The clock is the ``now`` passed in, never
the wall's."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from mining import services, tasks
from mining.core import MineConfig
from mining.models import MiningRun, MiningShard
from tests.conftest import client_for

pytestmark = pytest.mark.django_db

STALE_S = 600


@pytest.fixture(autouse=True)
def _stale_settings(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    settings.RUN_STALE_AFTER_S = STALE_S
    settings.RUN_STALE_REQUEUES = 3


@pytest.fixture
def sent():
    """What the re-queue sends is recorded, not sent (the broker is outside the project)."""
    with (
        mock.patch("mining.tasks.prepare_run.delay") as prepare_run,
        mock.patch("mining.tasks.mine_shard.delay") as mine_shard,
        mock.patch("mining.tasks.merge_run.delay") as merge_run,
    ):
        yield {"prepare_run": prepare_run, "mine_shard": mine_shard, "merge_run": merge_run}


def _run(status: str, heartbeat_s_ago: float | None, now, **fields) -> MiningRun:
    run = MiningRun.objects.create(
        study_name=f"run-{MiningRun.objects.count()}",
        params={"model": "m", "corpus": "c"},
        status=status,
        started_at=now - timedelta(hours=1),
        heartbeat_at=None if heartbeat_s_ago is None else now - timedelta(seconds=heartbeat_s_ago),
        **fields,
    )
    for index, shard_status in enumerate(["done", "running", "pending"]):
        MiningShard.objects.create(
            run=run, index=index, start=index * 10, end=index * 10 + 10, status=shard_status
        )
    return run


def test_a_run_without_a_heartbeat_for_the_stale_window_is_queued_again_a_fresh_one_is_not(
    sent,
):
    now = timezone.now()
    stale = _run("mining", STALE_S + 1, now)
    fresh = _run("mining", STALE_S - 1, now)

    assert tasks.requeue_stale_runs(now=now) == [stale.pk]

    pending = list(
        stale.shards.exclude(status="done").order_by("index").values_list("pk", flat=True)
    )
    assert [c.args for c in sent["mine_shard"].call_args_list] == [(pk,) for pk in pending]
    sent["prepare_run"].assert_not_called()
    sent["merge_run"].assert_not_called()
    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert (stale.status, stale.requeues) == ("mining", 1)
    assert (fresh.status, fresh.requeues) == ("mining", 0)


def test_each_state_sends_its_own_work_again(sent):
    now = timezone.now()
    preparing = _run("preparing", STALE_S * 2, now)
    merging = _run("merging", STALE_S * 2, now)
    never_beat = _run("mining", None, now)  # started an hour ago, no heartbeat since

    assert sorted(tasks.requeue_stale_runs(now=now)) == sorted(
        [preparing.pk, merging.pk, never_beat.pk]
    )
    sent["prepare_run"].assert_called_once_with(preparing.pk)
    sent["merge_run"].assert_called_once_with(merging.pk)
    assert {c.args[0] for c in sent["mine_shard"].call_args_list} == set(
        never_beat.shards.exclude(status="done").values_list("pk", flat=True)
    )


def test_queued_finished_and_cancelled_runs_are_never_stale(sent):
    now = timezone.now()
    for status in ("queued", "done", "failed", "cancelled"):
        _run(status, STALE_S * 10, now)
    _run("mining", STALE_S * 10, now, cancel_requested=True)

    assert tasks.requeue_stale_runs(now=now) == []
    assert not MiningRun.objects.filter(requeues__gt=0).exists()
    assert not sent["mine_shard"].called


def test_a_requeued_run_gets_one_more_window_and_a_heartbeat_forgets_the_requeues(sent):
    now = timezone.now()
    run = _run("mining", STALE_S + 1, now)
    assert tasks.requeue_stale_runs(now=now) == [run.pk]
    # A second checker at the same moment (another worker) finds nothing to do.
    assert tasks.requeue_stale_runs(now=now) == []
    assert tasks.requeue_stale_runs(now=now + timedelta(seconds=STALE_S - 2)) == []
    assert tasks.requeue_stale_runs(now=now + timedelta(seconds=STALE_S)) == [run.pk]
    run.refresh_from_db()
    assert run.requeues == 2

    later = now + timedelta(seconds=STALE_S + 5)
    services.mining_run_heartbeat(run_id=run.pk, now=later)
    run.refresh_from_db()
    assert (run.requeues, run.heartbeat_at) == (0, later)
    assert tasks.requeue_stale_runs(now=later + timedelta(seconds=STALE_S - 1)) == []


def test_after_the_allowed_requeues_a_stale_run_fails_with_the_reason(sent):
    now = timezone.now()
    run = _run("mining", STALE_S + 1, now)
    for step in range(3):
        assert tasks.requeue_stale_runs(now=now + timedelta(seconds=STALE_S * step)) == [run.pk]

    failed_at = now + timedelta(seconds=STALE_S * 3)
    assert tasks.requeue_stale_runs(now=failed_at) == []
    run.refresh_from_db()
    assert run.status == MiningRun.Status.FAILED
    assert run.error == services.STALE_RUN.format(
        seconds=STALE_S * 4 + 1, requeues=3, stale_after=STALE_S
    )
    assert run.error.startswith(f"no worker heartbeat for {STALE_S * 4 + 1} s")
    assert run.finished_at == failed_at
    assert sent["mine_shard"].call_count == 3 * 2


def test_a_broker_that_is_down_leaves_the_run_for_the_next_window(sent):
    from kombu.exceptions import OperationalError

    now = timezone.now()
    run = _run("merging", STALE_S + 1, now)
    sent["merge_run"].side_effect = OperationalError("broker down")
    assert tasks.requeue_stale_runs(now=now) == []
    run.refresh_from_db()
    assert (run.status, run.requeues) == ("merging", 1)


def test_the_admin_run_page_shows_a_run_left_without_workers_as_failed(carol, sent):
    long_ago = timezone.now() - timedelta(seconds=STALE_S * 10)
    run = _run("mining", 0, long_ago, requeues=3)

    body = client_for(carol).get(f"/api/admin/mining-runs/{run.pk}/").json()

    assert body["status"] == "failed"
    assert body["error"].startswith("no worker heartbeat for ")
    assert not sent["mine_shard"].called


def test_a_shard_beats_while_it_mines_and_names_its_worker(tiny_gpt2_dir, tiny_corpus, sent):
    config = MineConfig(
        model=str(tiny_gpt2_dir),
        corpus=str(tiny_corpus),
        sentences="lines",
        keys_per_layer=2,
        top_k=3,
        batch_size=8,
    )
    run = services.mining_run_create(study_name="beats", config=config, n_shards=2)
    tasks.prepare_run(run.pk)
    run.refresh_from_db()
    assert run.status == MiningRun.Status.MINING and run.heartbeat_at is not None
    before = run.heartbeat_at
    shard = run.shards.get(index=0)

    tasks.mine_shard(shard.pk)

    run.refresh_from_db()
    shard.refresh_from_db()
    assert run.heartbeat_at > before
    assert shard.status == MiningShard.Status.DONE
    assert shard.worker == services.this_worker()


def test_a_run_left_cancelling_past_the_stale_window_ends_cancelled_with_the_reason(sent):
    # "mining · cancelling": a cancel that a worker overwrote (as an older version let
    # it), the worker then stopped. Nothing is sent again; it ends once the window passed.
    now = timezone.now()
    stuck = _run("mining", STALE_S + 1, now, cancel_requested=True, error="Cancelled by carol.")
    recent = _run("merging", STALE_S - 1, now, cancel_requested=True)

    assert tasks.requeue_stale_runs(now=now) == []

    stuck.refresh_from_db()
    recent.refresh_from_db()
    assert stuck.status == MiningRun.Status.CANCELLED and stuck.finished_at == now
    assert stuck.error == "Cancelled by carol. " + services.STALE_CANCEL.format(
        seconds=STALE_S + 1, stale_after=STALE_S
    )
    assert "no worker gave a sign of life for 601 s after it" in stuck.error
    assert (recent.status, recent.finished_at) == ("merging", None)
    assert not any(call.called for call in sent.values())
    # A worker still at work on it cannot keep it alive: its heartbeat is not recorded.
    services.mining_run_heartbeat(run_id=recent.pk, now=now)
    recent.refresh_from_db()
    assert recent.heartbeat_at == now - timedelta(seconds=STALE_S - 1)
    assert tasks.requeue_stale_runs(now=now + timedelta(seconds=2)) == []
    recent.refresh_from_db()
    assert recent.status == MiningRun.Status.CANCELLED
