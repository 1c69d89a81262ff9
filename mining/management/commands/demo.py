"""`make demo`: set up the demo (accounts, the example study), serve, and mine the demo
study in the background.

The web server (gunicorn) and a Celery worker on the embedded broker start as soon as
the database is migrated, the accounts made and the example study imported; the demo
study's mining run is queued for that worker, which mines it while the site serves. The
run hands its keys to alice and bob, with the study's guidelines, when its study is
loaded (``MiningRun.assign_to``), in the load's transaction: a stop and a restart during
the mining resume the run, and a start after it mines and assigns nothing again.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotate.models import Study
from annotate.services.accounts import user_create_annotator
from config import processes
from mining import services
from mining.composition import composition_job_run
from mining.core import MineConfig, MiningError, MiningStopped
from mining.models import CompositionJob, MiningRun, MiningShard

ADMIN = "carol"
ANNOTATORS = ("alice", "bob")
DEMO_MODEL = "builtin:smollm2-135m"
DEMO_CORPUS = "builtin:wiki-vital"
DEMO_STUDY = "demo: SmolLM2-135M on wiki-vital"
DEMO_BATCH = "demo batch"
# SmolLM2-135M mines about 550 tokens/s on 2 quiet CPU cores; wiki-vital's first 3,000
# sentences are about 91,000 of its tokens: about 3 minutes of mining, in the background
# of a site that already serves.
DEMO_SENTENCES = 3000
# A checkpoint every 10 batches (320 sentences, a few seconds of a loaded CPU): a demo
# stopped while it mines loses little of the run when it resumes.
DEMO_CHECKPOINT_EVERY = 10
# The §5 composition analysis the demo queues once its study is mined: the paper's 4,000
# prefixes (docs/composition.md gives its time on 2 cores).
DEMO_COMPOSE_PREFIXES = 4000
DEMO_KEYS_PER_LAYER = 2  # 30 layers: 60 keys for alice and bob, as many as a session holds
EXAMPLE_STUDY_FILE = settings.BASE_DIR / "fixtures" / "example-study.jsonl"
# The demo study's guidelines, written for this project (version 1, published by carol):
# alice and bob read and acknowledge them before their first key.
DEMO_GUIDELINES_FILE = settings.BASE_DIR / "fixtures" / "demo-guidelines.md"


def _accounts_file() -> Path:
    return Path(settings.DATA_DIR) / "demo-accounts.json"


def demo_accounts() -> dict[str, str]:
    """The demo passwords: made once at random, kept in the data directory."""
    path = _accounts_file()
    if path.is_file():
        return json.loads(path.read_text())
    accounts = {name: secrets.token_urlsafe(9) for name in (ADMIN, *ANNOTATORS)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(accounts, indent=2))
    path.chmod(0o600)
    return accounts


@transaction.atomic
def ensure_accounts(accounts: dict[str, str]) -> None:
    User = get_user_model()
    admin, created = User.objects.get_or_create(
        username=ADMIN, defaults={"is_staff": True, "is_superuser": True}
    )
    if created:
        admin.set_password(accounts[ADMIN])
        admin.save()
    for name in ANNOTATORS:
        user_create_annotator(username=name, password=accounts[name])


def demo_run_ensure(
    *, sentences: int, compose_prefixes: int = DEMO_COMPOSE_PREFIXES
) -> MiningRun | None:
    """The demo study's mining run: None where the study is there already, else the run
    under way (one a stop interrupted) or a new one, queued for nobody yet (the caller
    sends its work). It names alice and bob and the demo guidelines, which the study's
    load hands over."""
    if Study.objects.filter(name=DEMO_STUDY).exists():
        return None
    under_way = (
        MiningRun.objects.filter(study_name=DEMO_STUDY, study__isnull=True, cancel_requested=False)
        .filter(status__in=services.ACTIVE)
        .order_by("-created_at", "-id")
        .first()
    )
    if under_way is not None:
        return under_way
    User = get_user_model()
    config = MineConfig(
        model=DEMO_MODEL,
        corpus=DEMO_CORPUS,
        max_sentences=sentences,
        keys_per_layer=DEMO_KEYS_PER_LAYER,
        top_k=25,
        seed=0,
        checkpoint_every=DEMO_CHECKPOINT_EVERY,
    )
    return services.mining_run_create(
        study_name=DEMO_STUDY,
        config=config,
        created_by=User.objects.get(username=ADMIN),
        assign_to=list(User.objects.filter(username__in=ANNOTATORS).order_by("username")),
        assign_batch=DEMO_BATCH,
        compose_prefixes=compose_prefixes,
        guidelines=DEMO_GUIDELINES_FILE.read_text(encoding="utf-8"),
    )


def demo_run_pending_shards(run: MiningRun) -> list[int]:
    """The shards a mining run still waits for (none before it is cut into shards)."""
    if run.status != MiningRun.Status.MINING:
        return []
    pending = run.shards.exclude(status=MiningShard.Status.DONE).order_by("index")
    return list(pending.values_list("pk", flat=True))


def demo_processes(port: int) -> list[list[str]]:
    """The command lines of the demo's processes (config/processes.py builds them): the web
    server on ``port`` and one Celery worker for both queues, niced below the web."""
    python = sys.executable
    web = processes.web_argv(
        python=python, bind=f"127.0.0.1:{port}", access_log=True, log_level="warning"
    )
    worker = processes.worker_argv(
        ["celery", "gpu"], python=python, concurrency=1, log_level="WARNING"
    )
    return [web, worker]


# Ctrl-C, `kill`, `docker stop`, a closed terminal: each stops the demo the same way.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def stop_on_first_signal(_signum: int, _frame: object) -> None:
    """The first stop signal ends the serving loop; later ones (Ctrl-C pressed twice, a
    signal sent to the whole process group) are ignored while the children are stopped,
    instead of interrupting that with a traceback."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = (
        "Set up the demo and serve web + a Celery worker at http://127.0.0.1:8000 (--port); "
        "the worker mines the demo study in the background."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--setup-only",
            action="store_true",
            help="Set up, mining the demo study in this process if it is missing; print the "
            "accounts; do not serve.",
        )
        parser.add_argument(
            "--no-mine", action="store_true", help="Do not mine the demo study if it is missing."
        )
        parser.add_argument("--sentences", type=int, default=DEMO_SENTENCES)
        parser.add_argument(
            "--compose-prefixes",
            type=int,
            default=DEMO_COMPOSE_PREFIXES,
            help="The slice of the composition analysis run after mining (0: none).",
        )

    def handle(
        self,
        *args: Any,
        port: int,
        setup_only: bool,
        no_mine: bool,
        sentences: int,
        compose_prefixes: int = DEMO_COMPOSE_PREFIXES,
        **options: Any,
    ) -> None:
        Path(settings.DATA_DIR).mkdir(parents=True, exist_ok=True)
        call_command("migrate", interactive=False, verbosity=0)
        accounts = demo_accounts()
        ensure_accounts(accounts)
        self._import_example_study()
        run = (
            None
            if no_mine
            else demo_run_ensure(sentences=sentences, compose_prefixes=compose_prefixes)
        )
        if run is not None:
            self.stdout.write(
                f"The demo study: {DEMO_MODEL} (SmolLM2-135M-Instruct, dequantized from "
                f"4 bits) over the first {run.params.get('max_sentences')} sentences of "
                f"{DEMO_CORPUS}, {DEMO_KEYS_PER_LAYER} keys per layer for "
                f"{' and '.join(ANNOTATORS)}."
            )
        self._print_accounts(accounts, port)
        if setup_only:
            if run is not None:
                self._mine_here(run)
            return
        if run is not None:
            self._send(run)
        self._serve(port, run)

    def _mine_here(self, run: MiningRun) -> None:
        """The run's prepare, shards and merge in this process (no worker is started)."""
        self.stdout.write("Mining the demo study in this process…")
        try:
            if run.status in (MiningRun.Status.QUEUED, MiningRun.Status.PREPARING):
                services.mining_run_prepare(run=run)
            run.refresh_from_db()
            for shard_id in demo_run_pending_shards(run):
                shard = MiningShard.objects.select_related("run").get(pk=shard_id)
                services.mining_shard_mine(shard=shard)
            run.refresh_from_db()
            if run.status == MiningRun.Status.MERGING:
                services.mining_run_merge(run=run)
        except (MiningError, MiningStopped) as exc:
            services.mining_run_fail(run=run, error=str(exc))
            raise CommandError(f"mining the demo study failed: {exc}") from exc
        run.refresh_from_db()
        if run.status != MiningRun.Status.DONE:
            raise CommandError(f"mining the demo study: run {run.pk} is {run.status}: {run.error}")
        self.stdout.write(self.style.SUCCESS("The demo study is mined and assigned."))
        queued = CompositionJob.objects.filter(
            study__mining_run=run, status=CompositionJob.Status.QUEUED
        ).first()
        if queued is not None:  # what the worker would do next, here
            self.stdout.write(f"Composing the demo study over {queued.prefixes} prefixes…")
            composition_job_run(job_id=queued.pk)

    def _send(self, run: MiningRun) -> None:
        """Queue the run's work for the worker: a new run's prepare, or whatever a run a
        stop interrupted still waits for (its shards resume from their checkpoints)."""
        from mining.tasks import send_run_work

        resumed = run.status != MiningRun.Status.QUEUED or run.started_at is not None
        send_run_work(run_id=run.pk, status=run.status, shard_ids=demo_run_pending_shards(run))
        what = "resumes" if resumed else "is queued"
        self.stdout.write(
            f"Its mining run {run.pk} {what} on the worker, in the background: carol follows "
            f"it under Mining, {' and '.join(ANNOTATORS)} on their home page, where its keys "
            "appear when it is done (a few minutes on 2 CPU cores)."
        )

    def _import_example_study(self) -> None:
        """The labelled example study of fixtures/ (labels made by a rule, for
        demonstration), so that the report page has something to show on the first
        start. Imported once, through the ``import`` command (mining never imports
        reports); its annotators are inactive accounts."""
        with open(EXAMPLE_STUDY_FILE, encoding="utf-8") as file:
            name = json.loads(file.readline())["study"]["name"]
        if Study.objects.filter(name=name).exists():
            return
        self.stdout.write(f"Importing the example study {name!r} (labels made for demonstration)…")
        call_command("import", str(EXAMPLE_STUDY_FILE), stdout=self.stdout, stderr=self.stderr)

    def _print_accounts(self, accounts: dict[str, str], port: int) -> None:
        out = self.stdout
        out.write("")
        out.write(self.style.SUCCESS(f"ffkv demo — http://127.0.0.1:{port}"))
        out.write(f"  admin      {ADMIN:6}  password: {accounts[ADMIN]}")
        for name in ANNOTATORS:
            out.write(f"  annotator  {name:6}  password: {accounts[name]}")
        out.write(f"  (kept in {_accounts_file()})")
        out.write("")

    def _serve(self, port: int, run: MiningRun | None) -> None:
        # TQDM_DISABLE: a worker logs each redraw of a progress bar (the model's load) as
        # a line of its own; the run's progress is on the Mining page and alice's home.
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "TQDM_DISABLE": "1"}
        # Each child in a process group of its own, which this command stops: Ctrl-C
        # reaches this command alone, and a worker's pool process never outlives it.
        children = [
            subprocess.Popen(argv, cwd=settings.BASE_DIR, env=env, start_new_session=True)
            for argv in demo_processes(port)
        ]
        web = children[0]

        for signum in STOP_SIGNALS:
            signal.signal(signum, stop_on_first_signal)
        try:
            self._wait_until_up(port, web)
            self.stdout.write(
                self.style.SUCCESS(f"Serving at http://127.0.0.1:{port} — Ctrl-C to stop.")
            )
            watch = _RunWatch(run)
            while all(child.poll() is None for child in children):
                self._report(watch.changed())
                time.sleep(0.5)
            self.stderr.write("A demo process stopped; shutting the rest down.")
        except KeyboardInterrupt:
            self.stdout.write("Stopping…")
        finally:
            for signum in STOP_SIGNALS:  # a second one waits for this
                signal.signal(signum, signal.SIG_IGN)
            for child in children:
                _signal_group(child, _stopping(child)[0])
            for child in children:
                try:
                    child.wait(timeout=_stopping(child)[1])
                except subprocess.TimeoutExpired:
                    _signal_group(child, signal.SIGKILL)
                    child.wait(timeout=5)

    def _report(self, run: MiningRun | None) -> None:
        if run is None:
            return
        if run.status == MiningRun.Status.DONE:
            self.stdout.write(
                self.style.SUCCESS(
                    f"The demo study is mined: {' and '.join(ANNOTATORS)} have its keys."
                )
            )
        else:
            self.stderr.write(f"The demo study's mining run {run.pk} {run.status}: {run.error}")

    @staticmethod
    def _wait_until_up(port: int, web: subprocess.Popen) -> None:
        url = f"http://127.0.0.1:{port}/api/health/"
        for _ in range(120):
            if web.poll() is not None:
                raise SystemExit(f"The web server exited (port {port} in use?).")
            try:
                with urllib.request.urlopen(url, timeout=2):
                    return
            except OSError:
                time.sleep(0.5)
        raise SystemExit(f"The web server did not answer at {url}.")


def _stopping(child: subprocess.Popen) -> tuple[signal.Signals, float]:
    """How a child is asked to stop, and how many seconds it gets before SIGKILL.

    A Celery worker's SIGTERM waits for the task under way (minutes of a shard), and its
    SIGQUIT still waits for the pool process to finish it: the worker gets SIGQUIT and a
    few seconds. Killing it is safe, as for any worker: its shard resumes from the last
    checkpoint on the next start, and a merge killed mid-load leaves no study."""
    argv = child.args if isinstance(child.args, list) else []
    if "celery" in map(str, argv):
        return signal.SIGQUIT, 5.0
    return signal.SIGTERM, 15.0


def _signal_group(child: subprocess.Popen, signum: signal.Signals) -> None:
    """The child's whole process group: a worker's pool process too, even where the
    worker itself has exited."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signum)


class _RunWatch:
    """Looks at the demo's run every few seconds while the demo serves; ``changed()``
    gives it back once, when it has ended."""

    EVERY_S = 5.0

    def __init__(self, run: MiningRun | None) -> None:
        self.run_id = None if run is None else run.pk
        self.last = 0.0

    def changed(self) -> MiningRun | None:
        if self.run_id is None or time.monotonic() - self.last < self.EVERY_S:
            return None
        self.last = time.monotonic()
        run = MiningRun.objects.filter(pk=self.run_id).first()
        if run is None or not run.finished:
            return None
        self.run_id = None
        return run
