"""The machine's suggestions for one key (annotate.evidence.suggest), on hand-built
prefixes: which rules it proposes and which prefixes each covers; how its clustering
groups hand-picked sentences."""

from __future__ import annotations

import numpy as np
import pytest

from annotate.evidence.rules import rule_matches
from annotate.evidence.suggest import (
    CLUSTER_THRESHOLD,
    PrefixText,
    cluster_labels,
    cluster_proposals,
    rule_proposals,
)


def _prefix(rank: int, *tokens: str) -> PrefixText:
    return PrefixText(rank=rank, text="".join(tokens), trigger_token=tokens[-1], tokens=tokens)


# A hand-built key: three prefixes end in the token " of", four in a word ending "-ing",
# four in the token " York", three of them in "New York"; the rest share nothing.
KEY = [
    _prefix(1, "The", " history", " of"),
    _prefix(2, "A", " map", " of"),
    _prefix(3, "In", " the", " middle", " of"),
    _prefix(4, "She", " was", " walking"),
    _prefix(5, "He", " kept", " talking"),
    _prefix(6, "They", " were", " singing"),
    _prefix(7, "The", " capital", " is", " Paris"),
    _prefix(8, "I", " visited", " Paris"),
    _prefix(9, "He", " went", " swimming"),
    _prefix(10, "Visit", " New", " York"),
    _prefix(11, "Moved", " to", " New", " York"),
    _prefix(12, "Born", " in", " New", " York"),
    _prefix(13, "The", " Duke", " of", " York"),
]


def _summary(proposals):
    return [(p.rule["type"], p.rule["value"], p.ranks) for p in proposals]


def test_the_rules_of_a_hand_built_key_and_the_prefixes_each_covers():
    proposals = rule_proposals(KEY, limit=10)
    assert _summary(proposals) == [
        ("token", "york", (10, 11, 12, 13)),
        ("suffix", "ing", (4, 5, 6, 9)),
        ("token", "of", (1, 2, 3)),
        ("ngram", "new york", (10, 11, 12)),
    ]
    assert [p.description for p in proposals] == [
        'trigger token "york"',
        'last word ends in "-ing"',
        'trigger token "of"',
        'prefix ends with "new york"',
    ]
    assert {(p.method, p.kind) for p in proposals} == {("rule", "shallow")}


def test_only_the_few_that_cover_most_are_kept():
    assert _summary(rule_proposals(KEY)) == [
        ("token", "york", (10, 11, 12, 13)),
        ("suffix", "ing", (4, 5, 6, 9)),
        ("token", "of", (1, 2, 3)),
    ]


def test_a_suffix_or_ngram_that_covers_what_a_token_rule_covers_is_not_offered():
    # "York", "ork" and the 1-token n-gram "york" cover the same four prefixes: one rule,
    # the token's. Two paris ("Paris") are too few for any rule.
    values = [(p.rule["type"], p.rule["value"]) for p in rule_proposals(KEY, limit=50)]
    assert ("suffix", "ork") not in values
    assert ("ngram", "york") not in values
    assert ("ngram", "of") not in values
    assert not any("paris" in value or value in ("is", "ris") for _, value in values)


def test_each_rule_covers_exactly_the_prefixes_it_matches():
    for proposal in rule_proposals(KEY, limit=50):
        matched = tuple(p.rank for p in KEY if rule_matches(proposal.rule, p.text, p.trigger_token))
        assert proposal.ranks == matched


def test_matching_ignores_case_for_the_lowercase_values_it_proposes():
    prefixes = [
        _prefix(1, "Go", " North"),
        _prefix(2, "go", " north"),
        _prefix(3, "Far", " NORTH"),
    ]
    assert _summary(rule_proposals(prefixes)) == [("token", "north", (1, 2, 3))]


def test_without_tokens_the_ngrams_are_the_last_words():
    prefixes = [
        PrefixText(rank=r, text=text, trigger_token=" morning")
        for r, text in enumerate(
            ["Early in the morning", "We met in the morning", "Late in the morning"], 1
        )
    ] + [PrefixText(rank=4, text="Good morning", trigger_token=" morning")]
    summary = _summary(rule_proposals(prefixes, limit=10))
    assert summary == [("token", "morning", (1, 2, 3, 4)), ("ngram", "in the morning", (1, 2, 3))]


def test_fewer_than_three_sharing_prefixes_propose_nothing():
    prefixes = [_prefix(1, "A", " cat"), _prefix(2, "A", " cat"), _prefix(3, "A", " dog")]
    assert rule_proposals(prefixes) == []


# --- clustering ---------------------------------------------------------------------------


def test_average_linkage_on_known_vectors_groups_what_is_alike():
    # Two tight groups (3 and 3 points) and two loners, in 4 dimensions.
    a, b, c, d = np.eye(4)
    points = np.stack([a, a * 0.9 + b * 0.1, a, c, c * 0.95 + d * 0.05, c, b, d])
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    labels = cluster_labels(points[None], np.ones((1, 8), dtype=bool), threshold=0.9)[0]
    assert labels.tolist() == [0, 0, 0, 3, 3, 3, 6, 7]
    found = cluster_proposals(list(range(1, 9)), labels)
    assert [p.ranks for p in found] == [(1, 2, 3), (4, 5, 6)]
    assert {(p.method, p.kind, p.description, p.rule) for p in found} == {
        ("cluster", "semantic", "", None)
    }


def test_keys_clustered_together_get_what_each_gets_alone_and_padding_stays_out():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(3, 9, 6))
    vectors /= np.linalg.norm(vectors, axis=2, keepdims=True)
    valid = np.ones((3, 9), dtype=bool)
    valid[1, 6:] = False  # a key with 6 prefixes
    together = cluster_labels(vectors, valid, threshold=0.2)
    for k in range(3):
        alone = cluster_labels(vectors[k : k + 1], valid[k : k + 1], threshold=0.2)[0]
        assert together[k].tolist() == alone.tolist()
    assert together[1, 6:].tolist() == [-1, -1, -1]
    assert set(together[1, :6].tolist()) <= set(range(6))


TOPICS = {
    "bread": [
        "Knead the bread dough",
        "The bread dough rose overnight",
        "She baked a loaf of bread",
        "Fresh bread from the bakery",
    ],
    "rain": [
        "Heavy rain fell all night",
        "The storm brought heavy rain",
        "It rained for three days",
        "Rain and strong wind",
    ],
    "football": [
        "The football match ended in a draw",
        "He scored a goal in the football final",
        "The football team won the league",
        "Football fans filled the stadium",
    ],
    "unrelated": [
        "In 1848 the revolution began",
        "The violin has four strings",
        "Photosynthesis converts light",
        "The train to Paris",
        "My grandmother",
    ],
}


@pytest.fixture(scope="module")
def topic_vectors():
    from annotate.evidence.embedding import embed

    texts = [text for sentences in TOPICS.values() for text in sentences]
    topics = [topic for topic, sentences in TOPICS.items() for _ in sentences]
    return embed(texts), topics


def test_minilm_clusters_group_hand_picked_prefixes_by_topic(topic_vectors):
    vectors, topics = topic_vectors
    labels = cluster_labels(vectors[None], np.ones((1, len(topics)), bool))
    found = cluster_proposals(list(range(len(topics))), labels[0], limit=10)
    # Exactly one group per topic, holding all four of its prefixes; the unrelated
    # prefixes are in none.
    assert sorted(tuple(topics[i] for i in p.ranks) for p in found) == sorted(
        (topic,) * 4 for topic in ("bread", "rain", "football")
    )


def test_a_far_higher_threshold_splits_the_looser_topic(topic_vectors):
    vectors, topics = topic_vectors
    labels = cluster_labels(vectors[None], np.ones((1, len(topics)), bool), threshold=0.55)
    found = cluster_proposals(list(range(len(topics))), labels[0], limit=10)
    assert sorted(tuple(topics[i] for i in p.ranks) for p in found) == [
        ("bread",) * 4,
        ("rain",) * 4,
    ]
    assert CLUSTER_THRESHOLD < 0.55
