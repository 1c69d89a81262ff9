"""`manage.py contract --write | --check`: docs/data-format.md's field tables, rendered
from ``reports.contract`` (``--check`` fails where the page is stale)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.contract.docs import DOC, doc_rendered

STALE = "{path} is stale: run `manage.py contract --write`"


class Command(BaseCommand):
    help = "Render the JSONL contract's field tables into docs/data-format.md."

    def add_arguments(self, parser: CommandParser) -> None:
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--write", action="store_true", help="rewrite the page's tables")
        mode.add_argument("--check", action="store_true", help="fail where they are stale")

    def handle(self, *args: Any, **options: Any) -> None:
        text = DOC.read_text(encoding="utf-8")
        try:
            rendered = doc_rendered(text)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["check"]:
            if rendered != text:
                raise CommandError(STALE.format(path=DOC))
            self.stdout.write(f"{DOC} is up to date")
            return
        if rendered != text:
            DOC.write_text(rendered, encoding="utf-8")
        self.stdout.write(f"wrote {DOC}")
