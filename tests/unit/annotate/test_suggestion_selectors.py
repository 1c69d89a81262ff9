"""Reads of suggestions (annotate.selectors.suggestions): a curator sees every
annotator's decision; an annotator only their own."""

from __future__ import annotations

import pytest

from annotate.selectors.suggestions import (
    suggestion_list_for_annotator,
    suggestion_list_for_curator,
)
from tests.factories import SuggestionDecisionFactory, SuggestionFactory, assigned_batch

pytestmark = pytest.mark.django_db


def test_a_curator_sees_every_decision_and_an_annotator_only_their_own(alice, bob):
    _, (key,) = assigned_batch([alice, bob])
    prefixes = list(key.prefixes.order_by("rank")[:3])
    rule = SuggestionFactory(key=key, order=0, prefixes=prefixes)
    llm = SuggestionFactory(key=key, method="llm", order=0, kind="semantic", rule=None)
    SuggestionDecisionFactory(suggestion=rule, annotator=alice, decision="accepted")
    SuggestionDecisionFactory(suggestion=rule, annotator=bob, decision="dismissed")

    listed = suggestion_list_for_curator(key=key)
    assert [(s.pk, ranks) for s, ranks, _ in listed] == [(rule.pk, [1, 2, 3]), (llm.pk, [])]
    decisions = [(d.annotator, d.decision) for d in listed[0][2]]
    assert decisions == [("alice", "accepted"), ("bob", "dismissed")]

    mine = suggestion_list_for_annotator(key=key, user=bob)
    assert [(item.id, item.decision) for item in mine.items] == [(rule.pk, "dismissed")]
