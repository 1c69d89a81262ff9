"""Suggestions and held-out scores (docs/benchmarks.md, docs/evidence.md): the time per
1,000 keys, and the scores of a study like the demo's (60 keys: 2 keys a layer × 30
layers, 25 heldout + 25 heldout_random examples a key, 3 patterns a key) in <= 60 s.

It measures the real path: a synthetic study is written into a database through the ORM,
then ``annotate.services.scores.scores_compute`` reads it, embeds each distinct text once
under MiniLM on the CPU, scores and writes every pattern. The model is loaded once before
timing (a worker process keeps it loaded between jobs); its load is printed apart.

Database: a fresh SQLite file in a temporary folder, or, when DATABASE_URL names a
PostgreSQL server, a database ``ffkv_bench_suggestions`` on it, dropped and made anew.

    python bench/suggestions.py [--keys 1000]    (make bench: --keys 200)

Prints its figures and exits 0 even when a budget is missed (the printed ratio says so).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_db import database_env, setup_django  # noqa: E402

DEMO_BUDGET_S = 60.0
DEMO_LAYERS, DEMO_KEYS_PER_LAYER = 30, 2
HELD_OUT = 25
PATTERNS_PER_KEY = 3
BENCH_DB = "ffkv_bench_suggestions"
WORDS = [
    "river",
    "city",
    "music",
    "money",
    "food",
    "war",
    "law",
    "science",
    "sport",
    "weather",
    "family",
    "school",
    "church",
    "number",
    "language",
    "animal",
    "plant",
    "disease",
    "film",
    "game",
    "ship",
    "train",
    "king",
    "election",
    "market",
    "computer",
    "island",
    "mountain",
    "colour",
    "time",
]


def _sentence(rng, n_words: int) -> str:
    words = rng.choice(WORDS, size=n_words)
    return "The " + " ".join(str(w) for w in words)


def build_study(name: str, n_layers: int, keys_per_layer: int, seed: int = 0) -> int:
    """A study of ``n_layers`` × ``keys_per_layer`` keys, each with 25 prefixes, 25
    heldout and 25 heldout_random examples (distinct random texts) and one submitted
    annotation of 3 patterns (the first with a token rule)."""
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from annotate.models import Annotation, Key, KeyExample, Pattern, Study, TriggerPrefix

    rng = np.random.default_rng(seed)
    user, _ = get_user_model().objects.get_or_create(username="bench-annotator")
    with transaction.atomic():
        study = Study.objects.create(
            name=name, model_name="bench", corpus="bench", n_layers=n_layers, d_ff=1000
        )
        keys = Key.objects.bulk_create(
            Key(study=study, layer=1 + k // keys_per_layer, index=k % keys_per_layer)
            for k in range(n_layers * keys_per_layer)
        )

        def example(cls, key, **more):
            text = _sentence(rng, int(rng.integers(6, 18)))
            last = text.rsplit(" ", 1)[1]
            return cls(
                key=key,
                coefficient=1.0,
                text=text,
                trigger_token=f" {last}",
                trigger_token_id=1,
                next_token=" .",
                next_token_id=13,
                sentence=text + ".",
                position=text.count(" "),
                **more,
            )

        prefixes = TriggerPrefix.objects.bulk_create(
            example(TriggerPrefix, key, rank=r, sentence_index=r)
            for key in keys
            for r in range(1, 26)
        )
        KeyExample.objects.bulk_create(
            (
                example(
                    KeyExample,
                    key,
                    kind=kind,
                    order=i,
                    rank=25 + i if kind == KeyExample.Kind.HELDOUT else None,
                    sentence_index=100 * (kind == KeyExample.Kind.HELDOUT) + 100 + i,
                )
                for key in keys
                for kind in KeyExample.HELD_OUT_KINDS
                for i in range(1, HELD_OUT + 1)
            ),
            batch_size=5000,
        )
        annotations = Annotation.objects.bulk_create(
            Annotation(key=key, annotator=user, status=Annotation.Status.SUBMITTED) for key in keys
        )
        patterns = Pattern.objects.bulk_create(
            Pattern(
                annotation=annotation,
                description=f"{WORDS[(k + p) % len(WORDS)]} and {WORDS[(3 * k + p) % len(WORDS)]}",
                kind="shallow",
                order=p,
                rule={"type": "token", "value": WORDS[k % len(WORDS)]} if p == 0 else None,
            )
            for k, annotation in enumerate(annotations)
            for p in range(PATTERNS_PER_KEY)
        )
        links = Pattern.prefixes.through
        links.objects.bulk_create(
            links(pattern_id=pattern.pk, triggerprefix_id=prefixes[25 * (i // 3) + j].pk)
            for i, pattern in enumerate(patterns)
            for j in range(3)
        )
    return study.pk


def time_scores(study_id: int) -> tuple[float, int]:
    from annotate.services.scores import scores_compute

    start = time.perf_counter()
    written = scores_compute(study_id=study_id)
    return time.perf_counter() - start, written["patterns"]


def time_suggestions(study_id: int) -> tuple[float, int]:
    """The rule and cluster suggestions of every key, without scoring them."""
    from annotate.models import Study
    from annotate.services.suggestions import suggestions_create_for_study

    start = time.perf_counter()
    run = suggestions_create_for_study(study=Study.objects.get(pk=study_id), score=False)
    return time.perf_counter() - start, len(run.created)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1000, help="keys of the per-1,000 study")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ffkv-bench-suggestions-") as tmp_name:
        tmp = Path(tmp_name)
        setup_django(database_env(tmp, BENCH_DB), tmp)
        from django.core.management import call_command
        from django.db import connection

        from annotate.evidence.embedding import embed

        call_command("migrate", verbosity=0)
        start = time.perf_counter()
        embed(["load the model"])
        print(f"setup ({connection.vendor}): MiniLM loaded in {time.perf_counter() - start:.1f} s")

        per_layer = 50
        big = build_study("bench scores", max(1, args.keys // per_layer), per_layer, seed=1)
        n_keys = max(1, args.keys // per_layer) * per_layer
        seconds, n_patterns = time_scores(big)
        print(
            f"scores: {n_keys} keys, {n_patterns} patterns, {2 * HELD_OUT * n_keys} held-out "
            f"examples in {seconds:.1f} s: {1000 * seconds / n_keys:.1f} s per 1,000 keys"
        )
        seconds, n_suggestions = time_suggestions(big)
        print(
            f"suggestions: {n_keys} keys, {n_suggestions} suggestions (rules and MiniLM "
            f"clusters) in {seconds:.1f} s: {1000 * seconds / n_keys:.1f} s per 1,000 keys"
        )

        demo = build_study("bench demo scores", DEMO_LAYERS, DEMO_KEYS_PER_LAYER, seed=2)
        seconds, n_patterns = time_scores(demo)
        ok = "OK" if seconds <= DEMO_BUDGET_S else "MISSED"
        print(
            f"scores: the demo's {DEMO_LAYERS * DEMO_KEYS_PER_LAYER} keys ({n_patterns} "
            f"patterns) in {seconds:.1f} s (budget <= {DEMO_BUDGET_S:.0f} s) {ok}; "
            f"ratio to budget {seconds / DEMO_BUDGET_S:.2f}"
        )
        connection.close()


if __name__ == "__main__":
    main()
