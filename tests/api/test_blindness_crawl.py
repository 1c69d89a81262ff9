"""An annotator works blind (docs/evidence.md, "In the API"): a crawl of every endpoint
an annotator can reach finds nothing of what they must not see.

The routes are read from the URL resolver, so an endpoint added later is crawled too.
Each route is called with every method its view has and with every id of the seeded
world that fits its parameters (the annotator's own, another annotator's, gold's), and
the annotator's writes are also made for real with valid bodies. No answer may carry a
key's held-out examples, another annotator's work or decisions, anything of gold, the
check-key marker, or (while the study does not show them) any score. With the study's
``show_scores`` on, the annotator's own scores do appear, and still nothing else.

alice annotates and is the crawler; bob annotates the same keys; cora curates.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from annotate.models import (
    AssignmentKey,
    GoldAnnotation,
    GoldPattern,
    KeyFlag,
    Pattern,
    Suggestion,
    SuggestionDecision,
)
from annotate.services.annotations import annotation_get_or_create_for
from annotate.services.patterns import pattern_create
from tests.conftest import client_for
from tests.factories import (
    SuggestionFactory,
    annotate_key,
    assigned_batch,
    key_examples,
    key_with_prefixes,
)

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")
# Distinct values whose decimal form appears nowhere else in the world.
ALICE_SCORES = {"detection": 0.8125, "embedding": 0.7109375}
BOB_SCORES = {"detection": 0.3046875, "embedding": 0.2890625, "shuffled_detection": 0.4609375}
GOLD_SCORES = {"detection": 0.1796875, "shuffled_embedding": 0.0546875}
SUGGESTION_SCORES = {"detection": 0.6171875, "embedding": 0.6484375}
LLM_DESCRIPTION = "llm-description-withheld-until-submitted"

# Sample paths for the regex routes (the rest are path() routes, filled in from their
# parameters). A new regex route fails the crawl until it is given one here.
REGEX_SAMPLES = {
    "^api/": ["/api/no-such-endpoint/"],
    "^(?!static/|admin(?:/|$)).*$": ["/", "/keys/1", "/review"],
}
# Writes the generic pass leaves out: logging out would end the crawl's own session.
NOT_CALLED = {("auth-logout", "post")}
# The API's description (staff only in production): the same for every caller and with
# nothing of the database in it, though it names every role's fields ("is_check").
DESCRIBES_THE_API = {"schema", "api-docs"}


@dataclass
class World:
    study: object
    shared: object  # a key of alice and bob, with gold, examples and suggestions
    check: object  # a check key: gold marked as a check, served to alice unannounced
    bobs: object  # a key only bob has
    alices_pattern: Pattern
    ids: dict[str, list[int]]
    forbidden: list[str]  # never in an answer to alice
    scores: list[str]  # never while the study does not show scores
    decisions: list[str] = field(default_factory=lambda: ['"accepted"', '"dismissed"'])


def _floats(scores: dict[str, float]) -> list[str]:
    return [repr(value) for value in scores.values()]


@pytest.fixture
def world(alice, bob, cora) -> World:
    batch, (shared, check) = assigned_batch([alice, bob], n_keys=2, name="both")
    study = batch.study
    _, (bobs,) = assigned_batch([bob], study=study, name="bob's")
    free = key_with_prefixes(25, study=study)
    AssignmentKey.objects.filter(assignment__annotator=alice, key=check).update(is_check=True)
    AssignmentKey.objects.filter(assignment__annotator=bob, key=check).delete()
    examples = {key.pk: key_examples(key) for key in (shared, check, bobs)}

    prefixes = list(shared.prefixes.order_by("rank"))
    annotation = annotation_get_or_create_for(key=shared, annotator=alice)
    mine = pattern_create(
        annotation=annotation,
        actor=alice,
        description="alice's own pattern",
        kind="shallow",
        prefixes=prefixes[:3],
        version=annotation.version,
        rule={"type": "token", "value": "t1"},
    ).pattern
    Pattern.objects.filter(pk=mine.pk).update(scores=ALICE_SCORES)

    bobs_work = annotate_key(shared, bob, [("shallow", [1, 2, 3])])
    bobs_work.note = "bob-note-secret"
    bobs_work.save()
    bobs_work.patterns.update(description="bob-pattern-secret", scores=BOB_SCORES)
    annotate_key(bobs, bob, [("semantic", [4, 5, 6])]).patterns.update(
        description="bob-other-key-secret"
    )
    KeyFlag.objects.create(key=shared, annotator=bob, reason="other", note="bob-flag-secret")

    gold_patterns = []
    for key, marker in ((shared, "gold"), (check, "check-gold")):
        gold = GoldAnnotation.objects.create(
            key=key,
            curator=cora,
            status=GoldAnnotation.Status.SUBMITTED,
            note=f"{marker}-note-secret",
            is_check=key is check,
        )
        gold_pattern = GoldPattern.objects.create(
            gold=gold,
            description=f"{marker}-pattern-secret",
            kind="shallow",
            rule={"type": "suffix", "value": "gold-rule-secret"},
            scores=GOLD_SCORES,
        )
        gold_pattern.prefixes.set(list(key.prefixes.order_by("rank")[:3]))
        gold_patterns.append(gold_pattern)

    rule = SuggestionFactory(
        key=shared, rule={"type": "token", "value": "t2"}, prefixes=prefixes[:3]
    )
    cluster = SuggestionFactory(
        key=shared, method=Suggestion.Method.CLUSTER, description="", prefixes=prefixes[3:6]
    )
    llm = SuggestionFactory(
        key=shared,
        method=Suggestion.Method.LLM,
        kind="semantic",
        description=LLM_DESCRIPTION,
        prefixes=prefixes[6:9],
    )
    Suggestion.objects.update(scores=SUGGESTION_SCORES)
    accepted = _bobs_accepted(bobs_work, prefixes[:3], "bob-accepted-suggestion-secret")
    SuggestionDecision.objects.create(
        suggestion=rule, annotator=bob, decision="accepted", pattern=accepted
    )
    SuggestionDecision.objects.create(suggestion=cluster, annotator=bob, decision="dismissed")

    held_out = [
        text
        for sets in examples.values()
        for kind in ("heldout", "heldout_random")
        for example in sets[kind]
        for text in (example.text, example.sentence)
    ]
    bob_patterns = list(
        Pattern.objects.filter(annotation__annotator=bob).values_list("pk", flat=True)
    )
    return World(
        study=study,
        shared=shared,
        check=check,
        bobs=bobs,
        alices_pattern=mine,
        ids={
            "key_id": [shared.pk, check.pk, bobs.pk, free.pk],
            "pattern_id": [mine.pk, *bob_patterns, *(p.pk for p in gold_patterns)],
            "assignment_id": list(batch.assignments.values_list("pk", flat=True).order_by("pk"))
            + list(AssignmentKey.objects.filter(key=bobs).values_list("assignment_id", flat=True)),
            "study_id": [study.pk],
            "suggestion_id": [rule.pk, cluster.pk, llm.pk],
            "user_id": [alice.pk, bob.pk, cora.pk],
            "batch_id": [batch.pk],
        },
        forbidden=[
            *held_out,
            "bob-note-secret",
            "bob-pattern-secret",
            "bob-other-key-secret",
            "bob-flag-secret",
            "bob-accepted-suggestion-secret",
            "gold-note-secret",
            "gold-pattern-secret",
            "check-gold-note-secret",
            "check-gold-pattern-secret",
            "gold-rule-secret",
            "is_check",
            '"heldout"',
            '"heldout_random"',
            *_floats(BOB_SCORES),
            *_floats(GOLD_SCORES),
        ],
        scores=[
            *_floats(ALICE_SCORES),
            *_floats(SUGGESTION_SCORES),
            '"detection"',
            '"embedding"',
            '"shuffled_detection"',
            '"shuffled_embedding"',
        ],
    )


def _bobs_accepted(annotation, prefixes, description: str) -> Pattern:
    """bob's pattern made from a suggestion he accepted."""
    pattern = Pattern.objects.create(
        annotation=annotation,
        description=description,
        kind="shallow",
        order=99,
        source=Pattern.Source.SUGGESTION,
        scores=BOB_SCORES,
    )
    pattern.prefixes.set(prefixes)
    return pattern


# --- the routes -------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    name: str
    route: str  # as written: "api/keys/<int:key_id>/", or a regex
    methods: tuple[str, ...]
    is_regex: bool


def _routes(patterns=None, prefix: str = "", regex: bool = False) -> Iterator[Route]:
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        pattern = entry.pattern
        is_regex = regex or type(pattern).__name__ == "RegexPattern"
        if isinstance(entry, URLResolver):
            if entry.app_name == "admin":
                continue  # Django's admin site: staff only (see the test below)
            yield from _routes(entry.url_patterns, prefix + str(pattern), is_regex)
            continue
        assert isinstance(entry, URLPattern)
        view = getattr(entry.callback, "view_class", None)
        methods = ("get",) if view is None else tuple(m for m in METHODS if hasattr(view, m))
        yield Route(entry.name or str(pattern), prefix + str(pattern), methods, is_regex)


def _paths(route: Route, ids: dict[str, list[int]]) -> list[str]:
    """Every path of ``route`` with the world's ids in its parameters."""
    if route.is_regex:
        assert route.route in REGEX_SAMPLES, f"give the crawl a sample path for {route.route}"
        return REGEX_SAMPLES[route.route]
    names = re.findall(r"<(?:\w+:)?(\w+)>", route.route)
    every = sorted({i for values in ids.values() for i in values})
    choices = [ids.get(name, every) for name in names]
    paths = []
    for combo in itertools.product(*choices):
        path = route.route
        for value in combo:
            path = re.sub(r"<(?:\w+:)?\w+>", str(value), path, count=1)
        paths.append("/" + path)
    return paths


@dataclass
class Crawl:
    bodies: list[tuple[str, str, int, str]] = field(default_factory=list)
    reachable: set[tuple[str, str]] = field(default_factory=set)  # (route name, method)

    def record(self, name: str, method: str, path: str, response) -> None:
        body = b"".join(response) if getattr(response, "streaming", False) else response.content
        self.bodies.append((method, path, response.status_code, body.decode("utf-8", "replace")))
        if response.status_code not in (401, 403, 405):
            self.reachable.add((name, method))

    def find(self, needle: str) -> list[str]:
        return [
            f"{method.upper()} {path} ({status})"
            for method, path, status, body in self.bodies
            if needle in body
        ]


def _crawl_reads(client, world: World, crawl: Crawl) -> None:
    for route in _routes():
        if "get" not in route.methods or route.name in DESCRIBES_THE_API:
            continue
        for path in _paths(route, world.ids):
            crawl.record(route.name, "get", path, client.get(path))


def _crawl_refused_writes(client, world: World, crawl: Crawl) -> None:
    """Every write of every route with bodies that a view refuses or answers with the
    current state (a 400, a 404, a 409 with ``current``)."""
    for route in _routes():
        for method in route.methods:
            if method == "get" or (route.name, method) in NOT_CALLED:
                continue
            for path in _paths(route, world.ids):
                for body in ({}, {"version": 999_999}):
                    target = path + ("?version=999999" if method == "delete" and body else "")
                    response = getattr(client, method)(target, body, format="json")
                    crawl.record(route.name, method, target, response)


def _version(client, key) -> int:
    return client.get(f"/api/keys/{key.pk}/annotation/").json()["version"]


def _make_writes(client, world: World, crawl: Crawl) -> set[tuple[str, str]]:
    """The annotator's writes made for real, with valid bodies; the (route, method)
    pairs they exercised."""
    key = world.shared
    base = f"/api/keys/{key.pk}"
    done: set[tuple[str, str]] = set()

    def call(name: str, method: str, path: str, body=None):
        response = getattr(client, method)(path, body, format="json")
        assert response.status_code in (200, 201, 204), (name, path, response.content)
        crawl.record(name, method, path, response)
        done.add((name, method))
        return response

    call(
        "annotation", "put", f"{base}/annotation/", {"note": "n", "version": _version(client, key)}
    )
    call("key-flag", "put", f"{base}/flag/", {"reason": "other", "note": "mine"})
    call("key-flag", "delete", f"{base}/flag/")
    made = call(
        "pattern-create",
        "post",
        f"{base}/patterns/",
        {
            "description": "another of alice's",
            "kind": "shallow+semantic",
            "prefix_ranks": [4, 5, 6],
            "version": _version(client, key),
            "rule": {"type": "ngram", "value": "of"},
        },
    ).json()
    new_id = max(p["id"] for p in made["patterns"])
    call(
        "pattern-detail",
        "patch",
        f"{base}/patterns/{new_id}/",
        {"description": "changed", "version": made["version"]},
    )
    call(
        "pattern-detail",
        "delete",
        f"{base}/patterns/{new_id}/?version={_version(client, key)}",
    )
    rule, cluster, _ = world.ids["suggestion_id"]
    call(
        "suggestion-accept",
        "post",
        f"{base}/suggestions/{rule}/accept/",
        {"version": _version(client, key), "client_id": str(uuid.uuid4())},
    )
    call("suggestion-dismiss", "post", f"{base}/suggestions/{cluster}/dismiss/")
    call("annotation-submit", "post", f"{base}/submit/", {"version": _version(client, key)})
    call("annotation-reopen", "post", f"{base}/reopen/", {"version": _version(client, key)})
    # The check key, as any key.
    check = world.check
    call(
        "pattern-create",
        "post",
        f"/api/keys/{check.pk}/patterns/",
        {
            "description": "on the check key",
            "kind": "shallow",
            "prefix_ranks": [1, 2, 3],
            "version": _version(client, check),
        },
    )
    call(
        "annotation-submit",
        "post",
        f"/api/keys/{check.pk}/submit/",
        {"version": _version(client, check)},
    )
    return done


# Writes an annotator may call that no valid body exercises here: signing in and out,
# checking a password link and setting a password (no data of a key), acknowledging
# guidelines (the study has none).
NOT_MADE = {
    ("auth-login", "post"),
    ("auth-logout", "post"),
    ("auth-password-link", "post"),
    ("auth-set-password", "post"),
    ("study-guidelines-acknowledge", "post"),
}


def _assert_absent(crawl: Crawl, needles: list[str], what: str) -> None:
    found = {needle: crawl.find(needle)[:3] for needle in needles if crawl.find(needle)}
    assert not found, f"{what} in answers to an annotator: {found}"


def test_no_annotator_answer_carries_held_out_examples_others_work_gold_or_scores(alice, world):
    client = client_for(alice)
    crawl = Crawl()
    _crawl_reads(client, world, crawl)
    _assert_absent(crawl, world.forbidden, "forbidden text")
    _assert_absent(crawl, world.scores, "a score")
    _assert_absent(crawl, world.decisions, "another annotator's decision")
    _assert_absent(crawl, [LLM_DESCRIPTION], "the LLM's suggestion before submitting")
    assert {"key-detail", "annotation", "suggestion-list"} <= {n for n, _ in crawl.reachable}
    # The crawl reached the annotator's screens, with data in them.
    detail = client.get(f"/api/keys/{world.shared.pk}/").json()
    assert len(detail["samples"]) == 50 and detail["annotation"]["patterns"]
    assert crawl.find("band example 1 of") and crawl.find("alice's own pattern")
    assert crawl.find("suggested pattern")  # the suggestions route was crawled

    _crawl_refused_writes(client, world, crawl)
    made = _make_writes(client, world, crawl)
    _assert_absent(crawl, world.forbidden, "forbidden text")
    _assert_absent(crawl, world.scores, "a score")
    unexercised = {
        (name, method)
        for name, method in crawl.reachable
        if method != "get" and (name, method) not in made | NOT_MADE
    }
    assert not unexercised, f"give the crawl a valid write for {sorted(unexercised)}"


def test_with_scores_shown_an_annotator_sees_their_own_scores_and_nothing_else(alice, world):
    world.study.show_scores = True
    world.study.save()
    client = client_for(alice)
    crawl = Crawl()
    _crawl_reads(client, world, crawl)
    for value in _floats(ALICE_SCORES):
        assert crawl.find(value), f"alice's own score {value} is not shown"
    assert any(path == f"/api/keys/{world.shared.pk}/" for _, path, _, _ in crawl.bodies)
    _assert_absent(crawl, world.forbidden, "forbidden text")


def test_the_crawl_would_see_a_leak(alice, world):
    """The crawl's own check: a held-out sentence copied into a visible sample is found."""
    from annotate.models import KeyExample

    heldout = KeyExample.objects.filter(key=world.shared, kind="heldout").first()
    KeyExample.objects.filter(key=world.shared, kind="band", order=1).update(text=heldout.text)
    crawl = Crawl()
    _crawl_reads(client_for(alice), world, crawl)
    assert crawl.find(heldout.text)


def test_djangos_admin_site_is_closed_to_an_annotator(alice):
    response = client_for(alice).get("/admin/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
