"""``manage.py worker_health``: does this host's Celery worker answer? docker-compose's
health check of ``worker`` and ``worker-gpu``.

The ping goes through the broker to the worker's control loop and back, so the check
fails when the worker process is dead or stuck, and when it or this host has lost the
broker. A prefork worker's control loop runs in its parent process: it answers while a
child process mines a shard.
"""

from __future__ import annotations

import socket
from typing import Any

from celery import current_app
from django.core.management.base import BaseCommand, CommandError, CommandParser
from kombu.exceptions import OperationalError

BROKER_UNREACHABLE = "cannot reach the broker at {broker} to ping {node}: {error}"
NO_ANSWER = "{node} did not answer a ping within {timeout:g} s"
BAD_TIMEOUT = "--timeout must be a number of seconds above 0, not {value!r}"


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise CommandError(BAD_TIMEOUT.format(value=value))
    return seconds


class Command(BaseCommand):
    help = "Exit 0 if the Celery worker of this host answers a ping through the broker."
    # Every 30 s in each worker container: the system checks would import the URLs and,
    # through them, the whole app.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--node",
            # What `celery worker` calls itself when started without -n (as compose does).
            default=f"celery@{socket.gethostname()}",
            help="the worker's node name (default: celery@<this host's name>)",
        )
        parser.add_argument(
            "--timeout", default="5", help="seconds to wait for the answer (default: 5)"
        )

    def handle(self, *args: Any, node: str, timeout: str, **options: Any) -> None:
        seconds = _seconds(timeout)
        with current_app.connection_for_write() as connection:
            try:
                connection.ensure_connection(max_retries=1)
                replies = current_app.control.ping(
                    destination=[node], timeout=seconds, connection=connection
                )
            except (OperationalError, OSError) as exc:
                raise CommandError(
                    BROKER_UNREACHABLE.format(broker=connection.as_uri(), node=node, error=exc)
                ) from exc
        if not any(node in reply for reply in replies or []):
            raise CommandError(NO_ANSWER.format(node=node, timeout=seconds))
        self.stdout.write(f"{node}: pong")
