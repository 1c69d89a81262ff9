"""factory_boy factories for the domain."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from annotate.models import Annotation, Assignment, Batch, Key, Study, TriggerPrefix

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
    class Meta:
        model = Assignment

    batch = factory.SubFactory(BatchFactory)
    annotator = factory.SubFactory(UserFactory)


class AnnotationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Annotation

    key = factory.SubFactory(KeyFactory)
    annotator = factory.SubFactory(UserFactory)
