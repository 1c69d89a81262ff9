"""Evidence beyond the top-k in a real Chromium (docs/evidence.md): token shading and its
remembered switch, the folded samples, a suggestion accepted, edited and submitted, and
the curator's view of the pattern's held-out scores; the new parts at three widths."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, Key, KeyExample, Pattern, Suggestion, TriggerPrefix
from annotate.services.scores import scores_compute
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    assert_controls_reachable,
    assert_no_horizontal_overflow,
    open_first_key,
    patient_expect,
)
from tests.factories import (
    PASSWORD,
    AssignmentFactory,
    BatchFactory,
    StudyFactory,
    SuggestionFactory,
    key_examples,
    key_with_prefixes,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

BATCH = "evidence"
MAX = 50.0
WIDE, LAPTOP, PHONE = (1440, 900), (1024, 700), (390, 844)


def shaded_key(study, index: int) -> Key:
    """A key of layer 1 whose prefixes carry their tokens (a causal prefix: the last is the
    trigger, at the prefix's coefficient), one token below zero (a SwiGLU key's), and
    its samples and held-out sets (tests/factories.py: key_examples)."""
    key = key_with_prefixes(25, study=study, layer=1, index=index)
    prefixes = list(key.prefixes.order_by("rank"))
    for prefix in prefixes:
        prefix.text = f"prefix {prefix.rank} ends with t{prefix.rank}"
        prefix.sentence = f"{prefix.text}{prefix.suffix}"
        words = prefix.text.split(" ")
        prefix.tokens = [words[0]] + [f" {word}" for word in words[1:]]
        prefix.token_coefficients = [0.0] * (len(words) - 2) + [-MAX / 5, prefix.coefficient]
        prefix.position = len(words) - 1
    TriggerPrefix.objects.bulk_update(
        prefixes, ["text", "sentence", "tokens", "token_coefficients", "position"]
    )
    Key.objects.filter(pk=key.pk).update(
        max_coefficient=MAX,
        density=0.25,
        histogram={"edges": [0.0, 10.0, 20.0, 30.0, 40.0, 50.0], "counts": [900, 60, 20, 5, 1]},
    )
    key_examples(key, max_coefficient=MAX)
    return key


@pytest.fixture
def evidence_key(alice) -> Key:
    study = StudyFactory(suggestions_enabled=True, show_scores=False)
    key = shaded_key(study, 1)
    # Another key of the layer: the one the shuffled baseline is scored on.
    shaded_key(study, 2)
    batch = BatchFactory(study=study, keys=[key], name=BATCH)
    AssignmentFactory(batch=batch, annotator=alice)
    SuggestionFactory(
        key=key,
        method=Suggestion.Method.RULE,
        description='trigger token "t1"',
        rule={"type": "token", "value": "t1"},
        prefixes=list(key.prefixes.filter(rank__in=[1, 2, 3])),
    )
    return key


def shaded_tokens(page):
    return page.get_by_test_id("prefix-row").first.get_by_test_id("shaded-token")


def test_alice_reads_the_evidence_accepts_a_suggestion_and_carol_sees_its_scores(
    page, browser, live_server, alice, carol, evidence_key
):
    key = evidence_key
    open_first_key(page, "alice", PASSWORD, BATCH)

    # -- shading: on by default, on the key's scale, its switch remembered --------------
    first = shaded_tokens(page)
    expect(first).to_have_count(5)  # "prefix 1 ends with t1": its tokens
    trigger = first.last
    expect(trigger).to_have_class(re.compile(r"\bshade-trigger\b"))
    # 25 of the key's 50: half the scale, though it is the row's own maximum.
    expect(trigger).to_have_attribute("data-share", "0.500")
    expect(first.nth(3)).to_have_attribute("data-share", "-0.200")
    expect(trigger).to_have_attribute("title", "Coefficient 25")
    # The value shows as a label on the row the keyboard is on (the first).
    expect(trigger.get_by_test_id("shade-value")).to_be_visible()
    expect(
        page.get_by_test_id("prefix-row").nth(1).get_by_test_id("shade-value").last
    ).to_be_hidden()
    colours = first.evaluate_all("els => els.map(el => getComputedStyle(el).backgroundColor)")
    assert colours[-1] != colours[3] != colours[0], colours  # blue, orange, unshaded

    page.get_by_test_id("prefix-list").focus()
    page.keyboard.press("s")
    expect(first).to_have_count(0)
    expect(page.get_by_test_id("prefix-row").first.locator("mark.trigger")).to_have_text("t1")
    expect(page.get_by_test_id("shading-toggle")).not_to_be_checked()
    page.reload()
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    expect(page.get_by_test_id("shading-toggle")).not_to_be_checked()
    expect(shaded_tokens(page)).to_have_count(0)
    page.get_by_test_id("shading-toggle").check()
    expect(shaded_tokens(page)).to_have_count(5)

    # -- the lower bands, opened by keyboard -------------------------------------------
    folds = page.get_by_test_id("sample-fold")
    expect(folds).to_have_count(6)
    assert folds.evaluate_all("els => els.map(el => el.dataset.fold)") == [
        "band-5",
        "band-4",
        "band-3",
        "band-2",
        "band-1",
        "random",
    ]
    expect(folds.first.locator("summary")).to_contain_text("Band 5")
    expect(folds.first.locator("summary")).to_contain_text("40 – 50")
    band5 = folds.first
    band5.locator("summary").focus()
    page.keyboard.press("Enter")
    rows = band5.get_by_test_id("example-row")
    expect(rows).to_have_count(5)
    expect(rows.first).to_be_visible()
    expect(rows.first.get_by_test_id("shaded-token").first).to_be_visible()
    # A sample takes focus, and its values show then.
    rows.first.focus()
    expect(rows.first.get_by_test_id("shade-value").last).to_be_visible()
    # Samples are not prefixes: the list still has 25 options, none of them a sample.
    expect(page.get_by_test_id("prefix-list").get_by_role("option")).to_have_count(25)
    expect(page.get_by_test_id("samples").get_by_role("option")).to_have_count(0)
    folds.last.locator("summary").click()
    expect(folds.last.get_by_test_id("example-row")).to_have_count(25)
    expect(page.get_by_test_id("activation-histogram")).to_contain_text("Active at 25%")
    expect(page.get_by_test_id("histogram-bar")).to_have_count(5)

    # -- a suggestion accepted by keyboard, edited, submitted --------------------------
    panel = page.get_by_test_id("suggestions")
    expect(panel.get_by_test_id("suggestion")).to_have_count(1)
    expect(panel.get_by_test_id("pattern-rule")).to_contain_text("trigger token is “t1”")
    accept = panel.get_by_role("button", name="Accept suggestion 1")
    accept.focus()
    page.keyboard.press("Enter")
    item = page.get_by_test_id("pattern-item")
    expect(item).to_have_count(1)
    expect(item.get_by_test_id("suggestion-badge")).to_have_text("suggestion")
    expect(panel.get_by_test_id("suggestion-accepted")).to_be_visible()
    expect(page.get_by_test_id("prefix-label").first).to_have_attribute("data-label", "shallow")

    item.get_by_role("button", name="Edit P1").click()
    description = page.get_by_label("Pattern description")
    expect(description).to_have_value('trigger token "t1"')
    description.fill("the token t1 at the end")
    page.get_by_role("button", name="Save pattern").click()
    expect(item).to_contain_text("the token t1 at the end")
    expect(item.get_by_test_id("suggestion-badge")).to_be_visible()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")
    page.get_by_role("button", name=re.compile("^Submit")).click()
    expect(page.get_by_test_id("all-done")).to_be_visible()

    annotation = Annotation.objects.get(key=key, annotator=alice)
    assert annotation.status == Annotation.Status.SUBMITTED
    (pattern,) = annotation.patterns.all()
    assert (pattern.description, pattern.source) == ("the token t1 at the end", "suggestion")
    assert pattern.rule == {"type": "token", "value": "t1"}

    # The scoring job's service, as the worker runs it after the edit.
    scores_compute(study_id=key.study_id, pattern_ids=[pattern.id], missing_only=False)
    pattern.refresh_from_db()
    assert pattern.scores["detection"] is not None and pattern.scores["embedding"] is not None

    # -- carol: the pattern's scores and the held-out examples -------------------------
    carol_context = browser.new_context(base_url=live_server.url, locale="en-US")
    try:
        review = carol_context.new_page()
        review.set_default_timeout(15_000)
        log_in(review, "carol", PASSWORD)
        expect(review).to_have_url(re.compile(r"/manage$"))
        review.goto(f"/manage/review/keys/{key.id}")
        card = review.get_by_test_id("annotator-pattern")
        expect(card).to_have_count(1)
        expect(card.get_by_test_id("suggestion-badge")).to_be_visible()
        for field in ("detection", "embedding", "shuffled_detection", "shuffled_embedding"):
            value = pattern.scores[field]
            cell = card.get_by_test_id(f"score-{field}")
            if value is None:
                expect(cell).to_have_text("—")
            else:
                # Two decimals, a tie rounded away from zero as Intl.NumberFormat does.
                shown = Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
                expect(cell).to_have_text(str(shown))
        expect(
            review.get_by_test_id("review-row").first.get_by_test_id("shaded-token")
        ).to_have_count(5)
        # Her own shading switch, by its shortcut: the text as written, trigger marked.
        review.get_by_test_id("review-grid").focus()
        review.keyboard.press("s")
        expect(review.get_by_test_id("shading-toggle")).not_to_be_checked()
        heldout = review.get_by_test_id("heldout-fold")
        expect(heldout).to_have_count(2)
        heldout.first.locator("summary").click()
        expect(heldout.first.get_by_test_id("example-row")).to_have_count(25)
        first_heldout = KeyExample.objects.filter(key=key, kind="heldout").order_by("rank")[0]
        expect(heldout.first.get_by_test_id("example-row").first).to_contain_text(
            first_heldout.text
        )

        # The report's per-layer table counts it among the accepted suggestions.
        review.goto(f"/manage/studies/{key.study_id}/report")
        table = review.get_by_test_id("pattern-scores-table")
        expect(table).to_be_visible()
        layer_row = table.get_by_test_id("pattern-scores-row").first
        mean = Decimal(pattern.scores["embedding"]).quantize(
            Decimal("0.001"), rounding=ROUND_HALF_UP
        )
        expect(layer_row.get_by_test_id("score-suggestion-embedding")).to_contain_text(str(mean))
    finally:
        carol_context.close()


@pytest.mark.parametrize(
    ("size", "language"),
    [(WIDE, "en"), (LAPTOP, "en"), (PHONE, "en"), (PHONE, "zh-CN")],
    ids=["1440", "1024", "390", "390-zh"],
)
def test_the_evidence_fits_every_width_and_every_control_is_reachable(
    page, alice, carol, evidence_key, size, language
):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_first_key(page, "alice", PASSWORD, BATCH)
    if language != "en":
        # Chinese labels are wider: the folds' titles and the panel's buttons still fit.
        page.get_by_label("Language").select_option(language)
        expect(page.get_by_test_id("sample-fold").first.locator("summary")).to_contain_text(
            "区间 5"
        )
    expect(shaded_tokens(page)).to_have_count(5)
    for fold in page.get_by_test_id("sample-fold").all():
        fold.locator("summary").click()
    expect(page.get_by_test_id("example-row")).to_have_count(50)
    expect(page.get_by_test_id("suggestion")).to_have_count(1)
    assert_no_horizontal_overflow(page)
    assert_controls_reachable(page, "[data-testid=suggestions]")
    assert_controls_reachable(page, "[data-testid=samples]")
    assert_controls_reachable(page, ".workspace-tools")

    page.get_by_test_id("suggestion-accept").click()
    expect(page.get_by_test_id("suggestion-badge")).to_be_visible()
    Pattern.objects.filter(source="suggestion").update(
        scores={
            "detection": 0.75,
            "embedding": 0.625,
            "shuffled_detection": 0.5,
            "shuffled_embedding": 0.4375,
        }
    )
    page.context.clear_cookies()
    page.evaluate("() => window.localStorage.clear()")
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    page.goto(f"/manage/review/keys/{evidence_key.id}")
    if language != "en":
        page.get_by_label("Language").select_option(language)
    card = page.get_by_test_id("annotator-pattern")
    expect(card.get_by_test_id("score-embedding")).to_have_text("0.63")
    for fold in page.get_by_test_id("heldout-fold").all():
        fold.locator("summary").click()
    expect(page.get_by_test_id("heldout-fold").first.get_by_test_id("example-row")).to_have_count(
        25
    )
    assert_no_horizontal_overflow(page)
    assert_controls_reachable(page, "[data-testid=heldout]")
    assert_controls_reachable(page, "[data-testid=annotator-pattern]")
