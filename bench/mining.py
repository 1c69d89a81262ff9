"""Mining benchmarks (docs/benchmarks.md): overhead of mining over a plain forward pass for
``builtin:minilm`` and ``builtin:smollm2-135m`` (each its own ratio; mining draws the
samples below the top of its 10 sampled keys a layer, and a second round without them
prints what the samples cost), the time of the finalize (per-token coefficients
re-run), memory flatness in the corpus size, and FLOPs per token with a GPU-time estimate.

Run from the repository root: ``python bench/mining.py`` (``--model`` to choose,
``--device cuda --dtype bfloat16`` on a GPU; ``--model config:gpt2-small`` is a
GPT-2-small-sized model built from its config with random weights and SmolLM2's
tokenizer, for GPU runs with nothing to download). It prints its figures and the
budgets; it exits non-zero only when something crashes, never on a missed budget.
No Django: only ``mining.core``. Then the scale-out bench (``bench/mining_scale.py``,
in a child process with Django, PostgreSQL and Redis) times one run for 1, 2 and 3
worker processes: ``--workers 1,2,3`` (the default) chooses the counts, ``--workers ""``
skips it, ``--only-workers`` runs it alone.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from mining.core import (  # noqa: E402
    LoadedModel,
    MineConfig,
    adapt,
    finalize,
    load_model,
    mine,
    mine_range,
)
from mining.core.miner import batch_plan, samples_keys  # noqa: E402
from mining.core.models import DTYPES, builtin_smollm2_file  # noqa: E402
from mining.core.pipeline import build_corpus_store  # noqa: E402

CORPUS = (REPO / ".." / "shared" / "corpora" / "wikitext103-valid" / "wiki.valid.tokens").resolve()
MODEL = "builtin:minilm"  # the memory bench's model
# Sentences of the throughput run per model: MiniLM takes the whole validation text
# (7,963 unique sentences); SmolLM2 is ~6x slower per token on the CPU, so a slice.
THROUGHPUT_SENTENCES: dict[str, int | None] = {
    "builtin:minilm": None,
    "builtin:smollm2-135m": 1500,
}
DEFAULT_THROUGHPUT_SENTENCES = 1500
CONFIG_GPT2_SMALL = "config:gpt2-small"
THROUGHPUT_ROUNDS = 1
MEMORY_SENTENCES = 1000  # the 1x run; the 4x run mines 4000
MEMORY_MAX_TOKENS = 64
OVERHEAD_BUDGET = 0.90
MEMORY_BUDGET = 1.10
# bf16 dense peak of one H100 SXM (NVIDIA datasheet: 989 TFLOP/s; H200 has the same
# compute) and the share of it a batched encoder forward of this size reaches.
GPU_PEAK_FLOPS = 989e12
GPU_UTILISATION = 0.30
WIKITEXT103_TRAIN_TOKENS = 103_000_000


def forward_only(loaded, store, plan) -> int:
    """The same batches as mining, through the same base model, with no hooks."""
    pad = loaded.tokenizer.pad_token_id or 0
    tokens = 0
    with torch.inference_mode():
        for sentences in plan:
            ids, present, _ = store.batch(sentences, pad)
            loaded.forward(torch.from_numpy(ids), torch.from_numpy(present.astype(np.int64)))
            tokens += int(present.sum())
    return tokens


def interleaved_round(loaded, store, cfg, plan, samples_on=None) -> tuple[float, float, int, Any]:
    """One mining pass; after each of its batches the same batch goes through a
    forward-only pass. Interleaving batch by batch exposes both to the same machine
    load (this host is shared), which whole-pass timings are not. ``samples_on=False``:
    mining without the samples below the top."""
    clock = {"mine": 0.0, "forward": 0.0, "mark": 0.0, "batch": 0, "tokens": 0}

    def after_batch(_sentences: int, _tokens: int) -> None:
        now = time.perf_counter()
        clock["mine"] += now - clock["mark"]
        clock["tokens"] += forward_only(loaded, store, [plan[clock["batch"]]])
        clock["batch"] += 1
        clock["mark"] = time.perf_counter()
        clock["forward"] += clock["mark"] - now

    clock["mark"] = time.perf_counter()
    partial = mine_range(
        loaded, store, cfg, 0, len(store), progress=after_batch, samples_on=samples_on
    )
    clock["mine"] += time.perf_counter() - clock["mark"]  # the final merge
    assert partial.meta["tokens_done"] == clock["tokens"]
    return clock["forward"], clock["mine"], int(clock["tokens"]), partial


def load_for_bench(name: str, device: str, dtype: str) -> LoadedModel:
    if name != CONFIG_GPT2_SMALL:
        return load_model(name, device=device, dtype=dtype)
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    # GPT-2 small's shape (12 layers, d=768, d_ff=3072) with SmolLM2's tokenizer, whose
    # 49,152 ids fit GPT-2's 50,257 embeddings: a real size with nothing to download.
    gguf = builtin_smollm2_file()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config())
    model.to(device=device, dtype=DTYPES[dtype])  # type: ignore[call-arg]  # HF stub
    return adapt(model, tokenizer, CONFIG_GPT2_SMALL)


def bench_throughput(name: str, device: str, dtype: str, sentences: int | None) -> dict:
    cfg = MineConfig(
        model=name, corpus=str(CORPUS), max_sentences=sentences, device=device, dtype=dtype
    )
    loaded = load_for_bench(name, device, dtype)
    out: dict = {"loaded": loaded}
    with tempfile.TemporaryDirectory() as tmp:
        store = build_corpus_store(cfg, loaded, f"{tmp}/store")
        plan = batch_plan(store, 0, len(store), cfg)
        # Warm up both paths (allocator, kernels, first touch of the memory maps).
        forward_only(loaded, store, plan[: cfg.sort_window])
        mine_range(loaded, store, cfg, 0, min(cfg.block_size, len(store)))
        for label, samples_on in (("samples", None), ("plain", False)):
            fwd_time = mine_time = 0.0
            tokens = 0
            for _ in range(THROUGHPUT_ROUNDS):
                fwd, mined, tokens, partial = interleaved_round(
                    loaded, store, cfg, plan, samples_on
                )
                fwd_time += fwd
                mine_time += mined
            out[label] = (
                THROUGHPUT_ROUNDS * tokens / fwd_time,
                THROUGHPUT_ROUNDS * tokens / mine_time,
            )
            if label == "samples":
                # The finalize: texts, held-out ranks, the draw and the per-token re-run.
                keys = samples_keys(cfg, loaded.n_layers, loaded.d_ff)
                started = time.perf_counter()
                finalize(loaded, store, partial, keys, cfg.top_k, batch_size=cfg.batch_size)
                out["finalize"] = (time.perf_counter() - started, len(keys))
        out["avg_len"] = tokens / len(store)
        out["n"] = len(store)
    return out


def child_run(n_sentences: int) -> None:
    """One full mining run (load, read, store, mine, finalize); prints its peak RSS."""
    # Both runs cut sentences at the same length, which both corpora reach, so that
    # their largest batch (the activation peak) has the same shape: what is compared is
    # what grows with the number of sentences, not the longest sentence drawn.
    cfg = MineConfig(
        model=MODEL, corpus=str(CORPUS), max_sentences=n_sentences, max_tokens=MEMORY_MAX_TOKENS
    )
    result = mine(cfg)
    peak_kib = own_peak_kib()
    print(json.dumps({"peak_kib": peak_kib, "sentences": result.corpus["n_sentences"]}))


def own_peak_kib() -> int:
    """This process's peak RSS since its exec, in KiB. Not getrusage's ru_maxrss: Linux
    keeps that across fork and exec, so a child started by a parent holding two models
    reported the parent's 1.5 GiB for both runs (ratio 1.00 whatever the child did)."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # elsewhere: the best there is


def bench_memory() -> tuple[float, float]:
    peaks = []
    for n in (MEMORY_SENTENCES, 4 * MEMORY_SENTENCES):
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(n)],
            check=True,
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        report = json.loads(out.stdout.strip().splitlines()[-1])
        if report["sentences"] != n:
            raise RuntimeError(f"memory child mined {report['sentences']} sentences, not {n}")
        peaks.append(report["peak_kib"] / 1024)
    return peaks[0], peaks[1]


def flops_per_token(
    n_layers: int, d_model: int, d_ff: int, seq_len: float, ffn_mats: int = 2
) -> float:
    """Matmul FLOPs of one token through an encoder/decoder stack (2 per multiply-add):
    Q, K, V, O projections 4·d² (grouped-query attention's smaller K, V ignored), FFN
    ``ffn_mats``·d·d_ff (keys and values; 3 with a gate), attention scores and the
    weighted sum of values 2·seq_len·d; embeddings, norms, softmax and the LM head
    (never computed while mining) ignored."""
    per_layer = 2 * (4 * d_model * d_model + ffn_mats * d_model * d_ff + 2 * seq_len * d_model)
    return n_layers * per_layer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--model",
        action="append",
        help="repeatable; default: builtin:minilm and builtin:smollm2-135m",
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    parser.add_argument("--sentences", type=int, help="throughput sentences (default per model)")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory bench")
    parser.add_argument(
        "--workers",
        default="1,2,3",
        help='scale-out: worker process counts, comma-separated ("" skips it)',
    )
    parser.add_argument("--only-workers", action="store_true", help="only the scale-out bench")
    args = parser.parse_args()
    if args.child:
        child_run(args.child)
        return 0
    if args.only_workers:
        return scale_out(args.workers)
    if not CORPUS.is_file():
        print(f"mining bench: corpus {CORPUS} is absent; nothing measured")
        return 0
    started = time.perf_counter()
    where = (
        f"CPU x{torch.get_num_threads()}"
        if args.device == "cpu"
        else torch.cuda.get_device_name(torch.device(args.device))
    )
    ratios = []
    for name in args.model or list(THROUGHPUT_SENTENCES):
        torch.manual_seed(0)
        sentences = args.sentences or THROUGHPUT_SENTENCES.get(name, DEFAULT_THROUGHPUT_SENTENCES)
        got = bench_throughput(name, args.device, args.dtype, sentences)
        loaded, avg_len, n_sentences = got["loaded"], got["avg_len"], got["n"]
        fwd, mined = got["samples"]
        fwd_plain, mined_plain = got["plain"]
        ratios.append((name, fwd, mined))
        print(
            f"mining throughput: forward-only {fwd:.0f} tok/s, mining {mined:.0f} tok/s, "
            f"ratio {mined / fwd:.2f} (budget >= {OVERHEAD_BUDGET:.2f}) [{name}, "
            f"{args.dtype}, {n_sentences} WikiText validation sentences, {where}, "
            f"{THROUGHPUT_ROUNDS} round(s) interleaved batch by batch, samples below the "
            "top drawn]"
        )
        print(
            f"mining samples: without them forward-only {fwd_plain:.0f} tok/s, mining "
            f"{mined_plain:.0f} tok/s, ratio {mined_plain / fwd_plain:.2f}; the samples "
            f"cost {(mined_plain / fwd_plain) / (mined / fwd) - 1:+.1%} of mining time [{name}]"
        )
        seconds, n_keys = got["finalize"]
        print(
            f"mining finalize: {seconds:.1f} s for {n_keys} sampled keys (texts, held-out "
            f"ranks, samples, per-token coefficients re-run) [{name}, {n_sentences} sentences]"
        )
        gated = loaded.model_type in ("llama", "mistral", "qwen2")
        shape = (loaded.n_layers, loaded.d_model, loaded.d_ff)
        flops = flops_per_token(*shape, avg_len, ffn_mats=3 if gated else 2)
        print(
            f"mining flops: {flops / 1e6:.1f} MFLOP/token for {name} (matmuls from the "
            f"config: {shape[0]} layers, d={shape[1]}, d_ff={shape[2]}"
            f"{', gated' if gated else ''}, mean sentence {avg_len:.0f} tokens); reached "
            f"{flops * fwd / 1e9:.0f} GFLOP/s forward-only"
        )
        del loaded, got
    if not args.no_memory:
        rss1, rss4 = bench_memory()
        print(
            f"mining memory: peak RSS 1x={rss1:.0f} MiB, 4x={rss4:.0f} MiB, ratio "
            f"{rss4 / rss1:.2f} (budget <= {MEMORY_BUDGET:.2f}) [{MODEL}, {MEMORY_SENTENCES} "
            f"vs {4 * MEMORY_SENTENCES} sentences, max_tokens={MEMORY_MAX_TOKENS}, full runs "
            "in subprocesses]"
        )
    gpu = GPU_PEAK_FLOPS * GPU_UTILISATION
    worst = min(mined / fwd for _, fwd, mined in ratios)
    seconds = WIKITEXT103_TRAIN_TOKENS * flops_per_token(16, 1024, 4096, 64) / gpu / worst
    print(
        "mining estimate: WikiText-103 train (103M tokens) with a paper-size LM (16 layers, "
        f"d=1024, d_ff=4096): {seconds / 60:.1f} min on one H100/H200 (assumes "
        f"{GPU_PEAK_FLOPS / 1e12:.0f} TFLOP/s bf16 peak at {GPU_UTILISATION:.0%} "
        "utilisation and the lowest mining ratio measured here)"
    )
    print(f"mining bench: {time.perf_counter() - started:.0f} s")
    return scale_out(args.workers)


def scale_out(workers: str) -> int:
    """One run's wall time for each worker count (bench/mining_scale.py, its own process:
    it sets up Django and starts the workers)."""
    if not workers.strip():
        return 0
    script = REPO / "bench" / "mining_scale.py"
    return subprocess.run(
        [sys.executable, str(script), "--workers", workers], check=False
    ).returncode


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
