"""Shared fixtures: the personas, and the rule for tests that need real services.

alice and bob annotate, cora is a curator (the ``curator`` group, not staff), carol is
the admin, mallory has an account and no role.

Tests that need PostgreSQL, Redis, a Celery worker process or Chromium skip with a line
that says why when the service is missing; with ``REQUIRE_SERVICES=1`` (CI) the same
situation is a failure, so nothing is skipped silently.

The ``db_backend`` marker (set here, at collection) picks the tests whose outcome may
depend on which database or broker runs under them; ``make test-embedded`` reruns those
on the embedded set-up (SQLite, the file-system broker) after ``make test`` has run
everything on PostgreSQL and Redis. A test is ``db_backend`` when it reaches the database
or the broker and one of these holds:

1. it tests the SQL itself: it lives in tests/unit/annotate (services and selectors,
   constraints, migrations, text limits, which SQLite does not enforce), tests/reports
   (the report's aggregates, bulk imports and exports, JSON fields), tests/mining (the
   loader's bulk inserts, runs and shards, tasks sent on the broker), or in one of
   ``BACKEND_MODULES`` below;
2. it commits (``transactional_db``, ``django_db(transaction=True)``): locking, on-commit
   callbacks, concurrent connections;
3. it counts or captures queries (``CaptureQueriesContext``, ``django_assert_num_queries``):
   a count depends on the backend's batch sizes and savepoints;
4. it sends tasks or runs on-commit callbacks (``delay``, ``apply_async``,
   ``django_capture_on_commit_callbacks``), or starts a worker or a service (the fixtures
   of tests/integration);
5. it is an integration or an e2e test (real services; make test-embedded leaves them out).

Everything else in tests/api checks the HTTP layer (permissions, validation, error codes,
serialization) over services whose SQL rule 1 covers, and a test that reaches neither the
database nor the broker cannot depend on them. Rules 3 and 4 read the names the test's
code (its nested functions, and the module's helpers it calls) refers to.
"""

from __future__ import annotations

import os
import types
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


# Rule 1 of the docstring: where the SQL is what is tested.
BACKEND_PATHS = ("tests/unit/annotate/", "tests/reports/", "tests/mining/")
BACKEND_MODULES = {
    # Generated input of every kind reaches the database (NUL bytes, long and odd text).
    "tests/api/test_schema_fuzz.py",
    # Mining runs' tasks, sent on the broker.
    "tests/api/test_mining_runs.py",
    "tests/api/test_preparing.py",
}
DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "live_server"}
# Rules 2 and 4 by fixture.
BACKEND_FIXTURES = {
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
    "live_server",
    "django_assert_num_queries",
    "django_assert_max_num_queries",
    "django_capture_on_commit_callbacks",
    "postgres",
    "redis_broker",
    "start_worker",
    "private_redis",
}
# Rules 3 and 4 by the names the test's code refers to.
BACKEND_NAMES = {
    "CaptureQueriesContext",
    "assertNumQueries",
    "captureOnCommitCallbacks",
    "delay",
    "apply_async",
    "send_task",
}


def _names(function: types.FunctionType) -> set[str]:
    """The global and attribute names ``function``'s code refers to, its nested functions'
    and those of the module's own functions it calls."""
    names: set[str] = set()
    seen: set[types.CodeType] = set()
    stack = [function.__code__]
    while stack:
        code = stack.pop()
        if code in seen:
            continue
        seen.add(code)
        names.update(code.co_names)
        stack.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
        for name in code.co_names:
            helper = function.__globals__.get(name)
            if isinstance(helper, types.FunctionType) and helper.__module__ == function.__module__:
                stack.append(helper.__code__)
    return names


def backend_dependent(item: pytest.Item) -> bool:
    """The docstring's rule for ``db_backend``."""
    path = item.nodeid.split("::", 1)[0]
    if path.startswith(("tests/integration/", "tests/e2e/")):
        return True
    fixtures = set(getattr(item, "fixturenames", ()))
    django_db = item.get_closest_marker("django_db")
    if django_db is not None and django_db.kwargs.get("transaction"):
        return True
    if fixtures & BACKEND_FIXTURES:
        return True
    function = getattr(item, "function", None)
    if isinstance(function, types.FunctionType) and _names(function) & BACKEND_NAMES:
        return True
    if django_db is None and not fixtures & DATABASE_FIXTURES:
        return False  # it reaches neither the database nor the broker
    return path.startswith(BACKEND_PATHS) or path in BACKEND_MODULES


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if backend_dependent(item):
            item.add_marker(pytest.mark.db_backend)


# The tests that load builtin:smollm2-135m run in one pytest process (make test's
# ``--dist loadgroup``) and share one load: reading and dequantizing its GGUF file takes
# about 40 s of CPU each time.
SMOLLM2_GROUP = pytest.mark.xdist_group("smollm2")


@pytest.fixture(scope="session")
def _smollm2_loaded():
    from mining.core import load_model

    return load_model("builtin:smollm2-135m")


@pytest.fixture
def smollm2(_smollm2_loaded, monkeypatch):
    """builtin:smollm2-135m, loaded once per test process, and the model the worker's
    model cache (``mining.services``) gives for it during the test, so that mining in
    this process (the demo's) reuses it. The cache alone (two entries) lost it to the
    tiny models that other tests in the same process mine, and the demo loaded it again.
    Sound because no test changes the loaded model."""
    from mining import services

    cached = services._cached_model

    def cached_model(name: str, device: str, dtype: str):
        if (name, device, dtype) == ("builtin:smollm2-135m", "cpu", "float32"):
            return _smollm2_loaded
        return cached(name, device, dtype)

    monkeypatch.setattr(services, "_cached_model", cached_model)
    return _smollm2_loaded


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


def annotator_user(username: str) -> User:
    """An annotator: in the ``annotator`` group."""
    return _in_group(username, ANNOTATOR_GROUP)


def curator_user(username: str) -> User:
    """A curator: in the ``curator`` group, not staff."""
    return _in_group(username, CURATOR_GROUP)


@pytest.fixture
def alice(db):
    return annotator_user("alice")


@pytest.fixture
def bob(db):
    return annotator_user("bob")


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
