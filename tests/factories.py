"""factory_boy factories for the domain."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentKey,
    Batch,
    Key,
    KeyExample,
    Pattern,
    Study,
    Suggestion,
    SuggestionDecision,
    TriggerPrefix,
)

PASSWORD = "correct horse battery staple"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.django.Password(PASSWORD)


class StudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Study

    name = factory.Sequence(lambda n: f"study-{n}")
    model_name = "gpt2"
    corpus = "builtin:wiki-vital"
    n_layers = 2
    d_ff = 8


class KeyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Key

    study = factory.SubFactory(StudyFactory)
    layer = 1
    index = factory.Sequence(lambda n: n)


class TriggerPrefixFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TriggerPrefix

    key = factory.SubFactory(KeyFactory)
    rank = factory.Sequence(lambda n: n + 1)
    coefficient = 1.0
    text = "The cat sat"
    trigger_token = " sat"
    trigger_token_id = 3332
    next_token = " on"
    next_token_id = 319
    sentence = "The cat sat on the mat."
    sentence_index = 0
    position = 2


class KeyExampleFactory(factory.django.DjangoModelFactory):
    """A stored example of a key beyond its top-k; ``kind`` random unless given (a band
    needs ``band`` and ``band_low``/``band_high``, a heldout one its ``rank``)."""

    class Meta:
        model = KeyExample

    key = factory.SubFactory(KeyFactory)
    kind = KeyExample.Kind.RANDOM
    order = factory.Sequence(lambda n: n + 1)
    coefficient = 0.5
    text = factory.Sequence(lambda n: f"example {n}")
    trigger_token = " example"
    trigger_token_id = 1672
    next_token = " text"
    next_token_id = 2420
    suffix = " text."
    sentence = factory.LazyAttribute(lambda e: f"{e.text}{e.suffix}")
    sentence_index = factory.Sequence(lambda n: 100_000 + n)
    position = 1
    tokens = factory.LazyAttribute(lambda e: e.text.split(" "))
    token_coefficients = factory.LazyAttribute(lambda e: [0.0] * len(e.tokens))


def key_examples(
    key: Key,
    *,
    top_k: int = 25,
    n_bands: int = 5,
    per_band: int = 5,
    n_random: int = 25,
    max_coefficient: float = 10.0,
) -> dict[str, list[KeyExample]]:
    """Every set of stored examples of ``key`` beyond its top-k (docs/evidence.md), in
    bulk: ``heldout`` (ranks top_k+1 … 2·top_k), ``heldout_random``, the ``band`` samples
    (``n_bands`` of equal width over (0, max_coefficient], ``per_band`` each) and the
    ``random`` ones; each example's text names its set and its order, and its sentence
    index is distinct from the prefixes' (``key_with_prefixes``: 1 … 25). By kind."""
    width = max_coefficient / n_bands
    rows: list[KeyExample] = []

    def example(kind: str, order: int, coefficient: float, **more) -> KeyExample:
        text = f"{kind} example {order} of {key}"
        tokens = text.split(" ")
        return KeyExample(
            key=key,
            kind=kind,
            order=order,
            coefficient=coefficient,
            text=text,
            trigger_token=f" {kind}{order}",
            trigger_token_id=order,
            next_token=" next",
            next_token_id=2000 + order,
            suffix=" and more.",
            sentence=f"{text} and more.",
            sentence_index=10_000 * (1 + KeyExample.Kind.values.index(kind)) + order,
            position=len(tokens) - 1,
            tokens=tokens,
            token_coefficients=[coefficient * (i + 1) / len(tokens) for i in range(len(tokens))],
            **more,
        )

    for order in range(1, top_k + 1):
        rows.append(
            example(
                KeyExample.Kind.HELDOUT,
                order,
                max_coefficient / 2 - order / 100,
                rank=top_k + order,
            )
        )
        rows.append(example(KeyExample.Kind.HELDOUT_RANDOM, order, order / 1000))
    order = 0
    for band in range(1, n_bands + 1):
        low, high = (band - 1) * width, band * width
        for i in range(per_band):
            order += 1
            rows.append(
                example(
                    KeyExample.Kind.BAND,
                    order,
                    low + width * (i + 1) / (per_band + 1),
                    band=band,
                    band_low=low,
                    band_high=high,
                )
            )
    for order in range(1, n_random + 1):
        rows.append(example(KeyExample.Kind.RANDOM, order, max_coefficient * order / 100))
    made = KeyExample.objects.bulk_create(rows)
    by_kind: dict[str, list[KeyExample]] = {kind: [] for kind in KeyExample.Kind.values}
    for row in made:
        by_kind[row.kind].append(row)
    return by_kind


class SuggestionFactory(factory.django.DjangoModelFactory):
    """A machine suggestion for a key: a rule one unless ``method`` says otherwise;
    ``prefixes=[...]`` sets the prefixes it groups."""

    class Meta:
        model = Suggestion
        skip_postgeneration_save = True

    key = factory.SubFactory(KeyFactory)
    method = Suggestion.Method.RULE
    order = factory.Sequence(lambda n: n)
    description = factory.Sequence(lambda n: f"suggested pattern {n}")
    kind = Pattern.Kind.SHALLOW
    rule = factory.LazyAttribute(
        lambda s: {"type": "token", "value": "t1"} if s.method == Suggestion.Method.RULE else None
    )

    @factory.post_generation
    def prefixes(self, create, extracted, **kwargs):
        if create and extracted:
            self.prefixes.set(extracted)


class SuggestionDecisionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SuggestionDecision

    suggestion = factory.SubFactory(SuggestionFactory)
    annotator = factory.SubFactory(UserFactory)
    decision = SuggestionDecision.Decision.DISMISSED


class BatchFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Batch
        skip_postgeneration_save = True

    study = factory.SubFactory(StudyFactory)
    name = factory.Sequence(lambda n: f"batch-{n}")

    @factory.post_generation
    def keys(self, create, extracted, **kwargs):
        if create and extracted:
            self.keys.add(*extracted)


class AssignmentFactory(factory.django.DjangoModelFactory):
    """An assignment of the whole batch, unless ``keys=[...]`` names a subset."""

    class Meta:
        model = Assignment
        skip_postgeneration_save = True

    batch = factory.SubFactory(BatchFactory)
    annotator = factory.SubFactory(UserFactory)

    @factory.post_generation
    def keys(self, create, extracted, **kwargs):
        if not create:
            return
        keys = self.batch.keys.all() if extracted is None else extracted
        AssignmentKey.objects.bulk_create(
            [AssignmentKey(assignment=self, key=key) for key in keys], ignore_conflicts=True
        )


class AnnotationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Annotation

    key = factory.SubFactory(KeyFactory)
    annotator = factory.SubFactory(UserFactory)


class PatternFactory(factory.django.DjangoModelFactory):
    """A pattern; ``prefixes=[...]`` sets the covered prefixes (no rule is checked here:
    the services own the 3-prefix rule)."""

    class Meta:
        model = Pattern
        skip_postgeneration_save = True

    annotation = factory.SubFactory(AnnotationFactory)
    description = factory.Sequence(lambda n: f"pattern {n}")
    kind = Pattern.Kind.SHALLOW
    order = factory.Sequence(lambda n: n)

    @factory.post_generation
    def prefixes(self, create, extracted, **kwargs):
        if create and extracted:
            self.prefixes.set(extracted)


def key_with_prefixes(n_prefixes: int = 25, **kwargs) -> Key:
    """A key with prefixes of rank 1..n, coefficients decreasing with rank."""
    key = KeyFactory(**kwargs)
    TriggerPrefix.objects.bulk_create(
        [
            TriggerPrefix(
                key=key,
                rank=rank,
                coefficient=float(n_prefixes - rank + 1),
                text=f"prefix {rank} of {key}",
                trigger_token=f" t{rank}",
                trigger_token_id=rank,
                next_token=f" n{rank}",
                next_token_id=1000 + rank,
                suffix=" and the rest.",
                sentence=f"prefix {rank} of {key} and the rest.",
                sentence_index=rank,
                position=2,
            )
            for rank in range(1, n_prefixes + 1)
        ]
    )
    return key


def assigned_batch(annotators, n_keys: int = 1, n_prefixes: int = 25, **batch_kwargs):
    """A batch of ``n_keys`` keys (each with ``n_prefixes`` prefixes) of one study, given
    whole to every one of ``annotators``. Returns (batch, keys)."""
    study = batch_kwargs.pop("study", None) or StudyFactory()
    keys = [key_with_prefixes(n_prefixes, study=study) for _ in range(n_keys)]
    batch = BatchFactory(study=study, keys=keys, **batch_kwargs)
    for user in annotators:
        AssignmentFactory(batch=batch, annotator=user)
    return batch, keys


def annotate_key(key, annotator, patterns=(), status: str = "submitted") -> Annotation:
    """``annotator``'s annotation of ``key`` with ``patterns`` given as (kind, ranks) pairs;
    bulk, without the services (no version checks, no audit) — for report tests."""
    annotation = AnnotationFactory(key=key, annotator=annotator, status=status)
    by_rank = {p.rank: p for p in key.prefixes.all()}
    for order, (kind, ranks) in enumerate(patterns):
        PatternFactory(
            annotation=annotation,
            kind=kind,
            order=order,
            prefixes=[by_rank[rank] for rank in ranks],
        )
    return annotation
