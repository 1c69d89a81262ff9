"""Mining scale-out (docs/operations.md, "Scale-out"): the wall time of one 6-shard run
mined by 1, 2 and 3 worker processes, each started as docker-compose's worker-gpu runs it
(``celery -A config worker -Q gpu --concurrency 1``), sharing one data folder.

Needs PostgreSQL (``DATABASE_URL``: a database ``ffkv_bench_scale`` is made anew on its
server and dropped after) and Redis (``CELERY_BROKER_URL``; run it against a broker whose
queue ``gpu`` no other worker consumes). Without them it prints a "skipped" line.

    python bench/mining_scale.py [--workers 1,2,3] [--sentences 800]

A time is from queueing the run to its study being loaded: prepare (tokenize, on one
worker), the shards (spread over the workers), the merge. Worker start-up is not in it.
Each worker process uses one torch thread, as one process per GPU would use one GPU, so
that N workers ask for N cores; past the machine's cores they cannot gain.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BENCH_DB = "ffkv_bench_scale"
SHARDS = 6
MODEL = "builtin:minilm"
CORPUS = (ROOT / ".." / "shared" / "corpora" / "wikitext103-valid" / "wiki.valid.tokens").resolve()
SKIPPED = "mining scale-out: skipped: needs DATABASE_URL postgres and CELERY_BROKER_URL redis"


def services_missing() -> str | None:
    """Why the bench cannot run here, or None."""
    url, broker = os.environ.get("DATABASE_URL", ""), os.environ.get("CELERY_BROKER_URL", "")
    if not url.startswith(("postgres://", "postgresql://")) or not broker.startswith("redis"):
        return f"DATABASE_URL={url or '(unset)'}, CELERY_BROKER_URL={broker or '(unset)'}"
    import psycopg
    import redis

    try:
        psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", connect_timeout=3).close()
        redis.Redis.from_url(broker, socket_connect_timeout=3).ping()
    except (psycopg.Error, redis.exceptions.RedisError) as exc:
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    return None


def fresh_database() -> str:
    import psycopg

    url = os.environ["DATABASE_URL"]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB}")
        conn.execute(f"CREATE DATABASE {BENCH_DB}")
    return url.rsplit("/", 1)[0] + "/" + BENCH_DB


def drop_database() -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    url = os.environ["DATABASE_URL"]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")


def start_worker(name: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    from config import processes

    with log.open("wb") as out:
        return subprocess.Popen(
            processes.worker_argv(["gpu"], python=sys.executable, name=f"{name}@%h"),
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_ready(process: subprocess.Popen[bytes], log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while b"ready." not in log.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"worker did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.2)


def stop_worker(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def one_run(n_workers: int, sentences: int, env: dict[str, str], folder: Path) -> float:
    from mining import services
    from mining.core import MineConfig
    from mining.models import MiningRun
    from mining.tasks import prepare_run

    logs = [folder / f"worker-{n_workers}-{i}.log" for i in range(n_workers)]
    workers = [start_worker(f"bench{i}", env, log) for i, log in enumerate(logs)]
    try:
        for process, log in zip(workers, logs, strict=True):
            wait_ready(process, log)
        config = MineConfig(
            model=MODEL,
            corpus=str(folder / "data" / "corpora" / CORPUS.name),
            max_sentences=sentences,
            keys_per_layer=4,
            top_k=10,
            batch_size=16,
        )
        run = services.mining_run_create(
            study_name=f"scale-{n_workers}", config=config, n_shards=SHARDS
        )
        started = time.perf_counter()
        prepare_run.delay(run.pk)
        while not MiningRun.objects.get(pk=run.pk).finished:
            if time.perf_counter() - started > 600:
                raise RuntimeError("the run did not finish in 600 s")
            time.sleep(0.1)
        elapsed = time.perf_counter() - started
        run.refresh_from_db()
        if run.status != MiningRun.Status.DONE:
            raise RuntimeError(f"the run ended {run.status}: {run.error}")
        takers = set(run.shards.values_list("worker", flat=True))
        print(
            f"mining scale-out: {n_workers} worker process(es): {elapsed:.1f} s for one run "
            f"({SHARDS} shards, {len(takers)} worker(s) took shards)",
            flush=True,
        )
        return elapsed
    finally:
        for process in workers:
            stop_worker(process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", default="1,2,3", help="worker counts, comma-separated")
    parser.add_argument("--sentences", type=int, default=800, help="WikiText sentences")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    missing = services_missing()
    if missing:
        print(f"{SKIPPED} ({missing})")
        return 0
    if not CORPUS.is_file():
        print(f"mining scale-out: skipped: the corpus {CORPUS} is absent")
        return 0
    with tempfile.TemporaryDirectory(prefix="ffkv-bench-scale-") as tmp:
        folder = Path(tmp)
        (folder / "data" / "corpora").mkdir(parents=True)
        shutil.copy(CORPUS, folder / "data" / "corpora" / CORPUS.name)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": fresh_database(),
            "FFKV_DATA_DIR": str(folder / "data"),
            "FFKV_CORPUS_ROOTS": str(folder / "data" / "corpora"),
            "OMP_NUM_THREADS": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "LOG_LEVEL": "WARNING",
        }
        os.environ.update({k: env[k] for k in ("DATABASE_URL", "FFKV_DATA_DIR", "LOG_LEVEL")})
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django
        from django.core.management import call_command

        django.setup()
        try:
            call_command("migrate", verbosity=0)
            times = {n: one_run(n, args.sentences, env, folder) for n in counts}
        finally:
            drop_database()
    base = times.get(1)
    if base:
        speedups = ", ".join(f"{n}: {base / t:.2f}x" for n, t in times.items())
        print(
            f"mining scale-out: speed-up over 1 worker {speedups} [{MODEL}, {args.sentences} "
            f"WikiText sentences, {SHARDS} shards, {os.cpu_count()} cores]"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
