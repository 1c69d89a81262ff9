"""The OpenAPI schema, fuzzed (docs/reliability.md): whatever a client sends to any
operation, the answer is no 5xx and is what the schema documents.

How. schemathesis reads the committed schema (frontend/src/api/openapi.yaml, the one the
frontend's types come from; ``make check-schema`` keeps it current) and generates
requests for every operation: valid ones and invalid ones (its positive and negative
modes, and its coverage phase's boundary values). Each is sent in-process to Django's
WSGI handler, the one config/wsgi.py serves (built here with get_wsgi_application, since
importing config.wsgi would gc.freeze() the test process), with the real middleware and
authentication: a session cookie of the persona's (made afresh for every request, so a
fuzzed logout ends only its own session) and a CSRF cookie with its X-CSRFToken header.

Who. Every operation is fuzzed as alice (an annotator with an assignment), as carol (the
admin) and anonymously.

What. ``_aim`` points requests at objects that exist, so that the fuzz gets past the 404s:
path ids are drawn from the world's ids (alice's keys and pattern, bob's key, the
assignments, the study, batches, export jobs, a mining run, the users) or left as
generated; so are a few query and body fields (report filters, prefix ranks, user
references), and a write's ``version`` may be the annotation's current one. schemathesis
only generates text that UTF-8 can encode; valid JSON can also escape what no database
column stores, a NUL or a lone surrogate, so string fields of JSON bodies may be swapped
for one (``HOSTILE``).

Not one operation is left out. The two that queue work (starting a mining run, an export
job) run with the task's ``.delay`` mocked, as tests/api/test_mining_runs.py does: the
answer does not wait on a worker and needs no broker, and the 503 of an unreachable
broker has its own tests.

Checks: not_a_server_error, status_code_conformance, content_type_conformance,
response_schema_conformance, response_headers_conformance, unsupported_method, and our
own every_error_has_a_code (each 4xx and 5xx is JSON with a ``detail`` and a known
``code``, also where the schema documents the answer as any object). Left out:
- negative_data_rejection: DRF coerces on purpose (1 or "true" for a boolean, "1" for an
  integer, an empty query value is no filter), so some requests the schema calls invalid
  are answered 200;
- positive_data_acceptance: a request the schema allows still meets the domain's rules
  (an unknown id is 404, a stale version 409, a pattern of two prefixes 400);
- use_after_free, ensure_resource_availability and the stateful phase: they follow
  links between operations, which the schema does not declare;
- ignored_auth: the anonymous and alice runs are the auth check, with the 403s
  documented; tests/api/test_permissions.py asserts them;
- max_response_time: timings belong in bench/.

Bounded and reproducible: ``EXAMPLES`` requests per operation and persona at most
(``FFKV_FUZZ_EXAMPLES`` raises it for a longer local hunt), derandomized with a fixed
seed, no example database.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from django.test import Client, override_settings
from django.utils.crypto import get_random_string
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from annotate.api_errors import ErrorCode
from annotate.models import Annotation, Assignment, GoldAnnotation, Pattern
from annotate.services.gold import gold_pattern_create
from mining.models import MiningRun
from reports.models import ExportJob
from reports.tasks import export_study
from tests.conftest import annotator_user, client_for
from tests.factories import UserFactory, assigned_batch

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]

SCHEMA_PATH = Path(django_settings.BASE_DIR) / "frontend" / "src" / "api" / "openapi.yaml"
EXAMPLES = int(os.environ.get("FFKV_FUZZ_EXAMPLES", "30"))
SEED = 20260611
# Valid JSON escapes of what no database column stores (see the module docstring).
HOSTILE = ["\x00", "a\x00b", "\ud800", "x\udfff"]

schema = schemathesis.openapi.from_path(
    str(SCHEMA_PATH),
    config=schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {
                "deterministic": True,
                "database": "none",
                # The persona's real session cookie is set by the test, not generated.
                "with-security-parameters": False,
            },
            "phases": {"stateful": {"enabled": False}},
        }
    ),
)


def every_error_has_a_code(ctx: Any, response: schemathesis.Response, case: Any) -> None:
    """Every error answer is ``{"detail", "code", ...}`` with a code the SPA translates
    (annotate/api_errors.py)."""
    if response.status_code < 400:
        return
    body = json.loads(response.content)
    assert isinstance(body, dict), body
    assert isinstance(body.get("detail"), str) and body["detail"], body
    assert body.get("code") in set(ErrorCode), body


CHECKS = [
    every_error_has_a_code,
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    unsupported_method,
]


@dataclass
class World:
    """Values that name existing objects, by parameter name and where they go."""

    path: dict[str, list[Any]]
    query: dict[str, list[Any]]
    body: dict[str, list[Any]]


@dataclass
class Personas:
    alice: Any
    bob: Any
    carol: Any
    mallory: Any


def _build_world(people: Personas) -> World:
    alice, bob, carol, mallory = people.alice, people.bob, people.carol, people.mallory
    batch, keys = assigned_batch([alice, bob], n_keys=2, n_prefixes=25)
    bobs_batch, bobs_keys = assigned_batch([bob], n_keys=1, n_prefixes=5, study=batch.study)
    client = client_for(alice)
    version = client.get(f"/api/keys/{keys[0].pk}/").json()["annotation"]["version"]
    state = client.post(
        f"/api/keys/{keys[0].pk}/patterns/",
        {
            "description": "numbers",
            "kind": "shallow",
            "prefix_ranks": [1, 2, 3],
            "version": version,
        },
        format="json",
    ).json()
    # A gold annotation (the curator's) with a pattern adopted from alice's.
    gold = gold_pattern_create(
        key=keys[0],
        actor=carol,
        version=0,
        description="curated",
        kind="semantic",
        prefixes=list(keys[0].prefixes.order_by("rank")[:3]),
        source_pattern=Pattern.objects.get(pk=state["patterns"][0]["id"]),
    )
    queued = ExportJob.objects.create(study=batch.study, format="csv")
    done = ExportJob.objects.create(study=batch.study, format="jsonl")
    export_study(done.pk)
    run = MiningRun.objects.create(study_name="mined", params={"model": "m", "corpus": "c"})
    assignments = list(Assignment.objects.values_list("pk", flat=True))
    return World(
        path={
            "key_id": [key.pk for key in [*keys, *bobs_keys]],
            "pattern_id": [pattern["id"] for pattern in state["patterns"]] + [gold.pattern.pk],
            "assignment_id": assignments,
            "study_id": [batch.study.pk],
            "batch_id": [batch.pk, bobs_batch.pk],
            "job_id": [queued.pk, done.pk],
            "run_id": [run.pk],
            "user_id": [user.pk for user in (alice, bob, carol, mallory)],
        },
        query={
            "annotators": ["alice", "bob,alice", "carol"],
            "layers": ["1", "1,2"],
            "assignment": assignments,
            "layer": ["1", "2"],
            "batch": [batch.pk, bobs_batch.pk],
        },
        body={
            "prefix_ranks": [[1, 2, 3], [4, 5, 6, 7], [1, 1, 2], [24, 25, 26]],
            "annotators": [["alice", "bob"], [alice.pk], ["alice", "mallory"]],
            "reassign_to": ["bob", bob.pk, "alice", carol.pk],
        },
    )


@pytest.fixture(scope="module")
def _module_world(django_db_setup, django_db_blocker, tmp_path_factory):
    """The personas and their world, made once for the module inside a transaction that
    is rolled back at its end, as Django's ``TestCase.setUpTestData`` does: each test runs
    in a savepoint of it (the ``django_db`` mark), so every test still starts from the
    same world, and the writes of one example are the state of the next within a test."""
    data_dir = tmp_path_factory.mktemp("fuzz-data")  # the done export job's file
    with django_db_blocker.unblock(), override_settings(DATA_DIR=data_dir):
        outer = transaction.atomic()
        outer.__enter__()
        try:
            people = Personas(
                alice=annotator_user("alice"),
                bob=annotator_user("bob"),
                carol=UserFactory(username="carol", is_staff=True, is_superuser=True),
                mallory=UserFactory(username="mallory"),
            )
            yield people, _build_world(people), data_dir
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


# The module's personas are the world's (tests/conftest.py's would be made again per test).
@pytest.fixture
def alice(_module_world):
    return _module_world[0].alice


@pytest.fixture
def carol(_module_world):
    return _module_world[0].carol


@pytest.fixture
def world(_module_world, settings) -> World:
    settings.DATA_DIR = _module_world[2]
    return _module_world[1]


@pytest.fixture
def wsgi_app() -> Iterator[Any]:
    # Django closes the connection when a request ends; inside the test's transaction that
    # would lose the world. Django's own test client disconnects the same two receivers.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        with (
            mock.patch("mining.tasks.prepare_run.delay"),
            mock.patch("reports.tasks.export_study.delay"),
        ):
            yield get_wsgi_application()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture(params=["alice", "carol", "anonymous"])
def persona(request):
    return None if request.param == "anonymous" else request.getfixturevalue(request.param)


def _call(case, persona, app) -> schemathesis.Response:
    """Send ``case`` as ``persona`` (None: anonymous), signed in and with a CSRF token."""
    token = get_random_string(32)
    cookies = {django_settings.CSRF_COOKIE_NAME: token}
    if persona is not None:
        client = Client()
        client.force_login(persona)
        session = client.cookies[django_settings.SESSION_COOKIE_NAME].value
        cookies[django_settings.SESSION_COOKIE_NAME] = session
    return case.call(app=app, cookies=cookies, headers={"X-CSRFToken": token})


def _aim(case, data, world: World, persona) -> None:
    """Point ``case`` at existing objects, some of the time (see the module docstring)."""

    def pick(label: str, known: list[Any], generated: Any) -> Any:
        return data.draw(st.sampled_from([*known, generated]), label=label)

    for location, known in (
        (case.path_parameters, world.path),
        (case.query, world.query),
        (case.body if isinstance(case.body, dict) else None, world.body),
    ):
        for name, value in list((location or {}).items()):
            if name in known:
                location[name] = pick(name, known[name], value)
    if isinstance(case.body, dict) and case.media_type == "application/json":
        # A quarter of the JSON bodies get one hostile string: in a field, or first in a list.
        spoilable = sorted(
            name
            for name, value in case.body.items()
            if isinstance(value, str) or (isinstance(value, list) and value)
        )
        if spoilable and data.draw(st.integers(0, 3), label="hostile") == 0:
            name = data.draw(st.sampled_from(spoilable), label="hostile field")
            hostile = data.draw(st.sampled_from(HOSTILE), label="hostile string")
            value = case.body[name]
            case.body[name] = hostile if isinstance(value, str) else [hostile, *value[1:]]
    key_id = (case.path_parameters or {}).get("key_id")
    if persona is None or type(key_id) is not int or not 0 < key_id < 2**63:
        return
    if "/review/" in case.path:
        # The gold's version (0 while the key has none), for the curator's writes.
        gold = GoldAnnotation.objects.filter(key_id=key_id).values_list("version", flat=True)
        version = gold.first() or 0
    else:
        version = (
            Annotation.objects.filter(key_id=key_id, annotator=persona)
            .values_list("version", flat=True)
            .first()
        )
    if version is None:
        return
    for location in (case.body if isinstance(case.body, dict) else None, case.query):
        if location and "version" in location:
            location["version"] = pick("version", [version], location["version"])


@schema.given(data=st.data())
@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    # The world is made once per module and rolled back to after each operation and
    # persona; within one, the writes of one example are the state of the next: that is
    # the point, not an accident of fixture scope.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_request_gets_a_server_error_or_an_undocumented_answer(
    case, data, world, persona, wsgi_app
):
    _aim(case, data, world, persona)
    response = _call(case, persona, wsgi_app)
    case.validate_response(response, checks=CHECKS)


def test_the_fuzz_signs_each_persona_in_and_passes_the_csrf_check(world, wsgi_app, alice, carol):
    # If the cookies stopped working, every fuzzed request would be a 403 and pass.
    me = schema["/api/auth/me/"]["GET"]
    assert _call(me.Case(), None, wsgi_app).status_code == 403
    assert _call(me.Case(), carol, wsgi_app).json()["username"] == "carol"
    save = schema["/api/keys/{key_id}/annotation/"]["PUT"]
    key_id = world.path["key_id"][0]
    before = Annotation.objects.get(key_id=key_id, annotator=alice)
    # The world as made, whatever the tests before this one wrote (each is rolled back).
    assert (before.note, before.status) == ("", "draft"), (before.note, before.status)
    version = before.version
    case = save.Case(
        path_parameters={"key_id": key_id},
        body={"note": "fuzzed", "version": version},
        media_type="application/json",
    )
    response = _call(case, alice, wsgi_app)
    assert response.status_code == 200, response.content
    assert Annotation.objects.get(key_id=key_id, annotator=alice).note == "fuzzed"
