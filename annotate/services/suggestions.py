"""Writes of the machine's suggestions (docs/evidence.md, "Suggestions"): making a study's
suggestions after mining, and an annotator's accepting or dismissing one.

``suggestions_create_for_study`` (the Celery job ``SUGGEST_TASK``) proposes, per key, rule
and cluster suggestions (``annotate.evidence.suggest``) and scores the new ones
(``annotate.services.scores``). It can run again at any time: a suggestion proposed again
is kept as it is (no duplicate), and one no longer proposed is removed only while no
annotator has accepted or dismissed it. ``suggestions_describe_with_llm`` (the job
``SUGGEST_LLM_TASK``) adds one LLM description per key where an endpoint is configured.

Accepting a suggestion makes it the annotator's pattern through ``pattern_create`` (the
3-prefix rule, the annotation version, the audit record), with ``source`` "suggestion",
the suggestion it came from and its rule; edits keep that source.
"""

from __future__ import annotations

import functools
import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from ..models import (
    PATTERN_DESCRIPTION_MAX_LENGTH,
    Annotation,
    Key,
    Pattern,
    Study,
    Suggestion,
    SuggestionDecision,
    TriggerPrefix,
)
from . import ServiceError
from .annotations import KEEP, GuidelineStamp
from .patterns import PatternCreateResult, pattern_create

SUGGEST_TASK = "annotate.suggest_study"
SUGGEST_LLM_TASK = "annotate.suggest_study_llm"
CHUNK_KEYS = 512  # keys embedded, clustered and written together
log = logging.getLogger(__name__)


def _chunks(ids: Sequence[int]) -> list[Sequence[int]]:
    return [ids[start : start + CHUNK_KEYS] for start in range(0, len(ids), CHUNK_KEYS)]


SUGGESTIONS_OFF = "This study does not offer suggestions."
SUGGESTION_NOT_ACCEPTABLE = (
    "An LLM suggestion is shown for comparison once you have submitted; it cannot be "
    "accepted. Write your own pattern instead."
)
MACHINE_METHODS = (Suggestion.Method.RULE, Suggestion.Method.CLUSTER)


# --- making a study's suggestions -----------------------------------------------------


@dataclass
class SuggestionRun:
    """What one run of the job did."""

    created: list[int] = field(default_factory=list)  # ids of the suggestions made now
    kept: int = 0  # proposed again: left as they were
    removed: int = 0  # no longer proposed, and nobody had decided on them
    scored: int = 0


def _prefix_texts(rows: Sequence[tuple[Any, ...]]) -> list[Any]:
    from ..evidence.suggest import PrefixText

    return [
        PrefixText(rank=rank, text=text, trigger_token=trigger, tokens=tokens or ())
        for _, _, rank, text, trigger, tokens in rows
    ]


def _identity(key_id: int, method: str, rule: Any, ranks: Sequence[int]) -> tuple[Any, ...]:
    """What makes two suggestions of a key the same."""
    return (key_id, method, json.dumps(rule, sort_keys=True), tuple(sorted(ranks)))


def _proposals_of_chunk(
    key_ids: Sequence[int], rows: Sequence[tuple[Any, ...]]
) -> dict[int, list[Any]]:
    """Per key, its rule and cluster proposals. ``rows``: the keys' prefixes as
    (id, key_id, rank, text, trigger_token, tokens), by key then rank."""
    import numpy as np

    from ..evidence.embedding import embed
    from ..evidence.suggest import cluster_labels, cluster_proposals, rule_proposals

    by_key: dict[int, list[tuple[Any, ...]]] = {key_id: [] for key_id in key_ids}
    for row in rows:
        by_key[row[1]].append(row)
    proposals = {key_id: rule_proposals(_prefix_texts(by_key[key_id])) for key_id in key_ids}
    if not rows:
        return proposals
    # The chunk's prefixes embedded in one call, each distinct text once (a prefix often
    # tops several keys), then laid out [keys, n, d] (padded) for the batched clustering;
    # rows come by key in the order of ``key_ids``.
    distinct = {text: i for i, text in enumerate(dict.fromkeys(row[3] for row in rows))}
    unique = embed(list(distinct))  # [distinct texts, d]
    vectors = unique[np.asarray([distinct[row[3]] for row in rows], dtype=np.int64)]
    key_of = {key_id: k for k, key_id in enumerate(key_ids)}
    owner = np.asarray([key_of[row[1]] for row in rows], dtype=np.int64)  # [prefixes]
    starts = np.searchsorted(owner, np.arange(len(key_ids)))  # rows are grouped by key
    slot = np.arange(len(rows)) - starts[owner]  # position within its key
    width = int(slot.max()) + 1
    padded = np.zeros((len(key_ids), width, vectors.shape[1]), dtype=np.float32)
    valid = np.zeros((len(key_ids), width), dtype=bool)
    padded[owner, slot] = vectors
    valid[owner, slot] = True
    labels = cluster_labels(padded, valid)  # [keys, width]
    for key_id, k in key_of.items():
        ranks = [row[2] for row in by_key[key_id]]
        proposals[key_id] += cluster_proposals(ranks, labels[k, : len(ranks)])
    return proposals


@transaction.atomic
def _write_chunk(
    key_ids: Sequence[int], proposals: dict[int, list[Any]], run: SuggestionRun
) -> None:
    """Bring the chunk's stored rule and cluster suggestions in line with ``proposals``."""
    # Locks the keys: two runs at once (a message delivered twice) take turns here.
    list(Key.objects.select_for_update().filter(pk__in=key_ids).order_by("pk").values("pk"))
    stored = list(
        Suggestion.objects.filter(key_id__in=key_ids, method__in=MACHINE_METHODS).values_list(
            "id", "key_id", "method", "rule", "order"
        )
    )
    links = Suggestion.prefixes.through.objects.filter(suggestion_id__in=[s[0] for s in stored])
    ranks_of: dict[int, list[int]] = {}
    for suggestion_id, rank in links.values_list("suggestion_id", "triggerprefix__rank"):
        ranks_of.setdefault(suggestion_id, []).append(rank)
    decided = set(
        SuggestionDecision.objects.filter(suggestion_id__in=[s[0] for s in stored]).values_list(
            "suggestion_id", flat=True
        )
    )
    existing = {
        _identity(key_id, method, rule, ranks_of.get(pk, [])): pk
        for pk, key_id, method, rule, _ in stored
    }
    next_order: dict[tuple[int, str], int] = {}
    for _, key_id, method, _, order in stored:
        next_order[(key_id, method)] = max(next_order.get((key_id, method), 0), order + 1)
    prefix_ids = dict(
        ((key_id, rank), pk)
        for pk, key_id, rank in TriggerPrefix.objects.filter(key_id__in=key_ids).values_list(
            "id", "key_id", "rank"
        )
    )

    wanted: set[tuple[Any, ...]] = set()
    new: list[tuple[Suggestion, list[int]]] = []
    for key_id in key_ids:
        for proposal in proposals.get(key_id, []):
            identity = _identity(key_id, proposal.method, proposal.rule, proposal.ranks)
            if identity in wanted:
                continue
            wanted.add(identity)
            if identity in existing:
                run.kept += 1
                continue
            order = next_order.get((key_id, proposal.method), 0)
            next_order[(key_id, proposal.method)] = order + 1
            suggestion = Suggestion(
                key_id=key_id,
                method=proposal.method,
                order=order,
                description=proposal.description,
                kind=proposal.kind,
                rule=proposal.rule,
            )
            new.append((suggestion, [prefix_ids[(key_id, rank)] for rank in proposal.ranks]))
    stale = [
        pk for identity, pk in existing.items() if identity not in wanted and pk not in decided
    ]
    if stale:
        Suggestion.objects.filter(pk__in=stale).delete()
        run.removed += len(stale)
    made = Suggestion.objects.bulk_create([suggestion for suggestion, _ in new])
    through: Any = Suggestion.prefixes.through
    through.objects.bulk_create(
        [
            through(suggestion_id=suggestion.pk, triggerprefix_id=prefix_id)
            for suggestion, (_, prefix_ids_of) in zip(made, new, strict=True)
            for prefix_id in prefix_ids_of
        ]
    )
    run.created += [suggestion.pk for suggestion in made]


def suggestions_create_for_study(*, study: Study, score: bool = True) -> SuggestionRun:
    """Propose the study's rule and cluster suggestions, key by key in chunks, and score
    the new ones. Safe to run again (see the module's docstring)."""
    run = SuggestionRun()
    key_ids = list(Key.objects.filter(study=study).order_by("id").values_list("id", flat=True))
    for chunk in _chunks(key_ids):
        rows = list(
            TriggerPrefix.objects.filter(key_id__in=chunk)
            .order_by("key_id", "rank")
            .values_list("id", "key_id", "rank", "text", "trigger_token", "tokens")
        )
        _write_chunk(chunk, _proposals_of_chunk(chunk, rows), run)
    if score and run.created:
        from .scores import scores_compute

        run.scored = scores_compute(study_id=study.pk, suggestion_ids=run.created)["suggestions"]
    return run


# --- the LLM explainer ------------------------------------------------------------------


def llm_config() -> Any:
    """The configured endpoint (``annotate.evidence.llm.LlmConfig``), or None: off."""
    if not settings.LLM_BASE_URL:
        return None
    from ..evidence.llm import LlmConfig

    return LlmConfig(
        base_url=settings.LLM_BASE_URL,
        model=settings.LLM_MODEL,
        api_key=settings.LLM_API_KEY,
        timeout_s=float(settings.LLM_TIMEOUT_S),
    )


@dataclass
class LlmRun:
    created: list[int] = field(default_factory=list)
    error: str | None = None  # why it stopped early; the keys left get one on a rerun
    scored: int = 0


def suggestions_describe_with_llm(
    *, study: Study, config: Any = None, score: bool = True
) -> LlmRun:
    """One LLM description per key of the study that has none yet, from its top-k prefixes
    (``Suggestion`` with method "llm", kind semantic, no prefixes: it is compared, not
    accepted). ``config``: an ``LlmConfig``, by default the settings' (None: off).

    A key is written only once its answer is complete; at the first ``LlmError`` the run
    stops with its message (the endpoint is down or misconfigured), and a rerun goes on
    with the keys that have none.
    """
    from ..evidence.llm import LlmError, describe_key

    run = LlmRun()
    config = config or llm_config()
    if config is None:
        return run
    done = Suggestion.objects.filter(key__study=study, method=Suggestion.Method.LLM)
    key_ids = list(
        Key.objects.filter(study=study)
        .exclude(pk__in=done.values("key_id"))
        .order_by("id")
        .values_list("id", flat=True)
    )
    for chunk in _chunks(key_ids):
        rows = list(
            TriggerPrefix.objects.filter(key_id__in=chunk)
            .order_by("key_id", "rank")
            .values_list("id", "key_id", "rank", "text", "trigger_token", "tokens")
        )
        by_key: dict[int, list[tuple[Any, ...]]] = {key_id: [] for key_id in chunk}
        for row in rows:
            by_key[row[1]].append(row)
        for key_id in chunk:
            try:
                description = describe_key(
                    config,
                    _prefix_texts(by_key[key_id]),
                    max_chars=PATTERN_DESCRIPTION_MAX_LENGTH,
                )
            except LlmError as error:
                run.error = str(error)
                log.warning("LLM explainer stopped for study %s: %s", study.pk, error)
                break
            made = _llm_suggestion_write(key_id=key_id, description=description)
            if made is not None:
                run.created.append(made)
        if run.error:
            break
    if score and run.created:
        from .scores import scores_compute

        run.scored = scores_compute(study_id=study.pk, suggestion_ids=run.created)["suggestions"]
    return run


@transaction.atomic
def _llm_suggestion_write(*, key_id: int, description: str) -> int | None:
    """The key's LLM suggestion, unless it has one (another run wrote it meanwhile)."""
    key = Key.objects.select_for_update().filter(pk=key_id).first()
    if key is None or Suggestion.objects.filter(key=key, method=Suggestion.Method.LLM).exists():
        return None
    suggestion = Suggestion.objects.create(
        key=key,
        method=Suggestion.Method.LLM,
        order=0,
        description=description,
        kind=Pattern.Kind.SEMANTIC,
        rule=None,
    )
    return suggestion.pk


# --- queueing the jobs ------------------------------------------------------------------


def suggestions_queue(*, study_id: int) -> None:
    """Send the suggestion job once the caller's transaction commits (a study just
    loaded). A broker that cannot be reached is logged, not raised: the study stands."""
    transaction.on_commit(functools.partial(_send, SUGGEST_TASK, study_id))


def suggestions_queue_llm(*, study_id: int) -> None:
    """Send the LLM job, if an endpoint is configured."""
    if settings.LLM_BASE_URL:
        transaction.on_commit(functools.partial(_send, SUGGEST_LLM_TASK, study_id))


def _send(name: str, study_id: int) -> None:
    try:
        current_app.send_task(name, kwargs={"study_id": study_id}, retry=False)
    except Exception:  # the broker's errors vary by transport
        log.warning("could not queue %s for study %s", name, study_id, exc_info=True)


# --- an annotator's decisions -----------------------------------------------------------


def _check_enabled(suggestion: Suggestion) -> None:
    if not suggestion.key.study.suggestions_enabled:
        raise ServiceError(SUGGESTIONS_OFF)


@dataclass(frozen=True)
class SuggestionAcceptResult:
    pattern: Pattern
    created: bool
    result: PatternCreateResult | None  # None: accepted before, nothing written now


@transaction.atomic
def suggestion_accept(
    *,
    suggestion: Suggestion,
    annotation: Annotation,
    actor: User,
    version: int,
    description: str | None = None,
    client_id: uuid.UUID | None = None,
    guideline_version: GuidelineStamp = KEEP,
) -> SuggestionAcceptResult:
    """Make ``suggestion`` a pattern of ``annotation`` (the actor's own, of its key) and
    record the decision. ``description``: the pattern's, where the annotator gives one
    (a cluster suggestion has none of its own). Accepting again while that pattern
    exists makes nothing new; after it was deleted, accepting makes it again."""
    _check_enabled(suggestion)
    if suggestion.method == Suggestion.Method.LLM:
        raise ServiceError(SUGGESTION_NOT_ACCEPTABLE)
    decision = (
        SuggestionDecision.objects.select_for_update()
        .filter(suggestion=suggestion, annotator=actor)
        .first()
    )
    if (
        decision is not None
        and decision.decision == SuggestionDecision.Decision.ACCEPTED
        and decision.pattern_id is not None
    ):
        pattern = Pattern.objects.filter(pk=decision.pattern_id, annotation=annotation).first()
        if pattern is not None:
            return SuggestionAcceptResult(pattern=pattern, created=False, result=None)
    result = pattern_create(
        annotation=annotation,
        actor=actor,
        description=description if description is not None else suggestion.description,
        kind=suggestion.kind,
        prefixes=list(suggestion.prefixes.order_by("rank")),
        version=version,
        client_id=client_id,
        rule=suggestion.rule,
        guideline_version=guideline_version,
        source=Pattern.Source.SUGGESTION,
        suggestion=suggestion,
    )
    SuggestionDecision.objects.update_or_create(
        suggestion=suggestion,
        annotator=actor,
        defaults={"decision": SuggestionDecision.Decision.ACCEPTED, "pattern": result.pattern},
    )
    return SuggestionAcceptResult(pattern=result.pattern, created=result.created, result=result)


@transaction.atomic
def suggestion_dismiss(*, suggestion: Suggestion, annotator: User) -> SuggestionDecision:
    """Record that ``annotator`` dismissed the suggestion (again: nothing changes). A
    pattern they made from it before stays theirs."""
    _check_enabled(suggestion)
    decision, _ = SuggestionDecision.objects.update_or_create(
        suggestion=suggestion,
        annotator=annotator,
        defaults={"decision": SuggestionDecision.Decision.DISMISSED, "pattern": None},
    )
    return decision
