"""The key workspace at three widths: a wide screen, a laptop and a phone.

Each test takes a screenshot under its tmp_path. With ``FFKV_SCREENSHOTS=<folder>`` the
wide and the phone workspace are also written there, small (a 64-colour palette): the
screenshots of README.md and docs/annotation.md ("The workspace") are made so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, Key, KeyFlag, Pattern, Study, TriggerPrefix
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    assert_controls_reachable,
    assert_no_horizontal_overflow,
    assert_reflowed_cells_labelled,
    open_first_key,
    patient_expect,
    select_rows_with_keyboard,
)
from tests.factories import (
    PASSWORD,
    AnnotationFactory,
    AssignmentFactory,
    BatchFactory,
    PatternFactory,
    UserFactory,
    annotate_key,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "example-study.jsonl"
# A key of layer 25 of the example study: prefixes of every length, up to 150 characters.
EXAMPLE_KEY = (25, 1148)
BATCH = "layout"

WIDE, LAPTOP, PHONE = (1440, 900), (1024, 700), (390, 844)


def example_key_for(annotator) -> Key:
    """The example study's key EXAMPLE_KEY, with its value's top tokens shown, assigned to
    ``annotator``, and one of the example's patterns already added (chips in the list)."""
    record = next(
        r
        for r in map(json.loads, EXAMPLE.read_text(encoding="utf-8").splitlines())
        if "key" in r and (r["key"]["layer"], r["key"]["index"]) == EXAMPLE_KEY
    )
    study = Study.objects.create(
        name="SmolLM2 on the example sentences",
        model_name=record["study"]["model"],
        corpus=record["study"]["corpus"],
        show_value_tokens=True,
    )
    key = Key.objects.create(
        study=study,
        layer=EXAMPLE_KEY[0],
        index=EXAMPLE_KEY[1],
        value_top_tokens=record["key"]["value_top_tokens"],
    )
    TriggerPrefix.objects.bulk_create(
        TriggerPrefix(
            key=key,
            rank=p["rank"],
            coefficient=p["coefficient"],
            text=p["text"],
            trigger_token=p["trigger_token"],
            trigger_token_id=0,
            next_token=p["next_token"],
            next_token_id=0,
            suffix=p["sentence"][len(p["text"]) :],
            sentence=p["sentence"],
            sentence_index=p["sentence_index"],
            position=p["position"],
        )
        for p in record["prefixes"]
    )
    batch = BatchFactory(study=study, keys=[key], name=BATCH)
    AssignmentFactory(batch=batch, annotator=annotator)
    example = record["annotations"][0]["patterns"][0]
    PatternFactory(
        annotation=AnnotationFactory(key=key, annotator=annotator),
        description=example["description"],
        kind=example["kind"],
        prefixes=list(key.prefixes.filter(rank__in=example["prefix_ranks"])),
    )
    return key


def open_at(page, size: tuple[int, int]) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_first_key(page, "alice", PASSWORD, BATCH)


def box(locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not rendered"
    return found


def assert_in_viewport(page, locator, what: str) -> None:
    """The whole of ``locator`` is on screen, where the page is scrolled now."""
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    b = box(locator)
    assert b["x"] >= 0 and b["x"] + b["width"] <= width + 0.5, (what, b, width)
    assert b["y"] >= 0 and b["y"] + b["height"] <= height + 0.5, (what, b, height)


def assert_on_top(page, locator, what: str) -> None:
    """Nothing covers the middle of ``locator`` (a sticky bar, the list): a click lands on it."""
    b = box(locator)
    x, y = b["x"] + b["width"] / 2, b["y"] + b["height"] / 2
    assert locator.evaluate(
        "(el, [x, y]) => el.contains(document.elementFromPoint(x, y))", [x, y]
    ), (what, "is covered")


def composer(page):
    return page.get_by_role("region", name="New pattern")


def submit(page):
    return page.get_by_role("button", name="Submit and go to the next key")


def assert_prefixes_readable(page) -> None:
    """Prefix text gets a real share of the screen: no column a few pixels wide where the
    text wraps a character a line (item 6 measured a 22,563 px list at 390 px)."""
    width = page.viewport_size["width"]
    rows = page.get_by_test_id("prefix-row")
    for index in (0, 11):  # a short prefix and the longest one (150 characters)
        body = box(rows.nth(index).locator(".prefix-body"))
        assert body["width"] >= 0.4 * width, (index, body, width)
    list_height = box(page.get_by_test_id("prefix-list"))["height"]
    assert list_height < 25 * 0.2 * page.viewport_size["height"], list_height


def screenshot(page, tmp_path: Path, name: str, readme: bool) -> None:
    page.screenshot(path=tmp_path / f"{name}.png")
    folder = os.environ.get("FFKV_SCREENSHOTS")
    if readme and folder:
        from PIL import Image

        Path(folder).mkdir(parents=True, exist_ok=True)
        with Image.open(tmp_path / f"{name}.png") as image:
            small = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
            small.save(Path(folder) / f"{name}.png", optimize=True)


@pytest.mark.parametrize(("size", "name"), [(WIDE, "workspace-1440"), (LAPTOP, "workspace-1024")])
def test_on_a_wide_screen_the_composer_sits_beside_the_prefixes_and_stays(
    page, alice, tmp_path, size, name
):
    example_key_for(alice)
    open_at(page, size)
    select_rows_with_keyboard(page, 3)
    page.get_by_label("Pattern description").fill("cooking in the kitchen")
    page.get_by_test_id("prefix-list").focus()
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, tmp_path, name, readme=size == WIDE)

    assert_in_viewport(page, composer(page), "composer")
    assert_in_viewport(page, submit(page), "Submit")
    assert_on_top(page, submit(page), "Submit")
    assert_prefixes_readable(page)
    prefixes, side = box(page.get_by_test_id("prefix-list")), box(composer(page))
    assert side["x"] >= prefixes["x"] + prefixes["width"], "side by side"

    # At the end of the list the composer and Submit are still there (sticky).
    page.keyboard.press("End")
    expect(page.get_by_test_id("prefix-row").last).to_be_in_viewport()
    assert page.evaluate("window.scrollY") > 0
    assert_in_viewport(page, composer(page), "composer at the end of the list")
    assert_in_viewport(page, submit(page), "Submit at the end of the list")


def test_on_a_phone_the_composer_comes_first_and_submit_stays_in_a_bar(page, alice, tmp_path):
    example_key_for(alice)
    open_at(page, PHONE)
    select_rows_with_keyboard(page, 3)
    page.get_by_label("Pattern description").fill("cooking in the kitchen")
    page.get_by_test_id("prefix-list").focus()
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, tmp_path, "workspace-390", readme=True)

    assert_in_viewport(page, composer(page), "composer")
    assert_in_viewport(page, submit(page), "Submit")
    assert_on_top(page, submit(page), "Submit")
    assert_prefixes_readable(page)
    # Stacked: nothing beside the list, which is as wide as the page's content.
    prefixes = box(page.get_by_test_id("prefix-list"))
    assert prefixes["width"] >= 0.85 * PHONE[0]
    assert box(composer(page))["y"] + box(composer(page))["height"] <= prefixes["y"]

    # Scrolled to the last prefix, Submit is still on screen, and it hides no prefix.
    page.keyboard.press("End")
    last = page.get_by_test_id("prefix-row").last
    expect(last).to_be_in_viewport()
    assert_in_viewport(page, submit(page), "Submit at the end of the list")
    assert_on_top(page, submit(page), "Submit at the end of the list")
    assert_on_top(page, last, "the last prefix")
    bar = box(page.locator(".submit-card"))
    assert box(last)["y"] + box(last)["height"] <= bar["y"], ("under the bar", box(last), bar)
    screenshot(page, tmp_path, "workspace-390-end", readme=False)

    # The action bar works: Submit submits (and, with no key left, says so), once told
    # what to do with the description left in the composer.
    submit(page).click()
    page.get_by_role("button", name="Discard it and submit").click()
    expect(page.get_by_test_id("all-done")).to_be_visible()


@pytest.mark.parametrize("size", [PHONE, LAPTOP])
def test_a_key_opens_at_the_top_with_the_composer_on_screen(page, alice, size):
    """The prefix list takes focus when the key shows, so that the keys act at once; that
    must not scroll the page past the composer (on a phone the list starts below it)."""
    example_key_for(alice)
    open_at(page, size)
    expect(page.get_by_test_id("prefix-list")).to_be_focused()
    assert page.evaluate("window.scrollY") == 0
    assert_in_viewport(page, composer(page), "composer")
    assert_in_viewport(page, submit(page), "Submit")


# --- the review screens: the queue and the adjudication screen --------------------------
#
# carol reviews EXAMPLE_KEY as the example study's two annotators left it: their names
# are alike but for their last letter, and the key's prefixes run up to 164 characters.

REVIEWERS = ("example-annotator-1", "example-annotator-2")


def review_key_for_carol() -> Key:
    """EXAMPLE_KEY, assigned to both REVIEWERS and submitted by both with the example's
    patterns, flagged by the first."""
    first, second = (UserFactory(username=name) for name in REVIEWERS)
    key = example_key_for(first)
    Annotation.objects.filter(key=key).delete()
    AssignmentFactory(batch=key.batches.get(), annotator=second)
    record = next(
        r
        for r in map(json.loads, EXAMPLE.read_text(encoding="utf-8").splitlines())
        if "key" in r and (r["key"]["layer"], r["key"]["index"]) == EXAMPLE_KEY
    )
    users = {user.username: user for user in (first, second)}
    for annotation in record["annotations"]:
        patterns = annotation["patterns"]
        made = annotate_key(
            key, users[annotation["annotator"]], [(p["kind"], p["prefix_ranks"]) for p in patterns]
        )
        for order, pattern in enumerate(patterns):
            Pattern.objects.filter(annotation=made, order=order).update(
                description=pattern["description"]
            )
    KeyFlag.objects.create(key=key, annotator=first, reason="unclear", note="which sense?")
    return key


def open_review(page, size: tuple[int, int], path: str) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    log_in(page, "carol", PASSWORD)
    expect(page.get_by_test_id("review-link")).to_be_visible()
    page.goto(path)


def assert_table_cells_labelled(table) -> None:
    """Every data cell of ``table`` is read with its column's name: the head row is shown,
    or (a narrow screen, rows as cards) the cell writes its column's name before it."""
    problems = table.evaluate(
        """(table) => {
            const heads = [...table.tHead.rows[0].cells].map((th) => th.textContent.trim());
            const style = getComputedStyle(table.tHead);
            if (style.display !== 'none' && table.tHead.getClientRects().length) return [];
            const problems = [];
            for (const row of table.tBodies[0].rows) {
                [...row.cells].forEach((cell, column) => {
                    if (cell.tagName === 'TH') return;  // the row's own name
                    const before = getComputedStyle(cell, '::before').content;
                    if (!before.includes(heads[column])) {
                        problems.push(`${heads[column]}: ${before}`);
                    }
                });
            }
            return problems;
        }"""
    )
    assert problems == [], problems


_BROKEN_WORDS = """(root) => {
    const broken = [];
    for (const text of root.querySelectorAll('.prefix-text')) {
        const walker = document.createTreeWalker(text, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const match of node.data.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(node, match.index);
                range.setEnd(node, match.index + match[0].length);
                const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                if (lines.size > 1) broken.push(match[0]);
            }
        }
    }
    return broken;
}"""


@pytest.mark.parametrize("size", [PHONE, LAPTOP, WIDE], ids=["390", "1024", "1440"])
def test_the_review_queue_and_the_study_list_read_at_every_width(page, carol, size):
    key = review_key_for_carol()
    open_review(page, size, "/manage/review")
    studies = page.get_by_test_id("review-studies")
    expect(studies).to_be_visible()
    assert_no_horizontal_overflow(page)
    assert_table_cells_labelled(studies)
    assert_controls_reachable(page)

    page.goto(f"/manage/studies/{key.study_id}/review")
    queue = page.get_by_test_id("review-queue")
    expect(queue.get_by_test_id("queue-row")).to_have_count(1)
    assert_no_horizontal_overflow(page)
    assert_table_cells_labelled(queue)
    assert_controls_reachable(page)


@pytest.mark.parametrize("size", [PHONE, LAPTOP, WIDE], ids=["390", "1024", "1440"])
def test_the_adjudication_screen_reads_at_every_width(page, carol, tmp_path, size):
    key = review_key_for_carol()
    open_review(page, size, f"/manage/review/keys/{key.pk}")
    rows = page.get_by_test_id("review-row")
    expect(rows).to_have_count(25)
    screenshot(page, tmp_path, f"review-{size[0]}", readme=False)
    assert_no_horizontal_overflow(page)

    # The text gets a real column, and no word is cut mid-letter.
    for index in range(25):
        body = box(rows.nth(index).locator(".prefix-body"))
        assert body["width"] >= 200, (index, body)
    grid = page.get_by_test_id("review-grid")
    assert grid.evaluate(_BROKEN_WORDS) == []
    if size == PHONE:  # the walkthrough measured a 17,042 px page
        assert box(grid)["height"] < 25 * 0.2 * size[1], box(grid)

    # Every row: the coefficient's bar, the next token, a label per column named in full.
    expect(grid.locator(".coef-bar")).to_have_count(25)
    expect(grid.get_by_test_id("next-token")).to_have_count(25)
    expect(rows.nth(0).get_by_test_id("next-token")).to_have_text("Next token: →␣there")
    for name in REVIEWERS:
        cells = grid.locator(f'[data-testid="label-cell"][data-who="{name}"]')
        expect(cells).to_have_count(25)
        expect(cells.first).to_contain_text(f"{name}: ")

    # Two names alike but for their last letter are told apart: the head's columns differ
    # and are not clipped, and the legend (and each head's title) names them in full.
    heads = page.get_by_test_id("label-head")
    expect(heads).to_have_count(3)
    shown = [head.inner_text().strip() for head in heads.all()]
    assert len(set(shown)) == 3, shown
    for head in heads.all():
        assert head.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), head.inner_text()
    legend = page.get_by_test_id("annotator-legend")
    for letter, name in zip("AB", REVIEWERS, strict=True):
        expect(legend).to_contain_text(f"{letter} {name}")
        expect(heads.filter(has_text=letter).first).to_have_attribute("title", f"{letter}: {name}")

    # The gold beside the grid where there is room, right after it where there is not; the
    # keyboard goes from the grid to the gold either way.
    gold, grid_box = box(page.get_by_test_id("gold-column")), box(grid)
    annotators = box(page.get_by_test_id("annotator-column").first)
    if size == PHONE:
        assert gold["y"] >= grid_box["y"] + grid_box["height"], (gold, grid_box)
        assert annotators["y"] >= gold["y"] + gold["height"], (annotators, gold)
    else:
        assert gold["x"] >= grid_box["x"] + grid_box["width"], (gold, grid_box)
        assert gold["y"] < grid_box["y"] + grid_box["height"], (gold, grid_box)
    grid.focus()
    page.keyboard.press("Tab")
    assert page.evaluate(
        "() => !!document.activeElement.closest('[data-testid=\"gold-column\"]')"
    ), "Tab from the grid goes to the gold"


# --- the report and the annotator table at three widths ---------------------------------
# (the report's own block: a study mined in 30 layers, 2 keys a layer, annotated by alice
# and bob in layers 1-4 only, so that most layers of each table are empty)

REPORT_STUDY = "SmolLM2-135M-Instruct on wiki-vital, first 3,000 sentences"
WIDTHS = [
    pytest.param(PHONE, id="390"),
    pytest.param(LAPTOP, id="1024"),
    pytest.param(WIDE, id="1440"),
]


@pytest.fixture
def report_study(alice, bob):
    from annotate.models import GoldAnnotation, GoldPattern
    from tests.factories import StudyFactory, annotate_key, key_with_prefixes

    study = StudyFactory(
        name=REPORT_STUDY,
        n_layers=30,
        d_ff=1536,
        vocab_size=49152,
        value_agreement={
            "format": "ffkv.value-agreement/v1",
            "vocab_size": 49152,
            "variants": ["without_final_norm", "with_final_norm"],
            "final_norm": "model.norm",
            "layers": [
                {
                    "layer": layer,
                    "n_keys": 1536,
                    "next_end": 3,
                    "next_unknown": 1,
                    "next_token": {"without_final_norm": layer, "with_final_norm": 2 * layer},
                    "trigger_token": {"without_final_norm": 0, "with_final_norm": 1},
                }
                for layer in range(1, 31)
            ],
        },
    )
    for layer in range(1, 31):
        for index in (100 + layer, 900 + layer):
            key = key_with_prefixes(
                25,
                study=study,
                layer=layer,
                index=index,
                value_top_token_ids=[1001] if index % 2 else [7],
                perturbation={"first": 0.5, "last": 0.25, "random": 0.1} if layer <= 2 else {},
            )
            if layer > 4:
                continue
            annotate_key(key, alice, [("shallow", [1, 2, 3]), ("semantic", [4, 5, 6, 7])])
            annotate_key(key, bob, [("shallow", [1, 2, 3, 4]), ("shallow+semantic", [8, 9, 10])])
            if layer == 1:
                gold = GoldAnnotation.objects.create(key=key, status="submitted")
                pattern = GoldPattern.objects.create(
                    gold=gold, kind="shallow", order=0, description="gold"
                )
                pattern.prefixes.set(list(key.prefixes.filter(rank__in=[1, 2, 3])))
    return study


def open_report_page(page, size: tuple[int, int], path: str) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    log_in(page, "carol", PASSWORD)
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    page.goto(path)


def assert_cells_labelled(page, reflowed: bool) -> None:
    """Every visible cell of every table says which column it is in. Reflowed into cards
    (a phone), each data cell shows its column's label beside it (drawn from its
    ``data-label``); otherwise the table shows its header row, and every column has a
    non-empty header."""
    found = page.evaluate(
        """(reflowed) => {
          const width = document.documentElement.clientWidth;
          const out = [];
          let cells = 0;
          for (const table of document.querySelectorAll('main table')) {
            if (!table.checkVisibility()) continue;
            const name = table.dataset.testid || table.caption?.innerText || 'a table';
            const head = table.tHead;
            const headShown = head !== null && head.checkVisibility()
              && head.getBoundingClientRect().height > 0;
            if (!reflowed && !headShown) out.push(`${name}: no header row`);
            if (reflowed && headShown) out.push(`${name}: still a wide table`);
            const columns = head ? [...head.rows[0].cells].map((c) => c.innerText.trim()) : [];
            if (!reflowed && columns.some((c) => c === '')) out.push(`${name}: an empty header`);
            for (const row of table.tBodies[0]?.rows ?? []) {
              for (const cell of row.cells) {
                if (!cell.checkVisibility()) continue;
                cells += 1;
                const r = cell.getBoundingClientRect();
                if (r.left < -1 || r.right > width + 1) out.push(`${name}: a cell off screen`);
                if (cell.tagName === 'TH') {
                  if (!cell.innerText.trim()) out.push(`${name}: an empty row header`);
                  continue;
                }
                if (!reflowed) continue;
                const before = getComputedStyle(cell, '::before');
                const label = before.content.startsWith('"') ? JSON.parse(before.content) : '';
                const drawn = before.display !== 'none' && before.visibility === 'visible'
                  && parseFloat(before.width) > 0 && parseFloat(before.height) > 0
                  && parseFloat(before.fontSize) >= 10;
                if (!label.trim() || !drawn)
                  out.push(`${name}: the cell "${cell.innerText.slice(0, 30)}" has no label`);
              }
            }
          }
          return { cells, out: [...new Set(out)].slice(0, 12) };
        }""",
        reflowed,
    )
    assert found["cells"] > 0, "no table cell on the page"
    assert not found["out"], found["out"]


def assert_chart_fits(page, test_id: str) -> None:
    """The chart is as wide as the page allows or less, its title whole: no title line is
    cut at the chart's edge, and none reaches past the screen."""
    chart = page.get_by_test_id(test_id)
    expect(chart).to_be_visible()
    width = page.evaluate("document.documentElement.clientWidth")
    chart_box = box(chart)
    assert chart_box["x"] >= 0 and chart_box["x"] + chart_box["width"] <= width + 0.5, (
        test_id,
        chart_box,
        width,
    )
    title = box(chart.locator("text.chart-title"))
    assert title["x"] >= chart_box["x"] - 0.5, (test_id, "title", title, chart_box)
    assert title["x"] + title["width"] <= chart_box["x"] + chart_box["width"] + 0.5, (
        test_id,
        "title",
        title,
        chart_box,
    )
    # Readable: the chart's text is not shrunk below 9 px on screen.
    smallest = chart.evaluate(
        "svg => Math.min(...[...svg.querySelectorAll('text')].map("
        "t => t.getBoundingClientRect().height).filter(h => h > 0))"
    )
    assert smallest >= 9, (test_id, "text shrunk to", smallest)


@pytest.mark.parametrize("size", WIDTHS)
def test_the_report_reads_at_every_width(page, carol, report_study, size, tmp_path):
    open_report_page(page, size, f"/manage/studies/{report_study.pk}/report")
    expect(page.get_by_test_id("figure2-chart")).to_be_visible()
    expect(page.get_by_test_id("agreement-table")).to_be_visible()
    page.get_by_text("How each number is defined").click()
    screenshot(page, tmp_path, f"report-{size[0]}", readme=False)

    assert_no_horizontal_overflow(page)
    assert_cells_labelled(page, reflowed=size == PHONE)
    assert_chart_fits(page, "figure2-chart")
    assert_chart_fits(page, "value-agreement-chart")
    assert_controls_reachable(page)
    # The layers without ratings fold into one line of each table, not 26 empty rows.
    coverage = page.get_by_test_id("coverage-table")
    expect(coverage.locator("tbody tr")).to_have_count(4 + 1 + 1 + 1)  # 4, folded, all, paper
    expect(coverage.get_by_test_id("folded-layers")).to_contain_text("Layers 5–30")


@pytest.mark.parametrize("size", WIDTHS)
def test_the_annotator_table_reads_at_every_width(page, carol, report_study, size):
    open_report_page(page, size, f"/manage/studies/{report_study.pk}/annotators")
    expect(page.get_by_test_id("annotator-table")).to_be_visible()
    page.get_by_text("Definitions").click()

    assert_no_horizontal_overflow(page)
    assert_cells_labelled(page, reflowed=size == PHONE)
    assert_controls_reachable(page)


def test_the_report_reads_on_a_phone_in_chinese(page, carol, report_study):
    """Chinese labels are wider (a full em a character): the cards, the legends and the
    wrapped titles still fit 390 px."""
    open_report_page(page, PHONE, f"/manage/studies/{report_study.pk}/report")
    expect(page.get_by_test_id("figure2-chart")).to_be_visible()
    page.get_by_label("Language").select_option("zh-CN")
    expect(page.get_by_test_id("coverage-table").get_by_test_id("folded-layers")).to_have_text(
        "第 5–30 层：没有评分"
    )
    assert_no_horizontal_overflow(page)
    assert_cells_labelled(page, reflowed=True)
    assert_chart_fits(page, "figure2-chart")
    assert_chart_fits(page, "value-agreement-chart")
    assert_controls_reachable(page)


# -- the workspace at every width: nothing off the screen, every control reachable ----


@pytest.mark.parametrize("size", [PHONE, LAPTOP, WIDE])
def test_the_workspace_fits_the_screen_and_every_control_is_reachable(page, alice, size):
    key = example_key_for(alice)
    # The longest state the flag control shows.
    KeyFlag.objects.create(key=key, annotator=alice, reason="tokenization")
    open_at(page, size)
    select_rows_with_keyboard(page, 3)
    page.keyboard.press("1")
    page.get_by_label("Pattern description").fill("cooking in the kitchen")

    assert_no_horizontal_overflow(page)
    assert_controls_reachable(page)
    flag = page.get_by_role("button", name="Flag this key")
    flag.evaluate("el => el.scrollIntoView({ block: 'center' })")
    assert_in_viewport(page, flag, "Flag this key")
    assert_on_top(page, flag, "Flag this key")

    # The workspace's dialogs fit too, and so does the question before a submit.
    for opener, dialog in (
        (flag, "Flag this key"),
        (page.get_by_role("button", name="Keyboard shortcuts"), "Keyboard shortcuts"),
        (submit(page), "Add the pattern in the composer?"),
    ):
        opener.click()
        expect(page.get_by_role("dialog", name=dialog)).to_be_visible()
        assert_no_horizontal_overflow(page)
        assert_controls_reachable(page, within="dialog[open]")
        page.keyboard.press("Escape")
        expect(page.get_by_role("dialog")).to_have_count(0)


@pytest.mark.parametrize("size", [PHONE, LAPTOP, WIDE])
def test_the_assignment_pages_fit_the_screen_and_label_reflowed_cells(page, alice, size):
    key = example_key_for(alice)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_test_id("assignment-row")).to_have_count(1)
    assert_no_horizontal_overflow(page)
    assert_controls_reachable(page)
    assert_reflowed_cells_labelled(page)

    page.get_by_role("link", name=BATCH).click()
    expect(page.get_by_test_id("assignment-key-row")).to_have_count(1)
    expect(page.get_by_role("link", name=f"Layer {key.layer} · key {key.index}")).to_be_visible()
    assert_no_horizontal_overflow(page)
    assert_controls_reachable(page)
    assert_reflowed_cells_labelled(page)
