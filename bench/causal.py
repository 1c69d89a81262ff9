"""Causal probe benchmarks (docs/causal.md): causal tracing of a 10-token prompt on
``builtin:smollm2-135m`` with ROME's defaults (budget <= 120 s on 2 CPU cores), and one
ablation of 100 keys over 500 WikiText prefixes (budget <= 60 s); then the fact the demo
uses: does SmolLM2 put " Paris" first after "The capital of France is" and after "The
Eiffel Tower is in", with what p, and where does the tracing of that fact peak.

Both budgets are absolute times on a machine whose speed varies between sessions, so the
bench also measures SmolLM2's forward-only speed in the same run and says what each probe's
work would take at that speed (the rest is overhead: hooks, caches, copies).

Run from the repository root: ``python bench/causal.py``. It prints its figures and the
budgets; it exits non-zero only when something crashes, never on a missed budget. No
Django: only ``mining.core``.
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
from mining.core.causal import TRACE_SAMPLES, TRACE_WINDOW, ablation, trace  # noqa: E402
from mining.core.models import BUILTIN_SMOLLM2  # noqa: E402
from mining.core.pipeline import build_corpus_store  # noqa: E402

CORPUS = (REPO / ".." / "shared" / "corpora" / "wikitext103-valid" / "wiki.valid.tokens").resolve()
TRACE_BUDGET_S = 120.0
ABLATION_BUDGET_S = 60.0
# A 10-token prompt on SmolLM2's tokenizer: The| E|iffel| Tower| is| located| in| the| city| of
TRACE_PROMPT = "The Eiffel Tower is located in the city of"
SUBJECT = "The Eiffel Tower"
ANSWER = "Paris"
FACT_PROMPTS = ("The capital of France is", "The Eiffel Tower is in")
ABLATION_KEYS = 100
ABLATION_PREFIXES = 500
SEED = 0


def forward_speed(loaded: LoadedModel, ids: torch.Tensor, rounds: int = 3) -> float:
    """Forward-only tokens per second of the base model on ``ids`` [b, width] (the best of
    ``rounds``, after one warm-up)."""
    best = float("inf")
    with torch.inference_mode():
        loaded.body(input_ids=ids[:2], use_cache=False)
        for _ in range(rounds):
            start = time.perf_counter()
            loaded.body(input_ids=ids, use_cache=False)
            best = min(best, time.perf_counter() - start)
    return ids.numel() / best


def trace_work(
    n_layers: int, n_tokens: int, subject_start: int, samples: int, window: int
) -> float:
    """What the tracing computes, in full-model tokens: per restored position t (from the
    subject's first token), per configuration, samples × (n_tokens − t) positions through
    the layers from the one where it first differs from the corrupted run; plus the clean
    and corrupted runs. The head's projections are left out."""
    layers = np.arange(n_layers)
    starts = np.concatenate(
        [layers + 1, np.maximum(0, layers - window // 2), np.maximum(0, layers - window // 2)]
    )
    per_position = samples * (n_layers - starts).sum() / n_layers  # full-model token passes
    positions = sum(n_tokens - t for t in range(subject_start, n_tokens))
    return per_position * positions + (1 + samples) * n_tokens


def facts(loaded: LoadedModel) -> None:
    paris = loaded.tokenizer(" Paris", add_special_tokens=False)["input_ids"]
    for prompt in FACT_PROMPTS:
        ids = loaded.tokenizer(prompt, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            logits = loaded.model(input_ids=ids).logits[0, -1].float()
        probs = torch.softmax(logits, dim=-1)
        top = int(probs.argmax())
        text = loaded.tokenizer.decode([top])
        print(
            f"causal fact: after {prompt!r} SmolLM2's top token is {text!r} "
            f"(p {float(probs[top]):.3f}); ' Paris' {'IS' if [top] == paris else 'is NOT'} "
            "first, p(' Paris') "
            f"{float(probs[paris[0]]):.3f}"
        )


def describe_peaks(got: dict, label: str) -> None:
    """The largest indirect effect of each kind over every site, and at the last subject
    token (where ROME's averages peak), with the keys listed there."""
    tokens = got["tokens"]
    last = got["last_subject"]
    overall, at_subject = [], []
    for kind in ("hidden", "mlp", "attn"):
        peak = got["peaks"][kind]
        overall.append(
            f"{kind} layer {peak['layer']} at {tokens[peak['token']]!r}: {peak['effect']:+.3f}"
        )
        column = np.array(got["effects"][kind])[:, last]
        layer = int(np.argmax(column))
        at_subject.append(f"{kind} layer {layer + 1}: {column[layer]:+.3f}")
    keys = got["keys"]
    top = ", ".join(f"{k['layer']}:{k['index']} ({k['score']:+.3f})" for k in keys["top"][:3])
    print(
        f"causal peak [{label}]: p clean {got['p_clean']:.3f}, corrupted "
        f"{got['p_corrupted']:.3f}; largest indirect effects: {'; '.join(overall)}; at the "
        f"last subject token {tokens[last]!r}: {'; '.join(at_subject)}; top keys of that "
        f"MLP layer by m_i (v_i . grad): {top}"
    )


def bench_trace(loaded: LoadedModel) -> None:
    n_tokens = len(loaded.tokenizer(TRACE_PROMPT)["input_ids"])
    ids = loaded.tokenizer([TRACE_PROMPT] * 64, return_tensors="pt")["input_ids"]
    speed = forward_speed(loaded, ids)  # just before: this host's speed varies
    start = time.perf_counter()
    got = trace(loaded, TRACE_PROMPT, SUBJECT, ANSWER)
    seconds = time.perf_counter() - start
    work = trace_work(
        loaded.n_layers, n_tokens, got["subject_span"][0], TRACE_SAMPLES, TRACE_WINDOW
    )
    ok = "OK" if seconds <= TRACE_BUDGET_S else "MISSED"
    print(
        f"causal trace: {seconds:.1f} s for a {n_tokens}-token prompt ({TRACE_PROMPT!r}, "
        f"ROME's defaults: noise 3 sigma, {TRACE_SAMPLES} samples, windows of {TRACE_WINDOW}; "
        f"3 x {loaded.n_layers} x {n_tokens} sites) (budget <= {TRACE_BUDGET_S:.0f} s) {ok}; "
        f"ratio to budget {seconds / TRACE_BUDGET_S:.2f}; its work is {work:,.0f} full-model "
        f"tokens, {work / speed:.1f} s at the forward-only speed measured just before "
        f"({speed:.0f} tok/s, 64 x {n_tokens} tokens)"
    )
    describe_peaks(got, TRACE_PROMPT)


def ablation_examples(loaded: LoadedModel, tmp: str) -> list[tuple[list[int], int]]:
    """500 prefixes of WikiText validation sentences, each cut at a seeded random position
    with a next token, the target that next token."""
    cfg = MineConfig(model=BUILTIN_SMOLLM2, corpus=str(CORPUS), max_sentences=2 * ABLATION_PREFIXES)
    store = build_corpus_store(cfg, loaded, f"{tmp}/store")
    rng = np.random.default_rng(SEED)
    long_enough = np.flatnonzero(np.asarray(store.lengths) >= 2)
    chosen = np.sort(rng.choice(long_enough, size=ABLATION_PREFIXES, replace=False))
    examples = []
    for s in chosen:  # building the inputs, not a hot path
        tokens = store.tokens(int(s))
        position = int(rng.integers(0, len(tokens) - 1))
        examples.append((tokens[: position + 1].tolist(), int(tokens[position + 1])))
    return examples


def forward_only_batches(loaded: LoadedModel, examples: list, batch_size: int = 32) -> float:
    """Seconds of one plain forward over ``examples``' prefixes in the ablation's batches
    (sorted by length, ``batch_size`` at a time, right-padded): its work, once."""
    pad = loaded.tokenizer.pad_token_id or 0
    prefixes = sorted((p for p, _ in examples), key=len)
    start = time.perf_counter()
    with torch.inference_mode():
        for a in range(0, len(prefixes), batch_size):
            batch = prefixes[a : a + batch_size]
            width = max(len(p) for p in batch)
            ids = torch.tensor([p + [pad] * (width - len(p)) for p in batch])
            mask = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in batch])
            loaded.body(input_ids=ids, attention_mask=mask, use_cache=False)
    return time.perf_counter() - start


def bench_ablation(loaded: LoadedModel) -> None:
    with tempfile.TemporaryDirectory(prefix="ffkv-causal-bench-") as tmp:
        examples = ablation_examples(loaded, tmp)
    rng = np.random.default_rng(SEED)
    flat = rng.choice(loaded.n_layers * loaded.d_ff, size=ABLATION_KEYS, replace=False)
    keys = [(int(i) // loaded.d_ff, int(i) % loaded.d_ff) for i in np.sort(flat)]
    n_tokens = sum(len(p) for p, _ in examples)
    forward_only_batches(loaded, examples[:32])  # warm-up
    plain = forward_only_batches(loaded, examples)
    start = time.perf_counter()
    got = ablation(loaded, {"random": examples}, keys, seed=SEED)
    seconds = time.perf_counter() - start
    overall = got["sets"]["random"]["overall"]
    ok = "OK" if seconds <= ABLATION_BUDGET_S else "MISSED"
    print(
        f"causal ablation: {seconds:.1f} s for {ABLATION_KEYS} keys (zeroed) beside "
        f"{ABLATION_KEYS} control keys over {len(examples)} WikiText prefixes ({n_tokens:,} "
        f"tokens; each batch in 3 copies: clean, ablated, control) (budget <= "
        f"{ABLATION_BUDGET_S:.0f} s) {ok}; ratio to budget {seconds / ABLATION_BUDGET_S:.2f}; "
        f"one plain forward over the same batches took {plain:.1f} s just before "
        f"(x3 = {3 * plain:.1f} s)"
    )
    print(
        f"causal ablation result: mean change of log p {overall['ablated']['mean']:+.4f} "
        f"[{overall['ablated']['low']:+.4f}, {overall['ablated']['high']:+.4f}], control "
        f"{overall['control']['mean']:+.4f} [{overall['control']['low']:+.4f}, "
        f"{overall['control']['high']:+.4f}]"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-ablation", action="store_true")
    parser.add_argument("--skip-trace", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(SEED)
    started = time.perf_counter()
    loaded = load_model(BUILTIN_SMOLLM2)
    load_s = time.perf_counter() - started
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"causal setup: {BUILTIN_SMOLLM2} loaded in {load_s:.1f} s; CPU "
        f"x{torch.get_num_threads()}, load average {load:.2f} at the start"
    )
    facts(loaded)
    if not args.skip_trace:
        bench_trace(loaded)
        describe_peaks(trace(loaded, FACT_PROMPTS[1], SUBJECT, ANSWER), FACT_PROMPTS[1])
    if not args.skip_ablation:
        if CORPUS.is_file():
            bench_ablation(loaded)
        else:
            print(f"causal ablation: corpus {CORPUS} is absent; nothing measured")
    print(f"causal bench: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
