"""A small study built by hand, whose report the tests compute by hand.

Layer 1, key A (5 prefixes): alice writes shallow {1,2,3} and semantic {3,4,5}, so her
labels are shallow, shallow, shallow+semantic, semantic, semantic; bob writes one
shallow+semantic pattern {1,2,3}: shallow+semantic ×3, not-covered ×2. Both submitted.
Layer 2, key B (5 prefixes): alice submits no pattern (not-covered ×5); bob's draft has
semantic {2,3,4}.
"""

from __future__ import annotations

import pytest

from annotate.models import Annotation, Key, Pattern, TriggerPrefix
from tests.factories import StudyFactory, UserFactory, annotate_key, key_with_prefixes

# The real-worker fixtures (PostgreSQL, Redis, a Celery worker process) for
# test_export_worker.py; they skip, or fail under REQUIRE_SERVICES=1, without them.
from tests.integration.conftest import postgres, redis_broker, start_worker  # noqa: F401


@pytest.fixture
def hand_study(alice, bob):
    study = StudyFactory(name="hand study", vocab_size=100, n_layers=2, top_k=25)
    key_a = key_with_prefixes(
        5,
        study=study,
        layer=1,
        index=7,
        value_top_token_ids=[1001, 5],
        value_top_tokens=[[" n1", 0.5], [" x", 0.25]],
        perturbation={"first": 0.5, "last": 0.1, "random": 0.2},
    )
    key_b = key_with_prefixes(
        5,
        study=study,
        layer=2,
        index=3,
        value_top_token_ids=[1],
        value_top_tokens=[[" t1", 0.9]],
    )
    annotate_key(key_a, alice, [("shallow", [1, 2, 3]), ("semantic", [3, 4, 5])])
    annotate_key(key_a, bob, [("shallow+semantic", [1, 2, 3])])
    annotate_key(key_b, alice, [])
    annotate_key(key_b, bob, [("semantic", [2, 3, 4])], status="draft")
    return study


# What a spreadsheet reads as the start of a formula (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(params=FORMULA_STARTS, ids=repr)
def formula_study(request):
    """A study whose every free text starts with one formula character: its name, its two
    annotators' usernames, its prefixes' text, tokens and sentences, the patterns'
    descriptions and the notes. One key of 6 prefixes, rank 6's coefficient -0.5; eve
    and zed disagree on every prefix, so the report holds negative kappas and alphas."""
    start = request.param
    study = StudyFactory(name=f'{start}HYPERLINK("http://x") study')
    key = key_with_prefixes(6, study=study, layer=1, index=0)
    TriggerPrefix.objects.filter(key=key).update(
        text=f"{start}1+1 text",
        trigger_token=f"{start}t",
        next_token=f"{start}n",
        sentence=f"{start}1+1 text and the rest.",
    )
    TriggerPrefix.objects.filter(key=key, rank=6).update(coefficient=-0.5)
    eve = annotate_key(
        key, UserFactory(username=f"{start}eve"), [("shallow", [1, 2, 3]), ("semantic", [4, 5, 6])]
    )
    zed = annotate_key(
        key, UserFactory(username=f"{start}zed"), [("semantic", [1, 2, 3]), ("shallow", [4, 5, 6])]
    )
    Annotation.objects.filter(pk__in=[eve.pk, zed.pk]).update(note=f"{start}note")
    Pattern.objects.filter(annotation__in=[eve, zed]).update(description=f"{start}SUM(A1)")
    return start, study


def keys_of(study) -> list[Key]:
    return list(Key.objects.filter(study=study).order_by("layer", "index"))
