"""`make demo`: set up the demo (accounts, the mined demo study, assignments), then serve.

Idempotent: a second run reuses the database, the accounts and the mined study, and
starts in seconds. The web server (gunicorn) and a Celery worker on the embedded
broker run until Ctrl-C.
"""

from __future__ import annotations

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
from django.core.management.base import BaseCommand
from django.db import transaction

from annotate.models import Batch, Guideline, Key, Study
from annotate.services import (
    assignment_create,
    batch_create,
    guideline_publish,
    user_create_annotator,
)
from mining.models import MiningRun

ADMIN = "carol"
ANNOTATORS = ("alice", "bob")
DEMO_MODEL = "builtin:smollm2-135m"
DEMO_CORPUS = "builtin:wiki-vital"
DEMO_STUDY = "demo: SmolLM2-135M on wiki-vital"
DEMO_BATCH = "demo batch"
# SmolLM2-135M mines about 550 tokens/s on 2 CPU cores; wiki-vital's first 3,000
# sentences are about 91,000 of its tokens: under 3 minutes of mining, inside the
# 5 minutes a fresh clone may take to serve its first page, with room for a slower machine.
DEMO_SENTENCES = 3000
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


@transaction.atomic
def ensure_demo_assignments(study: Study) -> Batch:
    """One batch of the demo study's keys, assigned to both annotators (overlap 2)."""
    batch = Batch.objects.filter(study=study, name=DEMO_BATCH).first()
    if batch is None:
        keys = list(Key.objects.filter(study=study).order_by("layer", "index"))
        admin = get_user_model().objects.get(username=ADMIN)
        batch = batch_create(study=study, name=DEMO_BATCH, keys=keys, created_by=admin)
    for user in get_user_model().objects.filter(username__in=ANNOTATORS):
        assignment_create(batch=batch, annotator=user)
    return batch


def ensure_demo_guidelines(study: Study) -> None:
    """Version 1 of the demo study's guidelines, once (an admin's later versions stay)."""
    if Guideline.objects.filter(study=study).exists():
        return
    text = DEMO_GUIDELINES_FILE.read_text(encoding="utf-8")
    admin = get_user_model().objects.get(username=ADMIN)
    guideline_publish(study=study, text=text, author=admin)


class Command(BaseCommand):
    help = "Set up the demo and serve web + a Celery worker at http://127.0.0.1:8000."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--setup-only", action="store_true", help="Set up, print the accounts, do not serve."
        )
        parser.add_argument(
            "--no-mine", action="store_true", help="Do not mine the demo study if it is missing."
        )
        parser.add_argument("--sentences", type=int, default=DEMO_SENTENCES)

    def handle(
        self,
        *args: Any,
        port: int,
        setup_only: bool,
        no_mine: bool,
        sentences: int,
        **options: Any,
    ) -> None:
        Path(settings.DATA_DIR).mkdir(parents=True, exist_ok=True)
        call_command("migrate", interactive=False, verbosity=0)
        accounts = demo_accounts()
        ensure_accounts(accounts)
        study = Study.objects.filter(name=DEMO_STUDY).first()
        if study is None and not no_mine:
            study = self._mine_demo_study(sentences)
        if study is not None:
            ensure_demo_assignments(study)
            ensure_demo_guidelines(study)
        self._import_example_study()
        self._print_accounts(accounts, port)
        if not setup_only:
            self._serve(port)

    def _mine_demo_study(self, sentences: int) -> Study:
        # A demo stopped with Ctrl-C while mining left its in-process run unfinished.
        MiningRun.objects.filter(study_name=DEMO_STUDY, study__isnull=True).exclude(
            status__in=[MiningRun.Status.FAILED, MiningRun.Status.CANCELLED]
        ).update(status=MiningRun.Status.FAILED, error="interrupted")
        self.stdout.write(
            f"Mining the demo study: {DEMO_MODEL} (SmolLM2-135M-Instruct, dequantized from "
            f"4 bits) over the first {sentences} sentences of {DEMO_CORPUS} "
            "(about 3 minutes on 2 CPU cores)…"
        )
        call_command(
            "mine",
            model=DEMO_MODEL,
            corpus=DEMO_CORPUS,
            study=DEMO_STUDY,
            max_sentences=sentences,
            keys_per_layer=DEMO_KEYS_PER_LAYER,
            top_k=25,
            seed=0,
            stdout=self.stdout,
            stderr=self.stderr,
        )
        return Study.objects.get(name=DEMO_STUDY)

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

    def _serve(self, port: int) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        web = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                str(settings.BASE_DIR / "config" / "gunicorn.conf.py"),
                "config.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--access-logfile",
                "-",
                "--log-level",
                "warning",
            ],
            env=env,
        )
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                "celery,gpu",
                "--concurrency",
                "1",
                "--loglevel",
                "WARNING",
            ],
            env=env,
        )
        children = [web, worker]

        def stop(_signum: int, _frame: object) -> None:
            raise KeyboardInterrupt  # `kill` / `docker stop` shut the children down too

        signal.signal(signal.SIGTERM, stop)
        try:
            self._wait_until_up(port, web)
            self.stdout.write(
                self.style.SUCCESS(f"Serving at http://127.0.0.1:{port} — Ctrl-C to stop.")
            )
            while all(child.poll() is None for child in children):
                time.sleep(0.5)
            self.stderr.write("A demo process stopped; shutting the rest down.")
        except KeyboardInterrupt:
            self.stdout.write("Stopping…")
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one waits for this
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)
            for child in children:
                try:
                    child.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    child.kill()

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
