"""Figure 2 as a file: stacked bars per layer of the four labels' shares (matplotlib)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from .stats.labels import LABEL_KEYS, LABELS

# One colour per label, shared with the SPA's chart (its Figure2Chart.tsx imports the
# same file), so that the page, its downloads and `manage.py report` look alike.
# not-covered is grey so that the covered share reads as the coloured height of a bar.
PALETTE_FILE = (
    Path(__file__).resolve().parent.parent
    / "frontend"
    / "src"
    / "pages"
    / "manage"
    / "report"
    / "figure2Palette.json"
)
PALETTE: dict[str, str] = json.loads(PALETTE_FILE.read_text(encoding="utf-8"))
COLOURS = tuple(PALETTE[label] for label in LABELS)


def figure2_image(report: dict[str, Any], fmt: str) -> bytes:
    """The pooled Figure 2 of ``report`` as SVG or PNG bytes. The SVG is reproducible
    (fixed hash salt, no date), so the same report gives the same file."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["figure2"]["pooled"]["layers"]
    layers = [str(row["layer"]) for row in rows]
    with matplotlib.rc_context({"svg.hashsalt": "ffkv", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(layers) + 2), 3.6), dpi=150)
        try:
            bottom = [0.0] * len(rows)
            for key, label, colour in zip(LABEL_KEYS, LABELS, COLOURS, strict=True):
                heights = [(row["shares"][key] or 0.0) * 100 for row in rows]
                ax.bar(layers, heights, bottom=bottom, label=label, color=colour, width=0.8)
                bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
            ax.set_xlabel("layer")
            ax.set_ylabel("% of trigger prefixes")
            ax.set_ylim(0, 100)
            ax.set_title(f"Figure 2 — {report['study']['name']}", fontsize=9)
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
            fig.tight_layout()
            out = io.BytesIO()
            metadata = {"Date": None} if fmt == "svg" else {}
            fig.savefig(out, format=fmt, metadata=metadata)
            return out.getvalue()
        finally:
            plt.close(fig)
