"""Celery tasks: an interface over mining.services (ids in, JSON only, explicit names).

prepare_run → one mine_shard per shard (queue ``gpu``) → the shard that finishes last
queues merge_run. Messages are acknowledged late: a worker killed mid-shard leaves the
message to be delivered again, and the shard resumes from its checkpoint.

Heartbeat: a shard beats with its progress; prepare and merge, which report none, beat
from a thread while they work. Every worker process checks for stale runs (no heartbeat
for FFKV_RUN_STALE_AFTER_S) every so often and sends their work again, so that a message
lost with the broker (Redis stopped mid-run) does not leave a run "mining" forever; the
admin API's run pages check too, for when no worker is left.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.db import DatabaseError, connections
from kombu.exceptions import OperationalError as KombuOperationalError

from mining.core import MiningError, MiningStopped

from . import services
from .models import MiningRun, MiningShard

logger = logging.getLogger(__name__)
RETRY_DELAY_S = 10
_stop_checking = threading.Event()


@contextmanager
def _heartbeat_while(run_id: int) -> Iterator[None]:
    """Beat for the run from a thread while the body works (prepare, merge)."""
    done = threading.Event()

    def beat() -> None:
        try:
            while not done.wait(services.heartbeat_every_s()):
                try:
                    services.mining_run_heartbeat(run_id=run_id)
                except DatabaseError:
                    logger.warning("run %s: heartbeat not written", run_id, exc_info=True)
        finally:
            connections.close_all()  # this thread's own connections

    thread = threading.Thread(target=beat, name=f"heartbeat-run-{run_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _fail(run_id: int, error: str) -> None:
    run = MiningRun.objects.filter(pk=run_id).first()
    if run is not None:
        services.mining_run_fail(run=run, error=error)


@shared_task(name="mining.prepare_run", bind=True, max_retries=5)
def prepare_run(self, run_id: int) -> None:
    run = MiningRun.objects.filter(pk=run_id).first()
    if run is None or run.status not in (MiningRun.Status.QUEUED, MiningRun.Status.PREPARING):
        return  # cancelled, failed, or prepared already (a message delivered twice)
    try:
        with _heartbeat_while(run_id):
            shards = services.mining_run_prepare(run=run)
    except MiningStopped as exc:
        logger.info("run %s not prepared: %s", run_id, exc)
        return
    except MiningError as exc:
        _fail(run_id, str(exc))
        return
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc
    for shard in shards:
        if shard.status != MiningShard.Status.DONE:
            mine_shard.delay(shard.pk)


@shared_task(name="mining.mine_shard", bind=True, max_retries=5)
def mine_shard(self, shard_id: int) -> None:
    shard = MiningShard.objects.select_related("run").filter(pk=shard_id).first()
    if shard is None:
        return
    try:
        # The worker's node name (-n), as `celery inspect` shows it; None called directly.
        hostname = self.request.hostname
        worker = f"{hostname} pid {os.getpid()}" if hostname else None
        merge_now = services.mining_shard_mine(shard=shard, worker=worker)
    except MiningStopped as exc:
        logger.info("shard %s stopped: %s", shard_id, exc)
        return
    except MiningError as exc:
        _fail(shard.run_id, str(exc))
        return
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc
    if merge_now:
        merge_run.delay(shard.run_id)


@shared_task(name="mining.merge_run", bind=True, max_retries=5)
def merge_run(self, run_id: int) -> None:
    run = MiningRun.objects.filter(pk=run_id).first()
    if run is None or run.status != MiningRun.Status.MERGING:
        return
    try:
        with _heartbeat_while(run_id):
            services.mining_run_merge(run=run)
    except MiningStopped as exc:
        logger.info("run %s not merged: %s", run_id, exc)
    except MiningError as exc:
        _fail(run_id, str(exc))
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc


@shared_task(name="mining.compose_study", bind=True, max_retries=5)
def compose_study(self, job_id: int) -> None:
    """The §5 composition analysis of a study (mining.composition), on queue ``gpu``."""
    from .composition import composition_job_run

    try:
        composition_job_run(job_id=job_id)
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc


@shared_task(name="mining.causal_probe", bind=True, max_retries=5)
def causal_probe(self, job_id: int) -> None:
    """A causal probe of a study (mining.causal), on queue ``gpu``."""
    from .causal import causal_job_run

    try:
        causal_job_run(job_id=job_id)
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc


def send_run_work(*, run_id: int, status: str, shard_ids: Sequence[int] = ()) -> None:
    """Queue again what a run in ``status`` waits for: its prepare, the shards not done
    yet, or its merge. Safe to send twice (each task checks the run's state first)."""
    if status in (MiningRun.Status.QUEUED, MiningRun.Status.PREPARING):
        prepare_run.delay(run_id)
    elif status == MiningRun.Status.MERGING:
        merge_run.delay(run_id)
    for shard_id in shard_ids:
        mine_shard.delay(shard_id)


def requeue_stale_runs(*, now: datetime | None = None) -> list[int]:
    """Send the work of stale runs again (see services.mining_run_claim_stale); returns
    the ids of the runs sent. A broker that is down leaves the claim in place: the run is
    looked at again one stale window later."""
    sent = []
    for stale in services.mining_run_claim_stale(now=now):
        try:
            send_run_work(run_id=stale.run_id, status=stale.status, shard_ids=stale.shard_ids)
        except KombuOperationalError:
            logger.warning("run %s is stale and the broker is unavailable", stale.run_id)
            continue
        logger.warning("run %s had no worker heartbeat: its work is queued again", stale.run_id)
        sent.append(stale.run_id)
    return sent


def _check_stale_runs_forever() -> None:
    while True:
        try:
            requeue_stale_runs()
        except Exception:  # outlive any outage of the database or the broker
            logger.exception("the stale-run check failed; trying again later")
        finally:
            connections.close_all()
        if _stop_checking.wait(services.stale_check_every_s()):
            return


@worker_ready.connect
def _start_stale_check(**_: Any) -> None:
    # No beat process is needed (the embedded demo runs one worker): each worker checks.
    _stop_checking.clear()
    threading.Thread(target=_check_stale_runs_forever, name="stale-run-check", daemon=True).start()


@worker_shutdown.connect
def _stop_stale_check(**_: Any) -> None:
    _stop_checking.set()
