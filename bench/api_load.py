"""API load (docs/benchmarks.md): simulated annotators against gunicorn + PostgreSQL.

Sets up a bench database (a study of keys with 25 prefixes each, annotators, a batch
assigned with overlap 2, and the 65,536-key study of bench/reports.py, kept between runs),
serves it with gunicorn and a Celery worker as deployed, and runs locust headless three
times:

1. 20 annotators;
2. 50 annotators;
3. 20 annotators while an admin exports the 65,536-key study: the export is started
   through the API (POST /api/admin/studies/<id>/exports/, the job the worker runs) and
   polled until done; the annotators are measured over exactly that time.

Each run prints p50/p95/p99 per operation and the errors, then one line with the ratio
against the budget: p95 <= 100 ms for fetching a key and saving a pattern and no errors,
at 20 annotators, idle and during the export (the 50-annotator line is for information).
Exits 0 even when a budget is missed (the printed ratio says so).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/ffkv CELERY_BROKER_URL=redis://... \
        python bench/api_load.py [--seconds 45] [--skip-export]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
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
USER_PREFIX = "bench-load-annotator-"
ADMIN = "bench-load-admin"
BUDGET_P95_MS = 100.0
BUDGET_OPERATIONS = ("fetch key", "save pattern")
# Users start a few a second; the locustfile restarts the statistics once all have
# logged in, so that the logins (PBKDF2, deliberately slow) are not measured.
SPAWN_RATE = 4
EXPORT_KEYS = 65_536
EXPORT_ANNOTATORS = 3  # as bench/reports.py
EXPORT_STUDY_NAME = "bench reports"  # the name bench/reports.py gives it


def _bench_database_url(base: str) -> str:
    """DATABASE_URL's database with ``_bench`` appended (ffkv → ffkv_bench): the bench
    never writes into the database it was pointed at."""
    server, name = base.split("?", 1)[0].rsplit("/", 1)
    return f"{server}/{name or 'ffkv'}_bench"


# The bench's own Redis database: emptied before each run. In the shared one, jobs left
# by earlier runs or by tests (thousands of scoring jobs) came before the bench's export,
# which then never started within its 120 s.
BENCH_REDIS_DB = 15


def _bench_broker_url(base: str) -> str:
    """CELERY_BROKER_URL on database BENCH_REDIS_DB, emptied; any other broker as is."""
    found = re.fullmatch(r"(rediss?://[^/?]*)(?:/\d*)?", base)
    if found is None:
        return base
    url = f"{found.group(1)}/{BENCH_REDIS_DB}"
    import redis

    redis.Redis.from_url(url).flushdb()
    return url


def _ensure_database(url: str) -> None:
    import psycopg

    server, name = url.rsplit("/", 1)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def _setup(n_annotators: int, n_keys: int) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotate.models import Key, Study, TriggerPrefix
    from annotate.services.accounts import user_create_annotator
    from annotate.services.batches import assignment_create_with_overlap, batch_create

    call_command("migrate", verbosity=0)
    Study.objects.filter(name="bench").delete()
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
    # Accounts are kept between runs: hashing 50 passwords (PBKDF2) takes a while.
    annotators: list[Any] = [
        user_create_annotator(username=f"{USER_PREFIX}{i}", password=PASSWORD)
        for i in range(n_annotators)
    ]
    batch = batch_create(study=study, name="bench batch", keys=keys)
    assignment_create_with_overlap(batch=batch, annotators=annotators, overlap=2)
    User = get_user_model()
    if not User.objects.filter(username=ADMIN).exists():
        User.objects.create_user(username=ADMIN, password=PASSWORD, is_staff=True)


def _export_study() -> int:
    """The 65,536-key study of bench/reports.py (every key annotated by 3 people), built
    once into the bench database and kept: building it takes minutes, reading it does
    not change it."""
    from django.contrib.auth import get_user_model

    from annotate.models import Annotation, Key, Study
    from bench.reports import build_study

    for study in Study.objects.filter(name=EXPORT_STUDY_NAME):
        complete = (
            Key.objects.filter(study=study).count() == EXPORT_KEYS
            and Annotation.objects.filter(key__study=study).count()
            == EXPORT_KEYS * EXPORT_ANNOTATORS
        )
        if complete:
            _analyze()
            return int(study.pk)
    Study.objects.filter(name=EXPORT_STUDY_NAME).delete()
    # build_study names its annotators bench-annotator-<i>; so did this bench once.
    get_user_model().objects.filter(username__startswith="bench-annotator-").delete()
    start = time.perf_counter()
    study_id, counts = build_study(EXPORT_KEYS, EXPORT_ANNOTATORS)
    print(
        f"api load: built the {EXPORT_KEYS:,}-key study for the export in "
        f"{time.perf_counter() - start:.0f} s ({counts['patterns']:,} patterns; kept for "
        "the next run)"
    )
    _analyze()
    return study_id


def _analyze() -> None:
    """What autovacuum does after a bulk load in a running deployment, and what ffkv's
    own loaders and imports do: without statistics on the study just built, PostgreSQL
    reads every pattern's prefixes (a hash join over millions of rows) to show one key."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"api load: {what} not ready within {timeout:.0f} s")
        time.sleep(0.2)


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1)
        return True
    except OSError:
        return False


def _locust(
    users: int, seconds: float, host: str, env: dict[str, str], tmp: Path, name: str
) -> list[dict[str, str]]:
    prefix = tmp / name
    subprocess.run(
        [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(ROOT / "bench" / "locustfile_annotators.py"),
            "--headless",
            "-u",
            str(users),
            "-r",
            str(SPAWN_RATE),
            "-t",
            f"{int(seconds)}s",
            "--host",
            host,
            "--csv",
            str(prefix),
            "--only-summary",
            "--loglevel",
            "WARNING",
        ],
        cwd=ROOT,
        env={**env, "FFKV_BENCH_USERS": str(users)},
        check=False,
        capture_output=True,
        text=True,
    )
    stats = Path(f"{prefix}_stats.csv")
    return list(csv.DictReader(stats.open())) if stats.exists() else []


def _report(label: str, rows: list[dict[str, str]]) -> tuple[float, int, int, int]:
    """Print one line per operation; return (worst p95 of the budget's operations,
    errors, requests, requests of the budget's operations)."""
    errors = requests = budgeted = 0
    worst = 0.0
    for row in rows:
        name = row["Name"]
        if name == "Aggregated":
            errors, requests = int(row["Failure Count"]), int(row["Request Count"])
            continue
        if int(row["Request Count"]) == 0:
            continue  # e.g. "log in": every login happened before the statistics restarted
        p50, p95, p99 = (float(row[q]) for q in ("50%", "95%", "99%"))
        print(
            f"api load: [{label}] {name:13} n={int(row['Request Count']):6}  "
            f"p50={p50:6.0f} ms  p95={p95:6.0f} ms  p99={p99:6.0f} ms  "
            f"errors={int(row['Failure Count'])}"
        )
        if name in BUDGET_OPERATIONS:
            worst = max(worst, p95)
            budgeted += int(row["Request Count"])
    return worst, errors, requests, budgeted


def _verdict(worst: float, errors: int, measured: int, budgeted: bool) -> str:
    if measured == 0:  # a run too short to fetch a key or save a pattern
        return "NOT MEASURED (no key fetched, no pattern saved)"
    if not budgeted:
        return "for information (the budget is set at 20 annotators)"
    return "within budget" if worst <= BUDGET_P95_MS and errors == 0 else "OVER BUDGET"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=20, help="the budget's load")
    parser.add_argument("--many", type=int, default=50, help="the second run's load")
    parser.add_argument("--seconds", type=int, default=45, help="length of runs 1 and 2")
    parser.add_argument("--keys", type=int, default=6000, help="keys of the annotated study")
    parser.add_argument(
        "--export-limit", type=int, default=120, help="stop waiting for the export after (s)"
    )
    parser.add_argument("--skip-export", action="store_true", help="runs 1 and 2 only")
    args = parser.parse_args()

    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        print("api load: skipped, needs PostgreSQL (set DATABASE_URL=postgres://...)")
        return 0
    url = _bench_database_url(base)
    _ensure_database(url)
    tmp = Path(tempfile.mkdtemp(prefix="ffkv-api-load-"))
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": _bench_broker_url(os.environ.get("CELERY_BROKER_URL", "")),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "FFKV_DATA_DIR": str(tmp / "data"),  # gunicorn and the worker share it
        "LOG_LEVEL": "WARNING",
        "LOGIN_THROTTLE_RATE": "10000/min",
        "FFKV_BENCH_PASSWORD": PASSWORD,
        "FFKV_BENCH_USER_PREFIX": USER_PREFIX,
        "FFKV_BENCH_ADMIN": ADMIN,
    }
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    from config import processes  # the argv of gunicorn and the worker, as deployed

    started = time.monotonic()
    _setup(max(args.users, args.many), args.keys)
    export_study = None if args.skip_export else _export_study()
    print(f"api load: set up in {time.monotonic() - started:.0f} s")

    port = _free_port()
    host = f"http://127.0.0.1:{port}"
    children: list[subprocess.Popen[bytes]] = []
    worker_log = tmp / "worker.log"
    try:
        # The deployed settings (workers, threads, preload), only bound elsewhere.
        children.append(
            subprocess.Popen(
                processes.web_argv(
                    python=sys.executable, bind=f"127.0.0.1:{port}", log_level="warning"
                ),
                cwd=ROOT,
                env=env,
            )
        )
        if export_study is not None:
            with worker_log.open("wb") as log:
                children.append(
                    subprocess.Popen(
                        processes.worker_argv(
                            ["celery"],
                            python=sys.executable,
                            pool="solo",
                            name=f"bench-load-{os.getpid()}@%h",
                            quick_start=True,
                        ),
                        cwd=ROOT,
                        env={**env, "LOG_LEVEL": "INFO"},
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
        _wait_for(lambda: _answers(f"{host}/api/health/"), 60, "gunicorn")
        if export_study is not None:
            _wait_for(lambda: b"ready." in worker_log.read_bytes(), 120, "the Celery worker")

        runs: list[tuple[str, int, bool]] = [
            (f"{args.users} annotators", args.users, True),
            (f"{args.many} annotators", args.many, False),
        ]
        for label, users, budgeted in runs:
            rows = _locust(users, args.seconds, host, env, tmp, f"run-{users}")
            worst, errors, requests, measured = _report(label, rows)
            print(
                f"api load: {label}, {args.seconds} s: p95({', '.join(BUDGET_OPERATIONS)}) "
                f"= {worst:.0f} ms, ratio {worst / BUDGET_P95_MS:.2f} of the 100 ms budget "
                f"(budget <= 1.00), errors {errors} of {requests} (budget 0): "
                f"{_verdict(worst, errors, measured, budgeted)}"
            )

        if export_study is not None:
            result_path = tmp / "export.json"
            export_env = {
                **env,
                "FFKV_BENCH_EXPORT_STUDY": str(export_study),
                "FFKV_BENCH_EXPORT_RESULT": str(result_path),
                "FFKV_BENCH_EXPORT_LIMIT_S": str(args.export_limit),
            }
            # -t only backs up the locustfile, which stops the run when the export ends.
            label = f"{args.users} annotators during the export"
            rows = _locust(args.users, args.export_limit + 120, host, export_env, tmp, "export")
            worst, errors, requests, measured = _report(label, rows)
            job = json.loads(result_path.read_text()) if result_path.exists() else {}
            print(
                f"api load: export of the {EXPORT_KEYS:,}-key study (jsonl, job "
                f"{job.get('id', '?')}): {job.get('status', 'no result')} after "
                f"{float(job.get('seconds', 0)):.0f} s, {job.get('keys_done', 0):,} of "
                f"{job.get('keys_total', 0):,} keys"
                + (f", error: {job['error']}" if job.get("error") else "")
            )
            ran = job.get("status") in ("done", "unfinished")
            print(
                f"api load: {label}: p95({', '.join(BUDGET_OPERATIONS)}) = {worst:.0f} ms, "
                f"ratio {worst / BUDGET_P95_MS:.2f} of the 100 ms budget (budget <= 1.00), "
                f"errors {errors} of {requests} (budget 0): "
                + (
                    _verdict(worst, errors, measured, True)
                    if ran
                    else "NOT MEASURED (the export did not run)"
                )
                + (
                    f" (over the first {args.export_limit} s of an export that had not finished)"
                    if job.get("status") == "unfinished"
                    else ""
                )
            )
    finally:
        for process in children:
            process.terminate()
        for process in children:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(tmp, ignore_errors=True)  # the export file is large
    print(f"api load: the whole bench took {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
