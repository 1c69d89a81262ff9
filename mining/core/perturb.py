"""Prefix perturbation (paper §3.2, Figure 3; docs/science.md, "§3.2: prefix perturbation").

For each of a key's top-n trigger examples (n = 50 in the paper), remove the first,
the last or a random real token of the prefix tokens[0..t], run the shortened sentence
and measure the key's coefficient at the prefix's last remaining token. The relative
change is (m_after - m_before) / |m_before|, with m_before measured in the same pass on
the unmodified sentence (so batching effects cancel).

Special tokens (BOS, [CLS], [SEP]) are never removed. For encoders the rest of the
sentence (the suffix) is kept, as the coefficient depends on it. A prefix with a
single real token has nothing to remove and is skipped.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from .errors import MiningError
from .miner import SENTINEL, Partial, partial_coefficient, unpack_sentences
from .models import LoadedModel
from .store import CorpusStore

KINDS = ("first", "last", "random")


@dataclass
class KeyPerturbation:
    layer: int  # 0-based
    index: int
    # kind -> relative change per trigger example that could be perturbed, in rank order
    changes: dict[str, list[float]] = field(default_factory=dict)

    def mean(self, kind: str) -> float | None:
        values = self.changes.get(kind) or []
        return float(np.mean(values)) if values else None


@dataclass
class _Probe:
    key: tuple[int, int]
    kind: str  # "none" for the unmodified sentence
    example: int
    ids: np.ndarray
    real: np.ndarray
    position: int


def _probes(
    store: CorpusStore,
    key: tuple[int, int],
    sentence: int,
    pos: int,
    example: int,
    causal: bool,
    rng: random.Random,
) -> list[_Probe]:
    ids, special = store.tokens(sentence), store.special(sentence)
    if causal:
        ids, special = ids[: pos + 1], special[: pos + 1]
    prefix_real = [j for j in range(pos + 1) if not special[j]]
    if len(prefix_real) < 2:
        return []
    probes = [_Probe(key, "none", example, ids, ~special, pos)]
    targets = {"first": prefix_real[0], "last": prefix_real[-1], "random": rng.choice(prefix_real)}
    for kind in KINDS:
        drop = targets[kind]
        keep = np.ones(ids.size, dtype=bool)
        keep[drop] = False
        # The prefix's last remaining token: the trigger moves one left, or is dropped
        # and its predecessor becomes the last token of the shortened prefix.
        probes.append(_Probe(key, kind, example, ids[keep], ~special[keep], pos - 1))
    return probes


def perturb(
    loaded: LoadedModel,
    store: CorpusStore,
    partial: Partial,
    keys: Sequence[tuple[int, int]],
    *,
    top_n: int = 50,
    seed: int = 0,
    batch_size: int = 32,
) -> list[KeyPerturbation]:
    """Relative coefficient changes for first/last/random token removal per key."""
    n_layers, d_ff, keep_k = partial.keys.shape
    if top_n > keep_k:
        raise MiningError(f"top_n ({top_n}) exceeds the {keep_k} trigger examples kept per key")
    rng = random.Random(seed)
    causal = bool(partial.meta["fingerprint"]["causal"])
    probes: list[_Probe] = []
    for layer, index in keys:
        if not (0 <= layer < n_layers and 0 <= index < d_ff):
            raise MiningError(f"key ({layer}, {index}) out of range")
        row = partial.keys[layer, index]
        live = row != SENTINEL
        sentences = unpack_sentences(row[live])[:top_n].tolist()
        positions = partial.positions[layer, index][live][:top_n].tolist()
        for example, (s, t) in enumerate(zip(sentences, positions, strict=True)):
            probes.extend(_probes(store, (layer, index), s, t, example, causal, rng))
    measured = np.full(len(probes), np.nan, dtype=np.float64)
    order = sorted(range(len(probes)), key=lambda i: probes[i].ids.size)
    pad = loaded.tokenizer.pad_token_id or 0
    device = loaded.device
    layers = sorted({layer for layer, _ in keys})
    current: dict[str, torch.Tensor] = {}

    def hook(layer: int, m: torch.Tensor) -> None:
        rows = current["layer"] == layer
        if rows.any():
            idx = rows.nonzero()[:, 0]
            values = m[idx, current["pos"][idx], current["key"][idx]]  # [n]
            current["out"][idx] = values.float()

    # The coefficient the run ranked, so that m_before is the mined value.
    with torch.inference_mode(), loaded.capture(hook, layers, partial_coefficient(partial)):
        for a in range(0, len(order), batch_size):
            chunk = [probes[i] for i in order[a : a + batch_size]]
            width = max(p.ids.size for p in chunk)
            ids = np.full((len(chunk), width), pad, dtype=np.int64)
            present = np.zeros((len(chunk), width), dtype=np.int64)
            for r, p in enumerate(chunk):
                ids[r, : p.ids.size] = p.ids
                present[r, : p.ids.size] = 1
            current["layer"] = torch.tensor([p.key[0] for p in chunk], device=device)
            current["key"] = torch.tensor([p.key[1] for p in chunk], device=device)
            current["pos"] = torch.tensor([p.position for p in chunk], device=device)
            current["out"] = torch.full((len(chunk),), float("nan"), device=device)
            loaded.forward(torch.from_numpy(ids).to(device), torch.from_numpy(present).to(device))
            measured[order[a : a + batch_size]] = current["out"].cpu().numpy()
    before: dict[tuple[tuple[int, int], int], float] = {}
    for p, value in zip(probes, measured, strict=True):
        if p.kind == "none":
            before[(p.key, p.example)] = float(value)
    results = {key: KeyPerturbation(key[0], key[1], {k: [] for k in KINDS}) for key in keys}
    for p, value in zip(probes, measured, strict=True):
        if p.kind == "none":
            continue
        base = before[(p.key, p.example)]
        if base != 0.0:
            results[p.key].changes[p.kind].append((float(value) - base) / abs(base))
    return [results[key] for key in keys]


def perturbation_by_layer(results: Sequence[KeyPerturbation]) -> dict[int, dict[str, float]]:
    """Figure 3: mean relative change per layer (0-based) and kind, over all examples."""
    pooled: dict[int, dict[str, list[float]]] = {}
    for r in results:
        layer = pooled.setdefault(r.layer, {k: [] for k in KINDS})
        for kind in KINDS:
            layer[kind].extend(r.changes.get(kind, []))
    return {
        layer: {kind: float(np.mean(v)) if v else float("nan") for kind, v in kinds.items()}
        for layer, kinds in sorted(pooled.items())
    }
