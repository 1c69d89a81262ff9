"""The held-out scores (docs/evidence.md, "Scores") on a study built by hand.

Layer 1 has three keys (paris, river, food), layer 2 one key (alone). Each key has a few
hand-written ``heldout`` (positives) and ``heldout_random`` (negatives) examples. Every
expected score is computed here plainly: the balanced accuracy from hits counted by
hand, the AUROC by a loop over (positive, negative) pairs of MiniLM cosines.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotate.evidence.embedding import centroid, embed
from annotate.evidence.scores import shuffled_partners
from annotate.models import KeyExample, Pattern
from annotate.services import scores as score_service
from annotate.services.patterns import pattern_update
from annotate.services.scores import scores_compute
from tests.factories import (
    AnnotationFactory,
    PatternFactory,
    StudyFactory,
    SuggestionFactory,
    annotate_key,
    key_with_prefixes,
)

pytestmark = pytest.mark.django_db

SEED = 7

# Per key: (text, trigger token) of its positives, then of its negatives.
EXAMPLES = {
    "paris": (
        [
            ("The capital of France is Paris", " Paris"),
            ("We flew from London to Paris", " Paris"),
            ("The Eiffel Tower stands in paris", " paris"),
            ("The capital of Italy is Rome", " Rome"),
        ],
        [
            ("The dog chased the ball", " ball"),
            ("She named her cat Paris", " Paris"),
            ("Interest rates rose again", " again"),
        ],
    ),
    "river": (
        [
            ("The boat drifted down the river", " river"),
            ("Salmon swim up the stream", " stream"),
            ("The Nile is a long river", " river"),
        ],
        [
            ("He paid the bill at the bank", " bank"),
            ("The meeting ended at noon", " noon"),
            ("The river of data never stops", " stops"),
            ("Add two eggs to the batter", " batter"),
        ],
    ),
    "food": (
        [
            ("For dinner we cooked pasta", " pasta"),
            ("She baked a loaf of bread", " bread"),
        ],
        [
            ("The train left the station", " station"),
            ("He fixed the broken chair", " chair"),
            # The same text as a positive: an exact tie, which counts one half.
            ("She baked a loaf of bread", " bread"),
        ],
    ),
    "alone": (
        [("A violin solo opened the concert", " concert")],
        [("The printer is out of paper", " paper")],
    ),
}
LAYER_OF = {"paris": 1, "river": 1, "food": 1, "alone": 2}
INDEX_OF = {"paris": 0, "river": 1, "food": 2, "alone": 0}


def _example(key, kind: str, order: int, text: str, trigger: str) -> KeyExample:
    return KeyExample.objects.create(
        key=key,
        kind=kind,
        order=order,
        rank=25 + order if kind == KeyExample.Kind.HELDOUT else None,
        coefficient=1.0,
        text=text,
        trigger_token=trigger,
        trigger_token_id=order,
        next_token=" .",
        next_token_id=13,
        sentence=f"{text}.",
        sentence_index=1000 * (kind == KeyExample.Kind.HELDOUT) + 100 + order,
        position=len(text.split()) - 1,
    )


def build_study():
    """The module docstring's study."""
    study = StudyFactory(seed=SEED)
    for name, (positives, negatives) in EXAMPLES.items():
        key = key_with_prefixes(5, study=study, layer=LAYER_OF[name], index=INDEX_OF[name])
        for order, (text, trigger) in enumerate(positives, start=1):
            _example(key, KeyExample.Kind.HELDOUT, order, text, trigger)
        for order, (text, trigger) in enumerate(negatives, start=1):
            _example(key, KeyExample.Kind.HELDOUT_RANDOM, order, text, trigger)
    return study


@pytest.fixture
def study():
    return build_study()


def key_of(study, name: str):
    return study.keys.get(layer=LAYER_OF[name], index=INDEX_OF[name])


def plain_auroc(query: np.ndarray, name: str) -> float:
    """Over every (positive, negative) pair: 1 if the positive is more similar to the
    query, ½ on a tie, 0 otherwise; the mean."""
    positives, negatives = EXAMPLES[name]
    distinct = sorted({t for t, _ in positives + negatives})  # one vector per text
    vector = dict(zip(distinct, embed(distinct), strict=True))
    pos = [float(np.dot(vector[t], query)) for t, _ in positives]
    neg = [float(np.dot(vector[t], query)) for t, _ in negatives]
    total = 0.0
    for p, n in itertools.product(pos, neg):
        total += 1.0 if p > n else 0.5 if p == n else 0.0
    assert name != "food" or total % 1 == 0.5  # its tie is one
    return total / (len(pos) * len(neg))


def partner_name(name: str) -> str | None:
    """The shuffled partner as docs/evidence.md writes it down: the layer's keys in index
    order, shifted by 1 + an integer below n−1 drawn from SeedSequence([seed, layer])."""
    layer = LAYER_OF[name]
    members = sorted((n for n in EXAMPLES if LAYER_OF[n] == layer), key=INDEX_OF.get)
    if len(members) < 2:
        return None
    rng = np.random.default_rng(np.random.SeedSequence([SEED, layer]))
    offset = 1 + int(rng.integers(len(members) - 1))
    return members[(members.index(name) + offset) % len(members)]


def pattern_on(study, name: str, description: str, rule=None) -> Pattern:
    key = key_of(study, name)
    annotation = AnnotationFactory(key=key)
    return PatternFactory(
        annotation=annotation,
        description=description,
        kind="shallow",
        rule=rule,
        prefixes=list(key.prefixes.all()[:3]),
    )


def test_detection_is_the_rules_balanced_accuracy_on_the_held_out_sets(study):
    pattern = pattern_on(study, "paris", "the city of Paris", {"type": "token", "value": "paris"})
    scores_compute(study_id=study.pk)
    pattern.refresh_from_db()
    # Lowercase value, any case: the rule fires on 3 of the 4 positives (Paris, Paris,
    # paris; not Rome) and on 1 of the 3 negatives (the cat named Paris).
    assert pattern.scores["detection"] == pytest.approx(0.5 * (3 / 4 + 2 / 3))


def test_a_case_sensitive_rule_and_an_ngram_rule_score_by_their_own_hits(study):
    capital = pattern_on(study, "paris", "Paris", {"type": "token", "value": "Paris"})
    ngram = pattern_on(study, "river", "rivers", {"type": "ngram", "value": "the river"})
    scores_compute(study_id=study.pk)
    capital.refresh_from_db()
    ngram.refresh_from_db()
    # "Paris" exactly: positives 2 of 4 (not "paris", not Rome), negatives 1 of 3.
    assert capital.scores["detection"] == pytest.approx(0.5 * (2 / 4 + 2 / 3))
    # Texts ending "the river": positives 1 of 3 ("down the river"), negatives 0 of 4.
    assert ngram.scores["detection"] == pytest.approx(0.5 * (1 / 3 + 4 / 4))


def test_embedding_is_the_auroc_of_the_description_against_the_examples(study):
    pattern = pattern_on(study, "river", "rivers, streams and flowing water")
    scores_compute(study_id=study.pk)
    pattern.refresh_from_db()
    expected = plain_auroc(embed(["rivers, streams and flowing water"])[0], "river")
    assert pattern.scores["embedding"] == pytest.approx(expected, abs=1e-6)
    assert pattern.scores["detection"] is None  # no rule


def test_a_suggestion_without_a_description_is_scored_by_its_prefixes_centroid(study):
    key = key_of(study, "food")
    prefixes = list(key.prefixes.order_by("rank")[:3])
    cluster = SuggestionFactory(key=key, method="cluster", description="", kind="semantic")
    cluster.prefixes.set(prefixes)
    scores_compute(study_id=study.pk)
    cluster.refresh_from_db()
    query = centroid(embed([p.text for p in prefixes]))
    assert cluster.scores["embedding"] == pytest.approx(plain_auroc(query, "food"), abs=1e-6)
    assert cluster.scores["detection"] is None


def test_shuffled_scores_are_the_same_pattern_on_its_partner_key(study):
    description = "the city of Paris"
    rule = {"type": "token", "value": "paris"}
    pattern = pattern_on(study, "paris", description, rule)
    lonely = pattern_on(study, "alone", "music and concerts", None)
    scores_compute(study_id=study.pk)
    pattern.refresh_from_db()
    lonely.refresh_from_db()
    other = partner_name("paris")
    assert other in ("river", "food")
    positives, negatives = EXAMPLES[other]
    hits_pos = sum(t.strip().lower() == "paris" for _, t in positives)
    hits_neg = sum(t.strip().lower() == "paris" for _, t in negatives)
    expected_det = 0.5 * (hits_pos / len(positives) + 1 - hits_neg / len(negatives))
    assert pattern.scores["shuffled_detection"] == pytest.approx(expected_det)
    expected_emb = plain_auroc(embed([description])[0], other)
    assert pattern.scores["shuffled_embedding"] == pytest.approx(expected_emb, abs=1e-6)
    # Layer 2 has no other key: no baseline.
    assert lonely.scores["shuffled_detection"] is None
    assert lonely.scores["shuffled_embedding"] is None
    assert lonely.scores["embedding"] == pytest.approx(
        plain_auroc(embed(["music and concerts"])[0], "alone"), abs=1e-6
    )


def test_the_shuffled_partner_is_deterministic_another_key_of_the_layer_and_a_permutation():
    layers = np.array([1, 1, 1, 1, 2, 2, 3, 1])
    indexes = np.array([5, 2, 9, 0, 4, 1, 0, 7])
    first = shuffled_partners(layers, indexes, seed=3)
    assert np.array_equal(first, shuffled_partners(layers, indexes, seed=3))
    assert first[6] == -1  # alone in layer 3
    paired = np.flatnonzero(first >= 0)
    assert (first[paired] != paired).all()
    assert (layers[first[paired]] == layers[paired]).all()
    for layer in (1, 2):
        members = np.flatnonzero(layers == layer)
        assert sorted(first[members].tolist()) == sorted(members.tolist())
    # Another seed draws its own offsets: over many seeds, every offset of layer 1 occurs.
    offsets = {
        tuple(shuffled_partners(layers, indexes, seed=s)[layers == 1].tolist()) for s in range(40)
    }
    assert len(offsets) == 4  # n − 1 shifts of 5 keys


def test_scoring_is_idempotent(study):
    pattern = pattern_on(study, "paris", "the city of Paris", {"type": "token", "value": "paris"})
    first = scores_compute(study_id=study.pk)
    assert first == {"patterns": 1, "gold_patterns": 0, "suggestions": 0}
    pattern.refresh_from_db()
    scored = dict(pattern.scores)
    assert set(scored) == {"detection", "embedding", "shuffled_detection", "shuffled_embedding"}
    assert scores_compute(study_id=study.pk) == {
        "patterns": 0,
        "gold_patterns": 0,
        "suggestions": 0,
    }
    assert scores_compute(study_id=study.pk, missing_only=False)["patterns"] == 1
    pattern.refresh_from_db()
    assert pattern.scores == scored


def test_only_the_rows_asked_for_are_scored(study):
    asked = pattern_on(study, "paris", "the city of Paris")
    other = pattern_on(study, "river", "rivers")
    suggestion = SuggestionFactory(key=key_of(study, "food"), description="food and cooking")
    written = scores_compute(study_id=study.pk, suggestion_ids=[suggestion.pk])
    assert written == {"patterns": 0, "gold_patterns": 0, "suggestions": 1}
    written = scores_compute(study_id=study.pk, pattern_ids=[asked.pk])
    assert written["patterns"] == 1
    other.refresh_from_db()
    assert other.scores == {}


def test_a_pattern_changed_while_scoring_keeps_its_cleared_scores(study):
    pattern = pattern_on(study, "paris", "the city of Paris")
    targets = score_service._load_targets(study.pk, {"patterns": None}, True)
    pattern.save(update_fields=["updated_at"])  # a write while the job runs
    scores = [dict.fromkeys(("detection", "embedding"), 0.5)]
    assert score_service._write("patterns", targets, scores) == 0
    pattern.refresh_from_db()
    assert pattern.scores == {}


def test_a_changed_pattern_loses_its_scores_and_its_rescoring_is_queued_on_commit(
    study, django_capture_on_commit_callbacks
):
    pattern = pattern_on(study, "paris", "the city of Paris")
    scores_compute(study_id=study.pk)
    pattern.refresh_from_db()
    assert pattern.scores["embedding"] is not None
    annotation = pattern.annotation
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        pattern_update(
            pattern=pattern,
            actor=annotation.annotator,
            version=annotation.version,
            description="rivers and streams",
        )
    pattern.refresh_from_db()
    assert pattern.scores == {}
    sent = [c for c in callbacks if getattr(c, "func", None) is score_service._send]
    assert [c.args[0]["pattern_ids"] for c in sent] == [[pattern.pk]]
    assert sent[0].args[0]["missing_only"] is True  # with whatever else is pending


def test_the_job_of_one_changed_pattern_scores_every_pending_row_of_its_study(study):
    # Coalesced: one job, sent for one pattern, takes every row of the study that is
    # missing its scores, so that a backlog of such jobs costs one embedding pass.
    from annotate.tasks import score_patterns

    first = pattern_on(study, "paris", "the city of Paris")
    second = pattern_on(study, "river", "rivers and streams")
    score_patterns.run(pattern_ids=[first.pk], missing_only=True)
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.scores["embedding"] is not None
    assert second.scores["embedding"] is not None


def test_the_score_command_computes_the_missing_scores(study, capsys):
    pattern = pattern_on(study, "paris", "the city of Paris")
    call_command("score", "--study", study.name)
    pattern.refresh_from_db()
    assert pattern.scores["embedding"] is not None
    assert "scored 1 patterns" in capsys.readouterr().out


def test_the_score_command_names_an_unknown_study():
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("score", "--study", "nope")


def test_a_study_without_held_out_examples_scores_null_without_loading_the_embedder(
    alice, monkeypatch
):
    # Every pattern save queues scoring; a study without held-out examples (an import of
    # an older file) has nothing to score against, and must not load MiniLM for it.
    import annotate.evidence.embedding as embedding

    def refuse(texts):
        raise AssertionError(f"the embedder was loaded for {len(texts)} texts")

    monkeypatch.setattr(embedding, "embed", refuse)
    study = StudyFactory(name="no held-out", n_layers=1)
    key = key_with_prefixes(5, study=study, layer=1, index=0)
    key_with_prefixes(5, study=study, layer=1, index=1)  # a partner, no examples either
    pattern = PatternFactory(
        annotation=annotate_key(key, alice),
        kind="shallow",
        description="ends in a comma",
        rule={"type": "token", "value": ","},
        prefixes=list(key.prefixes.all()[:3]),
    )
    assert scores_compute(study_id=study.pk)["patterns"] == 1
    pattern.refresh_from_db()
    assert pattern.scores == dict.fromkeys(
        ("detection", "embedding", "shuffled_detection", "shuffled_embedding")
    )


def test_a_study_without_held_out_examples_is_scored_in_one_update_a_table(
    alice, bob, django_assert_max_num_queries
):
    # An import of a large older study queues this job for every pattern it holds (690,000
    # in the API bench's), and jobs queued behind it wait for it. Its study, whether it has
    # held-out examples, then one UPDATE per table, whatever the number of rows.
    study = StudyFactory(name="no held-out, many patterns", n_layers=1)
    keys = [key_with_prefixes(5, study=study, layer=1, index=i) for i in range(4)]
    for key in keys:
        for user in (alice, bob):
            PatternFactory(
                annotation=annotate_key(key, user),
                kind="semantic",
                description=f"{user.username} on {key.index}",
                prefixes=list(key.prefixes.all()[:3]),
            )
    scored = Pattern.objects.filter(annotation__key__study=study).first()
    scored.scores = {"detection": 0.5}  # already scored: left as it is
    scored.save(update_fields=["scores"])
    with django_assert_max_num_queries(5):
        written = scores_compute(study_id=study.pk)
    assert written == {"patterns": 7, "gold_patterns": 0, "suggestions": 0}
    nulls = dict.fromkeys(("detection", "embedding", "shuffled_detection", "shuffled_embedding"))
    rows = Pattern.objects.filter(annotation__key__study=study).exclude(pk=scored.pk)
    assert all(p.scores == nulls for p in rows)
    scored.refresh_from_db()
    assert scored.scores == {"detection": 0.5}
