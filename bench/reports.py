"""Reports (docs/benchmarks.md): Figure 2 + agreement for 65,536 keys × 25 prefixes × 3 annotators
in ≤ 10 s, and a JSONL export whose peak memory stays flat (within +10% from 1/4 of the
keys to all of them).

It measures the real path: a synthetic study is written into a database, then
``reports.selectors.study_arrays`` reads it (the queries and the array building count)
and ``reports.stats`` computes Figure 2 and the agreement with its 1,000-replicate
bootstrap. The export runs ``reports.exports.export_jsonl`` (the generator behind the
streamed response) in a fresh child process per size, so each peak RSS is that
export's alone.

Database: a fresh SQLite file in a temporary folder, or, when DATABASE_URL names a
PostgreSQL server, a database ``ffkv_bench_reports`` on it, dropped and made anew.

    python bench/reports.py [--keys 65536] [--annotators 3]

Prints its figures and exits 0 even when a budget is missed (the printed ratio says so).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_db import database_env, setup_django  # noqa: E402

BUDGET_S = 10.0
MEMORY_BUDGET = 1.10
N_LAYERS = 16
N_PREFIXES = 25
BENCH_DB = "ffkv_bench_reports"
STAMP = "2026-01-01 00:00:00+00:00"
WRITE_BATCH = 20_000
# An example's tokens and their coefficients, as JSON (12 tokens: a prefix's length).
EXAMPLE_TOKENS = json.dumps([f" tok{i}" for i in range(12)])
EXAMPLE_COEFFICIENTS = json.dumps([0.125 * i for i in range(12)])
PATTERN_SCORES = json.dumps(
    {"detection": None, "embedding": 0.5, "shuffled_detection": None, "shuffled_embedding": 0.5}
)


def _write(table: str, columns: list[str], rows: Any) -> None:
    """Bulk rows into ``table``: COPY on PostgreSQL, executemany on SQLite."""
    from django.db import connection

    quoted = ", ".join(connection.ops.quote_name(c) for c in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({quoted}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        sql = f"INSERT INTO {table} ({quoted}) VALUES ({', '.join(['%s'] * len(columns))})"
        batch: list[tuple[Any, ...]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= WRITE_BATCH:
                cursor.executemany(sql, batch)
                batch = []
        if batch:
            cursor.executemany(sql, batch)


def build_study(
    n_keys: int, n_annotators: int, seed: int = 0, n_examples: int = 0
) -> tuple[int, dict[str, int]]:
    """A synthetic study written straight into the tables (the ORM would take minutes):
    16 layers, ``n_keys`` keys of 25 prefixes, every key annotated (submitted) by every
    annotator with 2-5 patterns of 3-8 random prefixes each; with ``n_examples``, that
    many stored examples per key beyond its top-k (``KeyExample``, as a mined key's 100:
    held-out, held-out random, band and random ones, docs/evidence.md), each with 12
    tokens and their coefficients."""
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction

    from annotate.models import Annotation, Key, KeyExample, Pattern, Study, TriggerPrefix

    call_command("migrate", verbosity=0)
    rng = np.random.default_rng(seed)
    users = [
        get_user_model().objects.create(username=f"bench-annotator-{i}")
        for i in range(n_annotators)
    ]
    with transaction.atomic():
        study = Study.objects.create(
            name="bench reports",
            model_name="bench",
            corpus="bench",
            n_layers=N_LAYERS,
            d_ff=n_keys,
            vocab_size=50_000,
        )
        per_layer = n_keys // N_LAYERS
        Key.objects.bulk_create(
            (
                Key(
                    study=study,
                    layer=1 + k // per_layer,
                    index=k,
                    value_top_tokens=[[" tok", 0.1]],
                    value_top_token_ids=[int(k % 50)],
                )
                for k in range(n_keys)
            ),
            batch_size=5000,
        )
        key_ids = list(
            Key.objects.filter(study=study).order_by("layer", "index").values_list("id", flat=True)
        )
        # A mined prefix has its per-token coefficients (docs/evidence.md); with stored
        # examples the prefixes get them too.
        prefix_tokens, prefix_coefficients = (
            (EXAMPLE_TOKENS, EXAMPLE_COEFFICIENTS) if n_examples else ("[]", "[]")
        )
        _write(
            TriggerPrefix._meta.db_table,
            [
                "key_id",
                "rank",
                "coefficient",
                "text",
                "trigger_token",
                "trigger_token_id",
                "next_token",
                "next_token_id",
                "trigger_token_bytes",
                "next_token_bytes",
                "suffix",
                "sentence",
                "sentence_index",
                "position",
                "tokens",
                "token_coefficients",
            ],
            (
                (
                    key_id,
                    r,
                    30.0 - r,
                    f"The prefix number {r} of key {k}",
                    " key",
                    k % 50,
                    " and",
                    r % 50,
                    "",
                    "",
                    " then the rest of it.",
                    f"The prefix number {r} of key {k} and then the rest of it.",
                    k * N_PREFIXES + r,
                    6,
                    prefix_tokens,
                    prefix_coefficients,
                )
                for k, key_id in enumerate(key_ids)
                for r in range(1, N_PREFIXES + 1)
            ),
        )
        if n_examples:
            _write_examples(KeyExample._meta.db_table, key_ids, n_examples)
        prefix_ids = np.asarray(
            list(
                TriggerPrefix.objects.filter(key__study=study)
                .order_by("key_id", "rank")
                .values_list("id", flat=True)
            ),
            dtype=np.int64,
        )
        # Keys were made in (layer, index) order, so key_id order is key position order.
        prefix_ids = prefix_ids.reshape(n_keys, N_PREFIXES)

        _write(
            Annotation._meta.db_table,
            [
                "key_id",
                "annotator_id",
                "status",
                "note",
                "version",
                "created_at",
                "updated_at",
                "submitted_at",
                "active_seconds",
                "is_check",
            ],
            (
                (key_id, user.pk, "submitted", "", 2, STAMP, STAMP, STAMP, 30.0, False)
                for key_id in key_ids
                for user in users
            ),
        )
        ann = np.asarray(
            list(
                Annotation.objects.filter(key__study=study)
                .order_by("id")
                .values_list("id", "key_id")
            ),
            dtype=np.int64,
        )
        key_pos = np.searchsorted(np.asarray(key_ids), ann[:, 1])
        n_pat = rng.integers(2, 6, size=len(ann))
        pat_ann = np.repeat(np.arange(len(ann)), n_pat)
        kinds = np.array(["shallow", "semantic", "shallow+semantic"])
        # Lower layers lean shallow, upper layers semantic (the paper's Figure 2 shape).
        layer_share = (key_pos[pat_ann] // per_layer) / N_LAYERS
        pick = rng.random(len(pat_ann))
        pat_kind = np.where(pick < 0.15, 2, np.where(pick < 0.15 + 0.85 * (1 - layer_share), 0, 1))
        _write(
            Pattern._meta.db_table,
            [
                "annotation_id",
                "description",
                "kind",
                "order",
                "created_at",
                "updated_at",
                "source",
                "scores",
            ],
            (
                (
                    int(ann[a, 0]),
                    "a recurring pattern",
                    str(kinds[kind]),
                    0,
                    STAMP,
                    STAMP,
                    "written",
                    # Scored, as after mining (docs/evidence.md, "Scores").
                    PATTERN_SCORES,
                )
                for a, kind in zip(pat_ann.tolist(), pat_kind.tolist(), strict=True)
            ),
        )
        pattern_ids = np.asarray(
            list(
                Pattern.objects.filter(annotation__key__study=study)
                .order_by("id")
                .values_list("id", flat=True)
            ),
            dtype=np.int64,
        )
        sizes = rng.integers(3, 9, size=len(pattern_ids))
        order = np.argsort(rng.random((len(pattern_ids), N_PREFIXES)), axis=1)
        take = np.arange(N_PREFIXES)[None, :] < sizes[:, None]
        rows_p, cols = np.nonzero(take)
        ranks = order[rows_p, cols]  # 0-based
        through = Pattern.prefixes.through
        _write(
            through._meta.db_table,
            ["pattern_id", "triggerprefix_id"],
            zip(
                pattern_ids[rows_p].tolist(),
                prefix_ids[key_pos[pat_ann[rows_p]], ranks].tolist(),
                strict=True,
            ),
        )
    return study.pk, {
        "keys": n_keys,
        "prefixes": n_keys * N_PREFIXES,
        "examples": n_keys * n_examples,
        "annotations": len(ann),
        "patterns": len(pattern_ids),
        "covered": len(rows_p),
    }


def _write_examples(table: str, key_ids: list[int], per_key: int) -> None:
    """``per_key`` stored examples of each key: a quarter of each kind, in order."""
    kinds = ("heldout", "heldout_random", "band", "random")
    _write(
        table,
        [
            "key_id",
            "kind",
            "order",
            "rank",
            "band",
            "band_low",
            "band_high",
            "coefficient",
            "text",
            "trigger_token",
            "trigger_token_id",
            "next_token",
            "next_token_id",
            "suffix",
            "sentence",
            "sentence_index",
            "position",
            "trigger_token_bytes",
            "next_token_bytes",
            "tokens",
            "token_coefficients",
        ],
        (
            (
                key_id,
                kinds[e * 4 // per_key],
                1 + e % (per_key // 4),
                N_PREFIXES + 1 + e if e * 4 // per_key == 0 else None,
                1 + (e % (per_key // 4)) // 5 if e * 4 // per_key == 2 else None,
                0.0 if e * 4 // per_key == 2 else None,
                1.0 if e * 4 // per_key == 2 else None,
                0.5,
                f"The example number {e} of key {k}",
                " key",
                k % 50,
                " and",
                e % 50,
                " then the rest of it.",
                f"The example number {e} of key {k} and then the rest of it.",
                1_000_000 + k * per_key + e,
                6,
                "",
                "",
                EXAMPLE_TOKENS,
                EXAMPLE_COEFFICIENTS,
            )
            for k, key_id in enumerate(key_ids)
            for e in range(per_key)
        ),
    )


def time_report(study_id: int) -> dict[str, float]:
    from annotate.models import Study
    from reports.selectors.study_arrays import study_arrays
    from reports.stats import agreement, figure2, labels

    study = Study.objects.get(pk=study_id)
    start = time.perf_counter()
    arrays = study_arrays(study=study)
    loaded = time.perf_counter()
    grid = labels.rating_grid(arrays)
    figure2.figure2(arrays, grid)
    figure2.coverage(arrays, grid)
    agreement.agreement(arrays, grid)
    done = time.perf_counter()
    return {"load": loaded - start, "compute": done - loaded, "total": done - start}


def _peak_rss_kib() -> int:
    """This process's own peak RSS. Not ru_maxrss: Linux carries the parent's peak (the
    copy made by fork) across exec into it, so a child would report the bench's arrays."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def export_child(study_id: int, layers: str) -> None:
    """In a child process: stream the JSONL export to nowhere, print the peak RSS."""
    from annotate.models import Study
    from reports.exports import export_jsonl

    study = Study.objects.get(pk=study_id)
    chosen = [int(x) for x in layers.split(",")] if layers else None
    n_bytes = 0
    n_lines = 0
    start = time.perf_counter()
    for text in export_jsonl(study=study, layers=chosen):
        n_bytes += len(text)
        n_lines += text.count("\n")
    peak_kib = _peak_rss_kib()
    print(
        json.dumps(
            {
                "peak_kib": peak_kib,
                "lines": n_lines,
                "bytes": n_bytes,
                "s": time.perf_counter() - start,
            }
        )
    )


def _run_child(study_id: int, layers: str, env: dict[str, str], data_dir: Path) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--export-child",
            str(study_id),
            "--layers",
            layers,
            "--data-dir",
            str(data_dir),
        ],
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=65_536)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument(
        "--examples",
        type=int,
        default=0,
        help="stored examples per key beyond the top-k (a mined key has 100); a multiple of 20",
    )
    parser.add_argument("--export-child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--layers", default="", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.export_child is not None:
        setup_django({}, Path(args.data_dir))
        export_child(args.export_child, args.layers)
        return

    with tempfile.TemporaryDirectory(prefix="ffkv-bench-reports-") as tmp_name:
        tmp = Path(tmp_name)
        env = database_env(tmp, BENCH_DB)
        setup_django(env, tmp)
        from django.db import connection

        start = time.perf_counter()
        study_id, sizes = build_study(args.keys, args.annotators, n_examples=args.examples)
        print(
            f"setup ({connection.vendor}): {sizes['keys']} keys, {sizes['prefixes']} prefixes, "
            f"{sizes['examples']} stored examples, "
            f"{sizes['annotations']} annotations, {sizes['patterns']} patterns, "
            f"{sizes['covered']} covered prefixes in {time.perf_counter() - start:.1f} s"
        )
        if connection.vendor == "postgresql":
            # What autovacuum does after a bulk load in a running deployment (and what the
            # loaders do themselves): without statistics the planner picks nested loops
            # over millions of rows.
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        connection.close()

        quarter = ",".join(str(layer) for layer in range(1, N_LAYERS // 4 + 1))
        small = _run_child(study_id, quarter, env, tmp)
        full = _run_child(study_id, "", env, tmp)
        ratio = full["peak_kib"] / small["peak_kib"]
        print(
            f"reports: JSONL export peak RSS {small['peak_kib'] / 1024:.0f} MiB for "
            f"{small['lines']} keys ({small['s']:.1f} s), {full['peak_kib'] / 1024:.0f} MiB "
            f"for {full['lines']} keys ({full['s']:.1f} s): ratio {ratio:.3f} "
            f"(budget <= {MEMORY_BUDGET:.2f}) {'OK' if ratio <= MEMORY_BUDGET else 'MISSED'}"
        )

        timing = time_report(study_id)
        print(
            f"reports: figure 2 + agreement for {sizes['keys']} keys x {N_PREFIXES} prefixes x "
            f"{args.annotators} annotators in {timing['total']:.2f} s (budget <= {BUDGET_S:.0f} s)"
            f" {'OK' if timing['total'] <= BUDGET_S else 'MISSED'}"
        )
        print(
            f"  of which loading {timing['load']:.2f} s, computing {timing['compute']:.2f} s; "
            f"ratio to budget {timing['total'] / BUDGET_S:.2f}"
        )
        connection.close()


if __name__ == "__main__":
    main()
