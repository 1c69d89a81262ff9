"""The scoring job through a real Celery worker process (PostgreSQL, Redis): a pattern
written through the service is scored once its transaction commits, and scored again
after an edit, which cleared its scores at once."""

from __future__ import annotations

import time

import pytest

from annotate.evidence.embedding import embed
from annotate.models import Pattern
from annotate.services.patterns import pattern_create, pattern_update
from tests.factories import AnnotationFactory
from tests.integration.conftest import postgres, redis_broker, start_worker  # noqa: F401
from tests.unit.annotate.test_scores import build_study, key_of, plain_auroc

pytestmark = pytest.mark.integration


def scored(pattern_id: int, worker, timeout: float = 120) -> dict:
    """The pattern's scores once the worker has written them (polled, with a deadline)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        scores = Pattern.objects.get(pk=pattern_id).scores
        if scores:
            return scores
        time.sleep(0.2)
    raise AssertionError(f"not scored in {timeout}s:\n{worker.log.read_text()[-3000:]}")


def test_a_real_worker_scores_a_new_pattern_and_rescores_it_after_an_edit(
    start_worker,  # noqa: F811
    tmp_path,
):
    study = build_study()
    worker = start_worker(queues=["celery"], data_dir=tmp_path)
    key = key_of(study, "river")
    annotation = AnnotationFactory(key=key)
    result = pattern_create(
        annotation=annotation,
        actor=annotation.annotator,
        description="rivers, streams and flowing water",
        kind="semantic",
        prefixes=list(key.prefixes.order_by("rank")[:3]),
        version=annotation.version,
    )
    first = scored(result.pattern.pk, worker)
    expected = plain_auroc(embed(["rivers, streams and flowing water"])[0], "river")
    assert first["embedding"] == pytest.approx(expected, abs=1e-6)

    pattern_update(
        pattern=result.pattern,
        actor=annotation.annotator,
        version=result.annotation.version,
        description="money and banks",
    )
    # Cleared by the edit itself; the worker then fills in the new description's scores.
    second = scored(result.pattern.pk, worker)
    expected = plain_auroc(embed(["money and banks"])[0], "river")
    assert second["embedding"] == pytest.approx(expected, abs=1e-6)
    assert second["embedding"] != pytest.approx(first["embedding"], abs=1e-6)
