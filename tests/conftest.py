"""Shared fixtures: the personas, and the rule for tests that need real services.

alice and bob annotate, cora is a curator (the ``curator`` group, not staff), carol is
the admin, mallory has an account and no role.

Tests that need PostgreSQL, Redis, a Celery worker process or Chromium skip with a line
that says why when the service is missing; with ``REQUIRE_SERVICES=1`` (CI) the same
situation is a failure, so nothing is skipped silently.
"""

from __future__ import annotations

import os
from typing import NoReturn, cast

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from rest_framework.test import APIClient

from annotate.permissions import ANNOTATOR_GROUP, CURATOR_GROUP
from tests.factories import UserFactory

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES", "") == "1"


def service_missing(reason: str) -> NoReturn:
    """Skip (locally) or fail (with REQUIRE_SERVICES=1) because a service is missing."""
    if REQUIRE_SERVICES:
        pytest.fail(f"REQUIRE_SERVICES=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _clear_cache():
    # The login throttle counts in the cache; every test starts from zero.
    cache.clear()
    yield
    cache.clear()


def _in_group(username: str, name: str) -> User:
    user = cast(User, UserFactory(username=username))
    group, _ = Group.objects.get_or_create(name=name)
    user.groups.add(group)
    return user


def _annotator(username: str) -> User:
    return _in_group(username, ANNOTATOR_GROUP)


def curator_user(username: str) -> User:
    """A curator: in the ``curator`` group, not staff."""
    return _in_group(username, CURATOR_GROUP)


@pytest.fixture
def alice(db):
    return _annotator("alice")


@pytest.fixture
def bob(db):
    return _annotator("bob")


@pytest.fixture
def cora(db):
    return curator_user("cora")


@pytest.fixture
def carol(db):
    return UserFactory(username="carol", is_staff=True, is_superuser=True)


@pytest.fixture
def mallory(db):
    return UserFactory(username="mallory")


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client
