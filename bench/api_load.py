"""API load (DESIGN §8): N simulated annotators against gunicorn + PostgreSQL.

Sets up a bench database (study, keys with 25 prefixes each, annotators, a batch
assigned with overlap 2), serves it with gunicorn, runs locust headless and prints
p50/p95/p99 per operation and the error count. Budget: 20 annotators, p95 <= 100 ms for
fetching a key and saving a pattern, zero errors.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/ffkv python bench/api_load.py
"""

from __future__ import annotations

import argparse
import csv
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "bench-annotator-password-1"
BUDGET_P95_MS = 100.0
# Users start a few a second; the locustfile restarts the statistics once all have
# logged in, so that the logins (PBKDF2, deliberately slow) are not measured.
SPAWN_RATE = 4


def _bench_database_url(base: str) -> str:
    return base.rsplit("/", 1)[0] + "/ffkv_bench"


def _ensure_database(url: str) -> None:
    import psycopg

    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = 'ffkv_bench'").fetchone()
        if not exists:
            conn.execute("CREATE DATABASE ffkv_bench")


def _setup(n_annotators: int, n_keys: int) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotate.models import Key, Study, TriggerPrefix
    from annotate.services import (
        assignment_create_with_overlap,
        batch_create,
        user_create_annotator,
    )

    call_command("migrate", verbosity=0)
    Study.objects.filter(name="bench").delete()
    get_user_model().objects.filter(username__startswith="bench-annotator-").delete()
    study = Study.objects.create(name="bench", model_name="bench", corpus="bench", n_layers=16)
    keys = Key.objects.bulk_create(
        Key(study=study, layer=1 + i % 16, index=i) for i in range(n_keys)
    )
    TriggerPrefix.objects.bulk_create(
        (
            TriggerPrefix(
                key=key,
                rank=r,
                coefficient=10.0 - r / 10,
                text=f"prefix {r} of key {key.index}",
                trigger_token=" tok",
                trigger_token_id=1,
                next_token=" next",
                next_token_id=2,
                sentence=f"prefix {r} of key {key.index} and the rest.",
                sentence_index=r,
                position=4,
            )
            for key in keys
            for r in range(1, 26)
        ),
        batch_size=5000,
    )
    annotators: list[Any] = [
        user_create_annotator(username=f"bench-annotator-{i}", password=PASSWORD)
        for i in range(n_annotators)
    ]
    batch = batch_create(study=study, name="bench batch", keys=keys)
    assignment_create_with_overlap(batch=batch, annotators=annotators, overlap=2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--keys", type=int, default=2000)
    args = parser.parse_args()

    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        print("api load: skipped, needs PostgreSQL (set DATABASE_URL=postgres://...)")
        return 0
    url = _bench_database_url(base)
    _ensure_database(url)
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "LOGIN_THROTTLE_RATE": "10000/min",
        "FFKV_BENCH_PASSWORD": PASSWORD,
        "FFKV_BENCH_USERS": str(args.users),
    }
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    _setup(args.users, args.keys)

    port = _free_port()
    # The deployed settings (workers, threads, preload), only bound elsewhere.
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            str(ROOT / "config" / "gunicorn.conf.py"),
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health/", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        with tempfile.TemporaryDirectory() as tmp:
            prefix = Path(tmp) / "stats"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "locust",
                    "-f",
                    str(ROOT / "bench" / "locustfile_annotators.py"),
                    "--headless",
                    "-u",
                    str(args.users),
                    "-r",
                    str(SPAWN_RATE),
                    "-t",
                    f"{args.seconds}s",
                    "--host",
                    f"http://127.0.0.1:{port}",
                    "--csv",
                    str(prefix),
                    "--only-summary",
                    "--loglevel",
                    "WARNING",
                ],
                cwd=ROOT,
                env=env,
                check=False,
                capture_output=True,
                text=True,
            )
            rows = list(csv.DictReader((prefix.parent / "stats_stats.csv").open()))
    finally:
        server.terminate()
        server.wait(timeout=30)

    errors = 0
    worst = 0.0
    for row in rows:
        name = row["Name"]
        if name == "Aggregated":
            errors = int(row["Failure Count"])
            continue
        if int(row["Request Count"]) == 0:
            continue  # e.g. "log in": every login happened before the statistics restarted
        p50, p95, p99 = (float(row[q]) for q in ("50%", "95%", "99%"))
        print(
            f"api load: {name:13} n={int(row['Request Count']):6}  "
            f"p50={p50:6.0f} ms  p95={p95:6.0f} ms  p99={p99:6.0f} ms  "
            f"errors={int(row['Failure Count'])}"
        )
        if name in ("fetch key", "save pattern"):
            worst = max(worst, p95)
    print(
        f"api load: {args.users} annotators, {args.seconds}s, p95(fetch key, save pattern) "
        f"= {worst:.0f} ms, ratio {worst / BUDGET_P95_MS:.2f} of the 100 ms budget "
        f"(budget <= 1.00), errors {errors} (budget 0)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
