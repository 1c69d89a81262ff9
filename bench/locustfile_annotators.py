"""Simulated annotators for bench/api_load.py: log in, then fetch key → save pattern →
submit, with a short think time, as a person working through a batch would.

With ``FFKV_BENCH_EXPORT_STUDY`` set, an admin starts an export of that study through the
API once every annotator is logged in, polls the job until it is done or failed, writes
the outcome to ``FFKV_BENCH_EXPORT_RESULT`` (JSON) and stops the run: the statistics
then cover exactly the time the export ran."""

from __future__ import annotations

import itertools
import json
import os
import time
import uuid
from pathlib import Path

import gevent
import requests
from gevent.event import Event
from locust import HttpUser, between, task
from locust.env import Environment

PASSWORD = os.environ["FFKV_BENCH_PASSWORD"]
USERS = int(os.environ["FFKV_BENCH_USERS"])
USER_PREFIX = os.environ.get("FFKV_BENCH_USER_PREFIX", "bench-annotator-")
EXPORT_STUDY = os.environ.get("FFKV_BENCH_EXPORT_STUDY")
EXPORT_ADMIN = os.environ.get("FFKV_BENCH_ADMIN", "")
EXPORT_RESULT = os.environ.get("FFKV_BENCH_EXPORT_RESULT", "")
EXPORT_LIMIT_S = float(os.environ.get("FFKV_BENCH_EXPORT_LIMIT_S", "180"))
EXPORT_POLL_S = 0.5
_names = itertools.count()
_logged_in = itertools.count(1)
# Logging in is deliberately slow (PBKDF2); the budget is about annotating. Everyone
# waits until all are logged in, and the statistics start from zero at that moment.
_all_logged_in = Event()


class Annotator(HttpUser):
    # Between actions a person reads 25 prefixes or types a description: 1-3 s is
    # already brisk, so 20 of them is a busy study, not an idle one.
    wait_time = between(1.0, 3.0)

    def on_start(self) -> None:
        self.username = f"{USER_PREFIX}{next(_names)}"
        self.client.get("/login", name="login page")
        response = self.client.post(
            "/api/auth/login/",
            json={"username": self.username, "password": PASSWORD},
            headers=self._headers(),
            name="log in",
        )
        response.raise_for_status()
        if next(_logged_in) == USERS:
            self.environment.stats.reset_all()
            _all_logged_in.set()
            if EXPORT_STUDY:
                gevent.spawn(_export_then_stop, self.environment)
        _all_logged_in.wait()
        # The barrier lines everyone up; people do not act in lockstep. Each starts after
        # a think time of their own, as between any two keys, not all in the same
        # millisecond (20 simultaneous first keys would be a burst no study produces).
        self.wait()

    def _headers(self) -> dict[str, str]:
        return {"X-CSRFToken": self.client.cookies.get("csrftoken") or ""}

    @task
    def annotate_one_key(self) -> None:
        nxt = self.client.get("/api/next-key/", name="next key")
        if nxt.status_code == 204:
            return
        key_id = nxt.json()["key_id"]
        key = self.client.get(f"/api/keys/{key_id}/", name="fetch key").json()
        version = key["annotation"]["version"]
        ranks = [p["rank"] for p in key["prefixes"][:3]]
        saved = self.client.post(
            f"/api/keys/{key_id}/patterns/",
            json={
                "description": "recurring surface form",
                "kind": "shallow",
                "prefix_ranks": ranks,
                "version": version,
                "client_id": str(uuid.uuid4()),
            },
            headers=self._headers(),
            name="save pattern",
        )
        if saved.status_code not in (200, 201):
            return
        self.client.post(
            f"/api/keys/{key_id}/submit/",
            json={"version": saved.json()["version"]},
            headers=self._headers(),
            name="submit",
        )


def _export_then_stop(environment: Environment) -> None:
    """Export the study as an admin would (the real endpoint, the real worker), then stop
    the run. Its requests go through ``requests``, not locust's client: they are not
    counted with the annotators'."""
    result: dict[str, object] = {"status": "not started"}
    try:
        result = _export(str(environment.host))
    except Exception as exc:  # the bench reports it instead of hanging
        result = {"status": "error", "error": repr(exc)}
    finally:
        Path(EXPORT_RESULT).write_text(json.dumps(result))
        assert environment.runner is not None
        environment.runner.quit()


def _export(host: str) -> dict[str, object]:
    session = requests.Session()
    session.get(f"{host}/login", timeout=30)

    def csrf() -> dict[str, str]:
        return {"X-CSRFToken": session.cookies.get("csrftoken") or ""}

    session.post(
        f"{host}/api/auth/login/",
        json={"username": EXPORT_ADMIN, "password": PASSWORD},
        headers=csrf(),
        timeout=30,
    ).raise_for_status()
    start = time.monotonic()
    created = session.post(
        f"{host}/api/admin/studies/{EXPORT_STUDY}/exports/",
        json={"format": "jsonl"},
        headers=csrf(),
        timeout=30,
    )
    created.raise_for_status()
    job = created.json()
    while job["status"] not in ("done", "failed"):
        if time.monotonic() - start > EXPORT_LIMIT_S:
            return {**job, "status": "unfinished", "seconds": time.monotonic() - start}
        gevent.sleep(EXPORT_POLL_S)
        answer = session.get(f"{host}/api/admin/exports/{job['id']}/", timeout=30)
        answer.raise_for_status()
        job = answer.json()
    return {**job, "seconds": time.monotonic() - start}
