"""The admin's screens under /manage (not /admin/, which is Django's own admin)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, Assignment, AssignmentKey, Batch
from annotate.services.annotations import annotation_get_or_create_for, annotation_save
from annotate.services.patterns import pattern_create
from mining.models import MiningRun
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    open_first_key,
    patient_expect,
)
from tests.factories import PASSWORD, StudyFactory, assigned_batch, key_with_prefixes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _gpu_queue_size() -> int:
    from config.celery import app

    with app.connection_for_write() as connection:
        return int(connection.default_channel.queue_declare("gpu", passive=True).message_count)


@pytest.fixture
def broker_queue():
    """How many messages this test sent to the ``gpu`` queue, on whichever broker is set
    (the file-system one, or Redis in CI); no worker reads it in e2e.

    The queue is emptied afterwards, so that a later worker does not pick up a task for
    a run of the test database.
    """
    from config.celery import app

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge("gpu")
    yield _gpu_queue_size
    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge("gpu")


@pytest.fixture
def study_with_two_layers(db):
    study = StudyFactory(name="tiny-gpt2")
    for layer in (1, 1, 1, 2, 2):
        key_with_prefixes(3, study=study, layer=layer)
    return study


def test_staff_land_on_the_admin_screens(page, carol, study_with_two_layers):
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    expect(page.get_by_role("heading", name="Studies")).to_be_visible()
    expect(page.get_by_role("link", name="tiny-gpt2")).to_be_visible()


def test_admin_creates_a_batch_by_layer_and_assigns_it_with_overlap_two(
    page, carol, alice, bob, study_with_two_layers
):
    log_in(page, "carol", PASSWORD)
    page.get_by_role("link", name="tiny-gpt2").click()
    page.get_by_label("Batch name").fill("layer one")
    page.get_by_label("Every key of some layers").check()
    page.get_by_label("Layer 1 (3 keys)").check()
    page.get_by_role("button", name="Create batch").click()

    expect(page.get_by_role("heading", name="Batch layer one")).to_be_visible()
    page.get_by_label("alice").check()
    page.get_by_label("bob").check()
    page.get_by_label("Overlap (annotators per key)").fill("2")
    page.get_by_role("button", name="Assign").click()

    expect(page.get_by_text("Assigned.")).to_be_visible()
    expect(page.get_by_test_id("batch-annotators")).to_contain_text("alice")
    expect(page.get_by_test_id("batch-annotators")).to_contain_text("bob")
    expect(page.get_by_test_id("progress-annotator")).to_have_count(2)
    expect(page.get_by_test_id("progress-layer")).to_have_count(1)

    batch = Batch.objects.get(name="layer one")
    assert sorted(batch.keys.values_list("layer", flat=True)) == [1, 1, 1]
    assert sorted(
        Assignment.objects.filter(batch=batch).values_list("annotator__username", flat=True)
    ) == ["alice", "bob"]
    # Overlap 2 with two annotators: every key goes to both.
    for username in ("alice", "bob"):
        assert (
            AssignmentKey.objects.filter(
                assignment__batch=batch, assignment__annotator__username=username
            ).count()
            == 3
        )


def test_admin_toggles_showing_value_tokens(page, carol, study_with_two_layers):
    log_in(page, "carol", PASSWORD)
    page.get_by_role("link", name="tiny-gpt2").click()
    toggle = page.get_by_label("Show the value's top tokens to annotators")
    expect(toggle).not_to_be_checked()
    toggle.check()
    expect(toggle).to_be_checked()
    expect(toggle).to_be_enabled()
    study_with_two_layers.refresh_from_db()
    assert study_with_two_layers.show_value_tokens is True


def test_admin_starts_a_mining_run_and_cancels_it(page, carol, broker_queue):
    log_in(page, "carol", PASSWORD)
    page.get_by_role("link", name="Mining runs").click()
    page.get_by_label("Study name").fill("mined-in-e2e")
    page.get_by_label("Max sentences").fill("50")
    page.get_by_role("button", name="Start mining").click()

    run_card = page.get_by_test_id("mining-run").filter(has_text="mined-in-e2e")
    expect(run_card.get_by_test_id("run-status")).to_have_text("queued")
    expect(run_card.get_by_role("progressbar")).to_be_visible()
    run = MiningRun.objects.get(study_name="mined-in-e2e")
    assert run.status == "queued"
    assert (run.params["model"], run.params["corpus"]) == ("builtin:minilm", "builtin:wiki-vital")
    assert run.params["max_sentences"] == 50
    assert broker_queue() == 1  # the prepare task was sent to the broker

    run_card.get_by_role("button", name="Cancel the run mined-in-e2e").click()
    expect(run_card.get_by_test_id("run-status")).to_have_text("cancelled")
    run.refresh_from_db()
    assert run.status == "cancelled" and run.cancel_requested


def test_an_annotator_cannot_use_the_admin_screens(page, alice):
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_role("heading", name="My assignments")).to_be_visible()
    page.goto("/manage")
    expect(page.get_by_test_id("staff-only")).to_be_visible()


def test_deactivating_an_annotator_keeps_their_drafts_from_the_replacement_by_default(
    page, browser, live_server, carol, alice, bob
):
    _, (key,) = assigned_batch([alice], n_keys=1, name="alice's keys")
    draft = annotation_get_or_create_for(key=key, annotator=alice)
    draft = annotation_save(annotation=draft, actor=alice, note="alice's hunch", version=1)
    pattern_create(
        annotation=draft,
        actor=alice,
        description="alice sees numbers",
        kind="shallow",
        prefixes=list(key.prefixes.order_by("rank")[:3]),
        version=draft.version,
    )

    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    page.goto("/manage/annotators")
    page.get_by_label("Give the unfinished keys of alice to").select_option(label="bob")
    page.get_by_role("button", name="Deactivate and reassign…").first.click()
    dialog = page.get_by_role("dialog", name="Deactivate alice?")
    expect(dialog.get_by_label("Also give alice's drafts to bob")).not_to_be_checked()
    expect(dialog.get_by_test_id("deactivate-outcome")).to_contain_text(
        "bob starts each of these keys blank and will not see alice's patterns or notes."
    )
    dialog.get_by_role("button", name="Deactivate alice").click()
    expect(dialog).to_have_count(0)
    alice_row = page.get_by_test_id("annotators").get_by_role("row").filter(has_text="alice")
    expect(alice_row.get_by_role("cell").nth(1)).to_have_text("no")

    bob_context = browser.new_context(base_url=live_server.url, locale="en-US")
    try:
        bob_page = bob_context.new_page()
        bob_page.set_default_timeout(15_000)
        open_first_key(bob_page, "bob", PASSWORD, "alice's keys")
        expect(bob_page).to_have_url(re.compile(rf"/keys/{key.pk}\?"))
        expect(bob_page.get_by_text("No patterns yet.")).to_be_visible()
        expect(bob_page.get_by_text("alice sees numbers")).to_have_count(0)
        expect(bob_page.get_by_label("Note (saved automatically)")).to_have_value("")
    finally:
        bob_context.close()
    kept = Annotation.objects.get(key=key, annotator=alice)
    assert (kept.note, kept.patterns.count()) == ("alice's hunch", 1)


def _open_batch(page, batch) -> None:
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    page.goto(f"/manage/studies/{batch.study_id}/batches/{batch.pk}")
    expect(page.get_by_role("heading", name=f"Batch {batch.name}")).to_be_visible()


def test_the_assign_form_messages_follow_the_form_as_it_changes(page, carol, alice, bob):
    batch, _ = assigned_batch([], n_keys=3, n_prefixes=3, name="fresh")
    _open_batch(page, batch)
    form = page.get_by_role("form", name="Assign to annotators")

    form.get_by_role("button", name="Assign").click()
    expect(form.get_by_test_id("assign-problem")).to_have_text("Choose at least one annotator.")
    form.get_by_label("alice").check()
    form.get_by_label("bob").check()
    expect(form.get_by_test_id("assign-problem")).to_have_count(0)

    form.get_by_label("Overlap (annotators per key)").fill("3")
    expect(form.get_by_test_id("overlap-problem")).to_have_text(
        "The overlap (3) cannot be larger than the number of annotators chosen (2): "
        "each key goes to 3 different annotators."
    )
    form.get_by_role("button", name="Assign").click()
    expect(form.get_by_test_id("overlap-problem")).to_be_visible()
    assert not Assignment.objects.filter(batch=batch).exists()

    form.get_by_label("Overlap (annotators per key)").fill("2")
    expect(form.get_by_test_id("overlap-problem")).to_have_count(0)
    form.get_by_role("button", name="Assign").click()
    expect(page.get_by_test_id("batch-annotators")).to_contain_text("bob")
    assert AssignmentKey.objects.filter(assignment__batch=batch).count() == 6


def test_carol_adds_a_third_annotator_to_an_assigned_batch(page, carol, alice, bob):
    from annotate.services.batches import assignment_create_with_overlap
    from tests.conftest import annotator_user

    dave = annotator_user("dave")
    batch, keys = assigned_batch([], n_keys=3, n_prefixes=3, name="pair")
    assignment_create_with_overlap(batch=batch, annotators=[alice, bob], overlap=2)
    _open_batch(page, batch)
    table = page.get_by_test_id("batch-keys")
    expect(table.get_by_role("columnheader")).to_have_text(["Key", "alice", "bob"])

    form = page.get_by_role("form", name="Add annotators or raise the overlap")
    expect(form.get_by_label("Overlap (annotators per key)")).to_have_value("2")
    form.get_by_label("Overlap (annotators per key)").fill("3")
    expect(form.get_by_test_id("overlap-problem")).to_contain_text(
        "cannot be larger than the number of active annotators on the batch"
    )
    form.get_by_label("dave").check()
    expect(form.get_by_test_id("overlap-problem")).to_have_count(0)
    form.get_by_role("button", name="Add and give out keys").click()

    expect(page.get_by_test_id("assign-done")).to_have_text("Done: 3 keys given out.")
    expect(page.get_by_test_id("batch-annotators")).to_contain_text("dave")
    expect(table.get_by_role("columnheader")).to_have_text(["Key", "alice", "bob", "dave"])
    expect(table.locator("td[data-status='new']")).to_have_count(9)
    assert sorted(
        AssignmentKey.objects.filter(
            assignment__batch=batch, assignment__annotator=dave
        ).values_list("key_id", flat=True)
    ) == sorted(key.pk for key in keys)


def test_carol_creates_an_annotator_who_sets_a_password_with_the_link_and_signs_in(
    page, browser, live_server, carol
):
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    page.get_by_role("link", name="Annotators").click()
    page.get_by_label("Username of the new annotator").fill("dave")
    page.get_by_role("button", name="Create and invite").click()

    notice = page.get_by_test_id("password-link")
    expect(notice.get_by_role("status")).to_contain_text("dave was created.")
    link = notice.get_by_label("One-time link for dave").input_value()
    assert re.fullmatch(rf"{re.escape(live_server.url)}/set-password#[\w-]+/[\w-]+", link)
    expect(page.get_by_test_id("annotators").get_by_role("rowheader", name="dave")).to_be_visible()

    dave_context = browser.new_context(base_url=live_server.url, locale="en-US")
    try:
        dave_page = dave_context.new_page()
        dave_page.set_default_timeout(15_000)
        dave_page.goto(link)
        expect(dave_page.get_by_text("Welcome, dave.")).to_be_visible()
        dave_page.get_by_label("New password", exact=True).fill("dave's long passphrase")
        dave_page.get_by_label("New password again").fill("dave's long passphrase")
        dave_page.get_by_role("button", name="Set password and sign in").click()
        expect(dave_page.get_by_role("heading", name="My assignments")).to_be_visible()

        dave_page.goto(link)  # spent
        expect(dave_page.get_by_role("alert")).to_contain_text("This link is not valid")
    finally:
        dave_context.close()


# --- accounts: look-alike usernames, and what a staff member who is no superuser sees ----


def test_a_look_alike_username_is_refused_with_the_reason(page, carol, alice):
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    page.get_by_role("link", name="Annotators").click()
    page.get_by_label("Username of the new annotator").fill("аӏісе")  # Cyrillic letters
    page.get_by_role("button", name="Create and invite").click()
    expect(page.get_by_role("alert")).to_have_text(
        "This username can be mistaken for an existing account's: choose another one."
    )
    page.get_by_label("Username of the new annotator").fill("cаrol")  # one Cyrillic а
    page.get_by_role("button", name="Create and invite").click()
    expect(page.get_by_role("alert")).to_have_text(
        "This username mixes Latin, Cyrillic or Greek letters: write it in one script."
    )
    expect(page.get_by_test_id("annotators").get_by_role("rowheader")).to_have_count(1)


def test_a_staff_member_sees_no_superuser_among_the_annotators(page, carol, alice):
    from django.contrib.auth.models import Group

    from annotate.permissions import ANNOTATOR_GROUP
    from tests.factories import UserFactory

    carol.groups.add(Group.objects.get_or_create(name=ANNOTATOR_GROUP)[0])
    UserFactory(username="sam", is_staff=True)
    log_in(page, "sam", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    page.get_by_role("link", name="Annotators").click()
    rows = page.get_by_test_id("annotators").get_by_role("rowheader")
    expect(rows).to_have_text(["alice"])
    expect(page.get_by_role("button", name="New password link for carol")).to_have_count(0)
