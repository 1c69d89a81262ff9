"""The §5 composition bench (docs/benchmarks.md, "Composition (§5)"): on
``builtin:smollm2-135m``, the time of ``mining.core.composition.compose`` over N prefixes
of the WikiText-103 validation text (one a sentence, ending at a real token drawn with a
seed, as the composition job draws them) against the forward-only time of the same
prefixes, and the one-off time of the memories' own top tokens (``memory_tops``).

The forward-only pass runs the same batches as ``compose`` (``prefix_batches``: each
sentence cut after its prefix, shortest first) through the base model, then projects
each prefix's last hidden state on the vocabulary for the model's prediction. It runs
batch by batch between ``compose``'s own batches (its ``progress`` callback), so that
both see the same load on this shared host; its time is not counted in ``compose``'s.

Budgets (the issue): ``compose`` at most 3x the forward-only time, and 4,000 prefixes in
at most 10 minutes, the memory tops included (projected: 4x the time per 1,000 prefixes,
setup included, plus the memory tops once). Run from the repository root:
``python bench/composition.py [--prefixes 1000]``. It prints its figures and the budgets;
it exits non-zero only when something crashes, never on a missed budget. No Django.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from mining.core import LoadedModel, MineConfig, load_model  # noqa: E402
from mining.core.composition import (  # noqa: E402
    affine_final_norm,
    compose,
    memory_tops,
    prefix_batches,
)
from mining.core.pipeline import build_corpus_store  # noqa: E402
from mining.core.store import CorpusStore  # noqa: E402

CORPUS = (REPO / ".." / "shared" / "corpora" / "wikitext103-valid" / "wiki.valid.tokens").resolve()
MODEL = "builtin:smollm2-135m"
DEFAULT_PREFIXES = 1000
BATCH_SIZE = 32  # compose's default
SEED = 0
RATIO_BUDGET = 3.0
PROJECTED_PREFIXES = 4000  # the paper's §5 used 4,000 prefixes
PROJECTED_BUDGET_S = 600.0
# Sentences read for N prefixes: a few of the validation text's are empty once tokenized.
SENTENCE_SLACK = 1.05


def bench_prefixes(store: CorpusStore, n: int, seed: int) -> list[tuple[int, int]]:
    """One prefix per sentence, the first ``n`` sentences with a real token, each ending
    at a real token drawn uniformly with ``seed``."""
    rng = np.random.default_rng(seed)
    out = []
    for s in range(len(store)):
        real = np.flatnonzero(~store.special(s))
        if real.size:
            out.append((s, int(real[rng.integers(real.size)])))
        if len(out) == n:
            break
    return out


def forward_only(
    loaded: LoadedModel, ids: np.ndarray, present: np.ndarray, positions: np.ndarray
) -> None:
    """One batch as ``compose`` runs it, without its hooks and projections: the base
    model, then the model's prediction at each prefix's last token."""
    device = loaded.device
    last = torch.from_numpy(positions).to(device)
    with torch.inference_mode():
        hidden = loaded.body(
            input_ids=torch.from_numpy(ids).to(device),
            attention_mask=torch.from_numpy(present.astype(np.int64)).to(device),
            use_cache=False,
        ).last_hidden_state  # [b, width, d]
        at_end = hidden[torch.arange(hidden.shape[0], device=device), last].float()
        loaded.value_logits(at_end).argmax(dim=1)


def interleaved(
    loaded: LoadedModel,
    store: CorpusStore,
    prefixes: list[tuple[int, int]],
    tops: dict[str, np.ndarray],
    batch_size: int,
) -> tuple[float, float]:
    """(forward-only seconds, compose seconds) over ``prefixes``: after each of
    compose's batches, the same batch forward-only, timed apart."""
    pad = loaded.tokenizer.pad_token_id or 0
    batches = prefix_batches(store, np.asarray(prefixes, dtype=np.int64), batch_size, pad)
    clock = {"compose": 0.0, "forward": 0.0, "mark": 0.0}

    def after_batch(_done: int, _total: int) -> None:
        now = time.perf_counter()
        clock["compose"] += now - clock["mark"]
        _rows, ids, present, positions = next(batches)
        forward_only(loaded, ids, present, positions)
        clock["mark"] = time.perf_counter()
        clock["forward"] += clock["mark"] - now

    clock["mark"] = time.perf_counter()
    compose(loaded, store, prefixes, batch_size=batch_size, memory_tops=tops, progress=after_batch)
    clock["compose"] += time.perf_counter() - clock["mark"]  # the figures after the last batch
    return clock["forward"], clock["compose"]


def verdict(ok: bool) -> str:
    return "OK" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--prefixes", type=int, default=DEFAULT_PREFIXES)
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
    parser.add_argument("--model", default=MODEL)
    args = parser.parse_args()
    if not CORPUS.is_file():
        print(f"composition bench: corpus {CORPUS} is absent; nothing measured")
        return 0
    started = time.perf_counter()
    loaded = load_model(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = MineConfig(
            model=args.model,
            corpus=str(CORPUS),
            max_sentences=int(args.prefixes * SENTENCE_SLACK) + 1,
        )
        store = build_corpus_store(cfg, loaded, f"{tmp}/store")
        prefixes = bench_prefixes(store, args.prefixes, SEED)
        n = len(prefixes)
        tops_started = time.perf_counter()
        tops = memory_tops(loaded)
        tops_s = time.perf_counter() - tops_started
        # Warm up both paths (allocator, kernels, first touch of E and of the store).
        interleaved(loaded, store, prefixes[: args.batch_size], tops, args.batch_size)
        fwd_s, compose_s = interleaved(loaded, store, prefixes, tops, args.batch_size)
        mean_len = float(np.mean([p + 1 for _, p in prefixes]))
        del store
    per = 1000 / n
    ratio = compose_s / fwd_s
    projected = compose_s * PROJECTED_PREFIXES / n + tops_s
    norm = affine_final_norm(loaded)
    path = "generic" if norm is None else "affine, " + ("LayerNorm" if norm.centred else "RMSNorm")
    where = f"CPU x{torch.get_num_threads()}" if loaded.device.type == "cpu" else str(loaded.device)
    print(
        f"composition: {n} prefixes on {args.model}: forward-only {fwd_s * per:.1f} s, "
        f"compose {compose_s * per:.1f} s (per 1,000), ratio {ratio:.2f} "
        f"(budget <= {RATIO_BUDGET:.1f}) {verdict(ratio <= RATIO_BUDGET)}"
    )
    print(
        f"composition memory tops: {tops_s:.1f} s once (argmax of v_i·E for "
        f"{loaded.n_layers} x {loaded.d_ff:,} keys, {len(tops)} variant(s); mining's merge "
        "computes them, compose reads them)"
    )
    print(
        f"composition {PROJECTED_PREFIXES:,} prefixes: projected {projected:.0f} s "
        f"({PROJECTED_PREFIXES // 1000} x compose per 1,000 + memory tops once) "
        f"(budget <= {PROJECTED_BUDGET_S:.0f} s) {verdict(projected <= PROJECTED_BUDGET_S)}"
    )
    print(
        f"composition bench: {where}, {loaded.dtype}, batch {args.batch_size}, mean prefix "
        f"{mean_len:.1f} tokens, projection path {path}; {time.perf_counter() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
