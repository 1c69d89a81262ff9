"""The ``db_backend`` marker of tests/conftest.py: which tests ``make test-embedded``
reruns on SQLite and the file-system broker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test.utils import CaptureQueriesContext

from tests.conftest import backend_dependent


@dataclass
class _Item:
    """What the rule reads of a collected test."""

    nodeid: str
    fixturenames: list[str] = field(default_factory=list)
    function: Any = None
    markers: dict[str, Any] = field(default_factory=dict)

    def get_closest_marker(self, name: str):
        return self.markers.get(name)


def _plain():
    return 1


def _counting_helper():
    return CaptureQueriesContext


def _calls_the_helper():
    return _counting_helper()


def _sends(task):
    task.apply_async((1,))


def _nested():
    def inner(task):
        return task.delay(1)

    return inner


API = "tests/api/test_x.py::test_x"


def test_an_api_test_of_plain_orm_use_is_not_backend_dependent():
    assert not backend_dependent(_Item(API, ["db", "alice"], _plain))


def test_a_test_that_reaches_neither_the_database_nor_the_broker_is_not():
    assert not backend_dependent(_Item("tests/reports/test_x.py::test_x", [], _plain))


@pytest.mark.parametrize(
    "item",
    [
        _Item("tests/reports/test_x.py::test_x", ["db"], _plain),
        _Item("tests/unit/annotate/test_x.py::test_x", ["db"], _plain),
        _Item("tests/mining/test_x.py::test_x", ["db"], _plain),
        _Item("tests/api/test_schema_fuzz.py::test_x", ["db"], _plain),
        _Item(API, ["transactional_db"], _plain),
        _Item(API, [], _plain, {"django_db": pytest.mark.django_db(transaction=True).mark}),
        _Item(API, ["db", "django_assert_num_queries"], _plain),
        _Item(API, ["db"], _calls_the_helper),
        _Item(API, ["db"], _nested),
        _Item("tests/unit/test_x.py::test_x", [], _sends),
        _Item(API, ["start_worker"], _plain),
        _Item("tests/integration/test_x.py::test_x", [], _plain),
        _Item("tests/e2e/test_x.py::test_x", [], _plain),
    ],
    ids=[
        "reports",
        "annotate services",
        "mining",
        "schema fuzz",
        "transactional_db",
        "transaction=True",
        "query count",
        "query capture in a helper",
        "a task sent in a nested function",
        "a task sent without the database",
        "a worker",
        "integration",
        "e2e",
    ],
)
def test_a_test_whose_outcome_the_backend_may_change_is_backend_dependent(item):
    assert backend_dependent(item)


def test_the_marker_is_set_at_collection(request):
    # This test reaches neither the database nor the broker.
    assert request.node.get_closest_marker("db_backend") is None
