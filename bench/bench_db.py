"""The database and Django set-up that the database benches share: a bench works in a
database of its own, made anew on DATABASE_URL's PostgreSQL server, or in a SQLite file
in its temporary folder."""

from __future__ import annotations

import os
from pathlib import Path


def database_env(tmp: Path, name: str) -> dict[str, str]:
    """The environment that points Django at the bench database ``name`` (dropped and
    made anew on PostgreSQL), or at a SQLite file in ``tmp``."""
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        import psycopg

        admin = url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        return {"DATABASE_URL": url.rsplit("/", 1)[0] + "/" + name}
    return {"DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}"}


def setup_django(env: dict[str, str], data_dir: Path) -> None:
    os.environ.update(env)
    os.environ["FFKV_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
