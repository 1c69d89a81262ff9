"""Celery tasks of annotate: an interface over its services (ids in, explicit names).

Each block is one job; queued by name with ``transaction.on_commit`` from its service.
"""

from __future__ import annotations

from celery import shared_task
from django.db import DatabaseError

from annotate.models import Study
from annotate.services.scores import SCORE_TASK, scores_compute, scores_studies_of

RETRY_DELAY_S = 10

# --- scores (annotate.services.scores) --------------------------------------------------


@shared_task(name=SCORE_TASK, bind=True, max_retries=5)
def score_patterns(
    self,
    study_id: int | None = None,
    pattern_ids: list[int] | None = None,
    gold_pattern_ids: list[int] | None = None,
    suggestion_ids: list[int] | None = None,
    missing_only: bool = True,
) -> None:
    """Score a study's rows (``scores_compute``); with ``study_id`` None, the studies of
    the given rows, and there, with ``missing_only``, every row still missing its scores
    (the pending changes of the whole study in one go: ``scores_clear_and_queue``). A
    study or a row deleted since it was queued is skipped."""
    ids = {
        "pattern_ids": pattern_ids,
        "gold_pattern_ids": gold_pattern_ids,
        "suggestion_ids": suggestion_ids,
    }
    try:
        if study_id is not None:
            studies = [study_id]
        else:
            studies = scores_studies_of(**ids)
            if missing_only:  # coalesced: whatever of the study is pending, these included
                ids = dict.fromkeys(ids)
        for pk in studies:
            if Study.objects.filter(pk=pk).exists():
                scores_compute(study_id=pk, missing_only=missing_only, **ids)
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc


# --- end of scores ----------------------------------------------------------------------


# --- suggestions (annotate.services.suggestions) ----------------------------------------


@shared_task(name="annotate.suggest_study", bind=True, max_retries=5)
def suggest_study(self, study_id: int) -> None:
    """Propose (or bring up to date) a study's rule and cluster suggestions and score the
    new ones; then queue the LLM explainer where one is configured. A study deleted since
    it was queued is skipped."""
    from annotate.services.suggestions import (
        suggestions_create_for_study,
        suggestions_queue_llm,
    )

    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return
    try:
        suggestions_create_for_study(study=study)
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc
    suggestions_queue_llm(study_id=study_id)


@shared_task(name="annotate.suggest_study_llm", bind=True, max_retries=5)
def suggest_study_llm(self, study_id: int) -> None:
    """One LLM description per key of the study that has none yet (off unless
    FFKV_LLM_BASE_URL is set). An endpoint's failure stops the run with a logged
    message and writes nothing for that key; it is not retried here: rerun the job."""
    from annotate.services.suggestions import suggestions_describe_with_llm

    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return
    try:
        suggestions_describe_with_llm(study=study)
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc


# --- end of suggestions -----------------------------------------------------------------
