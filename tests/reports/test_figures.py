"""Figure 2 as a file (reports/figures.py): the SPA's colours, and a layout without an
empty half."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from annotate.labels import LABELS
from reports.figures import PALETTE_FILE, figure2_image
from reports.report import report_build
from tests.factories import StudyFactory, annotate_key, key_with_prefixes

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
SPA_CHART = REPO / "frontend" / "src" / "features" / "report" / "components" / "Figure2Chart.tsx"


def test_the_server_figure_and_the_spa_chart_share_one_palette(hand_study):
    palette = json.loads(PALETTE_FILE.read_text(encoding="utf-8"))
    assert list(palette) == list(LABELS)
    # The SPA's chart takes its colours from the same file and writes none of its own.
    chart = SPA_CHART.read_text(encoding="utf-8")
    assert f"from '../lib/{PALETTE_FILE.name}'" in chart
    assert not [colour for colour in palette.values() if colour.lower() in chart.lower()]
    # The server's SVG fills its bars and legend with exactly these colours.
    svg = figure2_image(report_build(study=hand_study), "svg").decode()
    fills = {colour.lower() for colour in re.findall(r"fill: ?(#[0-9a-fA-F]{6})", svg)}
    assert {colour.lower() for colour in palette.values()} <= fills


def _png_pixels(png: bytes):
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return image, image.load()


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def test_the_png_has_no_empty_right_half_when_most_layers_have_no_ratings(alice, bob):
    """A mined study has keys in every layer; the first annotated keys sit in the first
    layers. The figure draws the layers with ratings across its whole width."""
    study = StudyFactory(name="ten layers, three annotated", n_layers=10, vocab_size=100)
    for layer in range(1, 11):
        key = key_with_prefixes(5, study=study, layer=layer, index=0)
        if layer <= 3:
            annotate_key(key, alice, [("shallow", [1, 2, 3])])
            annotate_key(key, bob, [("semantic", [2, 3, 4])])
    report = report_build(study=study)
    assert len(report["figure2"]["pooled"]["layers"]) == 10

    image, pixels = _png_pixels(figure2_image(report, "png"))
    width, height = image.size
    colours = {colour.lower() for colour in json.loads(PALETTE_FILE.read_text()).values()}
    # The middle band of the plot (the legend and the title sit above it, the axis
    # labels and the note below): bar pixels in its right half.
    right_half = {
        _hex(pixels[x, y])
        for x in range(width // 2, width)
        for y in range(int(0.45 * height), int(0.7 * height))
    }
    assert right_half & colours
    # The layers left out are named.
    svg = figure2_image(report, "svg").decode()
    assert "Layers without ratings (not drawn): 4–10" in svg


def test_a_long_study_name_wraps_its_title_inside_the_figure(hand_study):
    hand_study.name = "example: SmolLM2 demonstration labels (made by a rule, not by people)"
    hand_study.save()
    svg = figure2_image(report_build(study=hand_study), "svg").decode()
    texts = re.findall(r">([^<>]+)</text>", svg)
    start = next(i for i, text in enumerate(texts) if text.startswith("Figure 2 — "))
    # Two lines, each a text of its own: the figure no longer widens (or clips) for it.
    lines = texts[start : start + 2]
    assert " ".join(lines) == f"Figure 2 — {hand_study.name}"
    x = re.findall(r'transform="translate\(([\d.]+) [\d.]+\)">Figure 2 — ', svg)
    assert x and float(x[0]) > 0
