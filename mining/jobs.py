"""What the study jobs of queue ``gpu`` share (the composition analysis, the causal
probes): sending one once its row is committed, running it once, and failing it with a
reason instead of leaving it running. Each job model is an ``annotate.models.StudyJob``
(``status``, ``error``, ``started_at``, ``finished_at``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from annotate.models import StudyJob
from mining.core.errors import MiningError

logger = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED = (
    StudyJob.Status.QUEUED,
    StudyJob.Status.RUNNING,
    StudyJob.Status.DONE,
    StudyJob.Status.FAILED,
)


def job_fail(model: type[models.Model], job_id: int, error: str) -> None:
    model._default_manager.filter(pk=job_id).update(
        status=FAILED, error=error, finished_at=timezone.now()
    )


def job_send_on_commit(model: type[models.Model], job_id: int, task: Any) -> None:
    """Send ``task`` for the job once the caller's transaction commits (a worker that
    takes it at once finds the row); a broker that is down fails the job, saying so,
    instead of leaving it queued."""

    def send() -> None:
        try:
            task.delay(job_id)
        except Exception as exc:
            logger.warning("%s %s not queued", model.__name__, job_id, exc_info=True)
            job_fail(model, job_id, f"the task queue is unavailable: {exc}")

    transaction.on_commit(send)


def job_run(
    model: type[models.Model],
    job_id: int,
    compute: Callable[[Any], Any],
    finish: Callable[[Any, Any], None],
) -> None:
    """Run a queued job once: ``compute(job)``, then ``finish(job, result)``, which marks
    it done; a MiningError fails it with its message. A job gone, or delivered again
    after it ended, is left as it is."""
    job: Any = model._default_manager.select_related("study").filter(pk=job_id).first()
    if job is None or job.status in (DONE, FAILED):
        return
    model._default_manager.filter(pk=job_id).update(status=RUNNING, started_at=timezone.now())
    try:
        result = compute(job)
    except MiningError as exc:
        job_fail(model, job_id, str(exc))
        return
    except BaseException as exc:
        # Anything else (a bug, Ctrl-C in a command) must not leave the job running for
        # ever: its study would refuse or wait on it.
        job_fail(model, job_id, f"stopped: {type(exc).__name__}: {exc}")
        raise
    finish(job, result)
