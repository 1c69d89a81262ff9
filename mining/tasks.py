"""Celery tasks: an interface over mining.services (ids in, JSON only, explicit names).

prepare_run → one mine_shard per shard (queue ``gpu``) → the shard that finishes last
queues merge_run. Messages are acknowledged late: a worker killed mid-shard leaves the
message to be delivered again, and the shard resumes from its checkpoint.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import DatabaseError

from mining.core import MiningError, MiningStopped

from . import services
from .models import MiningRun, MiningShard

logger = logging.getLogger(__name__)
RETRY_DELAY_S = 10


def _fail(run_id: int, error: str) -> None:
    run = MiningRun.objects.filter(pk=run_id).first()
    if run is not None:
        services.mining_run_fail(run=run, error=error)


@shared_task(name="mining.prepare_run", bind=True, max_retries=5)
def prepare_run(self, run_id: int) -> None:
    run = MiningRun.objects.filter(pk=run_id).first()
    if run is None or run.finished or run.cancel_requested:
        return
    try:
        shards = services.mining_run_prepare(run=run)
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
        merge_now = services.mining_shard_mine(shard=shard)
    except MiningStopped:
        logger.info("shard %s stopped: run %s cancelled", shard_id, shard.run_id)
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
        services.mining_run_merge(run=run)
    except MiningError as exc:
        _fail(run_id, str(exc))
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc
