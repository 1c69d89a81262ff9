"""The report's ``composition`` and ``sparsity`` sections (docs/composition.md): the
figures stored on the study, cut to the report's layers, with what the paper measured
beside them, and as rows of the long CSV table."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

# What the paper measured, and on which model: every caption names it, so that nobody
# reads a figure of the study's model as a replication of that one.
PAPER_MODEL = (
    "Geva et al. 2021 measured a 16-layer language model with d_ff 4,096 and no final "
    "norm, on WikiText-103; the figures here are the study's own model on its own corpus"
)
PAPER = {
    "active_share": "Figure 7: 10–50% of the 4,096 memories active (m_i > 0) per layer, "
    "fewest near layer 10.",
    "none_agree_share": "Figure 8: in at least about 68% of prefixes in every layer, the "
    "layer's prediction is the top token of none of its active memories.",
    "residual_final_share": "Figure 9: about a third of the final predictions already "
    "decided in the bottom layers, rising from layer 10.",
    "change": "Figure 11: where the FFN changes the residual's top token, the new one is "
    "rarely the FFN's own: most changes are compositions.",
    "final_prob_mean": "Figure 10: the residual's probability of the final prediction "
    "rises through the layers.",
    "sparsity": "The paper reports no Gini or density figures: sparsity is ffkv's own "
    "reading of the mining pass, beside Figure 7.",
}
READINGS = ("without_final_norm", "with_final_norm")
CHANGE = ("residual", "ffn", "neither")
ENCODER = "The study's model is an encoder: it predicts no next token, so only sparsity applies."
NOT_COMPUTED = (
    "Not computed yet: the composition analysis runs as a job (report page or manage.py compose)."
)


def _keep(rows: Iterable[dict[str, Any]], layers: tuple[int, ...] | None) -> list[dict[str, Any]]:
    return [row for row in rows if layers is None or row["layer"] in layers]


def composition_section(
    stored: dict[str, Any], *, is_causal: bool, layers: tuple[int, ...] | None
) -> dict[str, Any]:
    """``report.json``'s ``composition``: ``applies`` and ``reason`` always; the stored
    figures (``Study.composition``) where there are some."""
    base = {"applies": is_causal, "paper": {**PAPER, "model": PAPER_MODEL}}
    if not is_causal:
        return {**base, "reason": ENCODER, "layers": []}
    if not stored or not stored.get("layers"):
        return {**base, "reason": NOT_COMPUTED, "layers": []}
    return {**stored, **base, "reason": None, "layers": _keep(stored["layers"], layers)}


def sparsity_section(stored: dict[str, Any], *, layers: tuple[int, ...] | None) -> dict[str, Any]:
    """``report.json``'s ``sparsity``: the mining pass's figures (empty ``layers`` for a
    study without them: imported, or mined before they were counted)."""
    return {
        **stored,
        "paper": PAPER["sparsity"],
        "layers": _keep(stored.get("layers", []), layers),
    }


def _readings(value: Any) -> list[tuple[str, Any]]:
    """A figure that involves the unembedding: one (reading, value) per reading."""
    if isinstance(value, dict):
        return [(reading, value.get(reading)) for reading in READINGS if reading in value]
    return [("", value)]


def composition_csv_rows(report: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """Rows of the report's CSV (its columns up to n): the view names the reading where
    the model has a final norm; n is the slice's prefixes (composition) or the positions
    the pass counted (sparsity)."""
    composition = report["composition"]
    n = composition.get("n_prefixes")
    for row in composition["layers"]:
        layer = row["layer"]
        for name in ("active_share", "active_share_tenth"):
            for stat, value in (row.get(name) or {}).items():
                yield ("composition", "", layer, "", f"{name}_{stat}", value, "", "", n)
        for name in ("none_agree_share", "agree_stopword_share", "residual_final_share"):
            for reading, value in _readings(row[name]):
                yield ("composition", reading, layer, "", name, value, "", "", n)
        for reading, value in _readings(row["final_prob_mean"]):
            yield ("composition", reading, layer, "", "final_prob_mean", value, "", "", n)
        for reading, value in _readings(row["change"]):
            for part in CHANGE:
                yield ("composition", reading, layer, "", f"change_{part}", value[part], "", "", n)
    sparsity = report["sparsity"]
    for row in sparsity["layers"]:
        layer, counted = row["layer"], sparsity.get("n_positions")
        for stat, value in row["density"].items():
            yield ("sparsity", "", layer, "", f"density_{stat}", value, "", "", counted)
        yield ("sparsity", "", layer, "", "gini", row["gini"], "", "", counted)
        yield (
            "sparsity",
            "",
            layer,
            "",
            "above_tenth_of_peak",
            row["above_tenth_of_peak"],
            "",
            "",
            counted,
        )
