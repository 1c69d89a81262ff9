"""Simulated annotators for bench/api_load.py: log in, then fetch key → save pattern →
submit, with a short think time, as a person working through a batch would."""

from __future__ import annotations

import itertools
import os
import uuid

from gevent.event import Event
from locust import HttpUser, between, task

PASSWORD = os.environ["FFKV_BENCH_PASSWORD"]
USERS = int(os.environ["FFKV_BENCH_USERS"])
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
        self.username = f"bench-annotator-{next(_names)}"
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
