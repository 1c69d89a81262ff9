"""Figure 2 as a file (reports/figures.py): the SPA's colours, and a layout without an
empty half."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from reports.figures import PALETTE_FILE, figure2_image
from reports.report import report_build
from reports.stats.labels import LABELS

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
SPA_CHART = REPO / "frontend" / "src" / "pages" / "manage" / "report" / "Figure2Chart.tsx"


def test_the_server_figure_and_the_spa_chart_share_one_palette(hand_study):
    palette = json.loads(PALETTE_FILE.read_text(encoding="utf-8"))
    assert list(palette) == list(LABELS)
    # The SPA's chart takes its colours from the same file and writes none of its own.
    chart = SPA_CHART.read_text(encoding="utf-8")
    assert f"from './{PALETTE_FILE.name}'" in chart
    assert not [colour for colour in palette.values() if colour.lower() in chart.lower()]
    # The server's SVG fills its bars and legend with exactly these colours.
    svg = figure2_image(report_build(study=hand_study), "svg").decode()
    fills = {colour.lower() for colour in re.findall(r"fill: ?(#[0-9a-fA-F]{6})", svg)}
    assert {colour.lower() for colour in palette.values()} <= fills
