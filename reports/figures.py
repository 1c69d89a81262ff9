"""Figure 2 as a file: stacked bars per layer of the four labels' shares (matplotlib)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from annotate.labels import LABEL_KEYS, LABELS

# One colour per label, shared with the SPA's chart (its Figure2Chart.tsx imports the
# same file), so that the page, its downloads and `manage.py report` look alike.
# not-covered is grey so that the covered share reads as the coloured height of a bar.
PALETTE_FILE = (
    Path(__file__).resolve().parent.parent
    / "frontend"
    / "src"
    / "features"
    / "report"
    / "lib"
    / "figure2Palette.json"
)
PALETTE: dict[str, str] = json.loads(PALETTE_FILE.read_text(encoding="utf-8"))
COLOURS = tuple(PALETTE[label] for label in LABELS)


# Inches: a bar slot, the room around the plot, the narrowest figure.
BAR_INCHES = 0.45
MARGIN_INCHES = 1.6
MIN_WIDTH_INCHES = 4.5
HEIGHT_INCHES = 4.0
TITLE_POINTS = 9
# DejaVu Sans at 9 pt averages about 0.075 in a character; wrapping a little early
# keeps every line of the title inside the figure.
TITLE_CHARS_PER_INCH = 12


def layer_ranges(layers: list[int]) -> str:
    """``[4, 5, 6, 9]`` as ``"4–6, 9"``."""
    parts: list[str] = []
    start = prev = None
    for layer in [*layers, None]:
        if layer is not None and prev is not None and layer == prev + 1:
            prev = layer
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}–{prev}")
        start = prev = layer
    return ", ".join(parts)


def figure2_image(report: dict[str, Any], fmt: str) -> bytes:
    """The pooled Figure 2 of ``report`` as SVG or PNG bytes: a bar per layer with
    ratings and one over all layers, as on the report page. Layers without ratings (a
    mined study has keys in every layer, its first annotations in the first ones) are
    named under the plot instead of drawn as blank slots, which left most of the figure
    empty. The SVG is reproducible (fixed hash salt, no date), so the same report gives
    the same file."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pooled = report["figure2"]["pooled"]
    drawn = [row for row in pooled["layers"] if row["n"] > 0]
    left_out = [row["layer"] for row in pooled["layers"] if row["n"] <= 0]
    rows = [*drawn, pooled["overall"]]
    names = [str(row["layer"]) for row in drawn] + ["all"]
    positions = [float(i) for i in range(len(drawn))] + [len(drawn) + 0.4]
    width = max(MIN_WIDTH_INCHES, BAR_INCHES * len(rows) + MARGIN_INCHES)
    title = "\n".join(
        textwrap.wrap(
            f"Figure 2 — {report['study']['name']}",
            width=max(20, int(width * TITLE_CHARS_PER_INCH)),
        )
    )
    with matplotlib.rc_context({"svg.hashsalt": "ffkv", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(width, HEIGHT_INCHES), dpi=150)
        try:
            bottom = [0.0] * len(rows)
            for key, label, colour in zip(LABEL_KEYS, LABELS, COLOURS, strict=True):
                heights = [(row["shares"][key] or 0.0) * 100 for row in rows]
                ax.bar(positions, heights, bottom=bottom, label=label, color=colour, width=0.8)
                bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
            ax.set_xticks(positions, names)
            ax.set_xlim(positions[0] - 0.6, positions[-1] + 0.6)
            ax.set_xlabel("layer")
            ax.set_ylabel("% of trigger prefixes")
            ax.set_ylim(0, 100)
            ax.set_title(title, fontsize=TITLE_POINTS, pad=24)
            # One row above the plot: a legend beside it took a third of a narrow figure.
            ax.legend(
                loc="lower center",
                bbox_to_anchor=(0.5, 1.0),
                ncol=len(LABELS),
                fontsize=7,
                frameon=False,
                handlelength=1.0,
                columnspacing=1.0,
            )
            if left_out:
                fig.text(
                    0.01,
                    0.01,
                    f"Layers without ratings (not drawn): {layer_ranges(left_out)}",
                    fontsize=7,
                    color="#5a606b",
                )
            fig.tight_layout(rect=(0, 0.04 if left_out else 0, 1, 1))
            out = io.BytesIO()
            metadata = {"Date": None} if fmt == "svg" else {}
            fig.savefig(out, format=fmt, metadata=metadata)
            return out.getvalue()
        finally:
            plt.close(fig)
