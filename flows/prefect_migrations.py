"""Whether the temporary server may skip Prefect's database migrations at its start.

Prefect's server runs its Alembic migrations each time it starts (PREFECT_API_DATABASE_MIGRATE_ON_START):
on a database already at the newest revision, that is Alembic loading its 115 revision scripts to
find nothing to do, about 0.1 CPU-s of every `run` (bench/prefect_ab.py). After a start that ran
them, elopipe writes what that start left, Prefect's version, the database file and the Alembic
revision it holds, into `PREFECT_HOME/.elopipe-database-at-head`. A later server skips the
migrations only when the database holds that same revision and Prefect is that same version: a
new Prefect, another database, or a database migrated, downgraded or reset by anything else runs
them again. Only a SQLite database in a file (Prefect's default) is looked at; any other is always
migrated. The database is only read here (SQLite's read-only mode), never written.

Imports Prefect's settings: call once Prefect is imported (flows.prefect_server).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import urllib.parse
from pathlib import Path

MARKER = ".elopipe-database-at-head"


def _database_file() -> Path | None:
    """The server's SQLite database file; None for any other database (or one in memory)."""
    from prefect.settings import get_current_settings

    url = get_current_settings().server.database.connection_url
    text = url.get_secret_value() if url is not None else ""
    scheme, sep, rest = text.partition(":///")
    if scheme != "sqlite+aiosqlite" or not sep or "?" in rest or rest in ("", ":memory:"):
        return None
    return Path(rest)


def _state(db: Path) -> str | None:
    """What the marker records for `db` as it is now; None when it holds no single revision (no
    such file, no Alembic table: a fresh home) or cannot be read."""
    import prefect

    try:
        con = sqlite3.connect(f"file:{urllib.parse.quote(str(db))}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT version_num FROM alembic_version").fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    if len(rows) != 1:
        return None
    return f"prefect {prefect.__version__}\n{db}\n{rows[0][0]}\n"


def _marker() -> Path:
    from prefect.settings import get_current_settings

    return Path(get_current_settings().home) / MARKER


def at_head() -> bool:
    """True when the server's database is where a start that ran this Prefect's migrations left it."""
    db = _database_file()
    state = None if db is None else _state(db)
    if state is None:
        return False
    try:
        return _marker().read_text(encoding="utf-8") == state
    except (OSError, ValueError):  # no marker yet, or not one of ours
        return False


def record_at_head() -> None:
    """Call after a start that ran the migrations (the server answered: they are done): write
    what it left into the marker. Nothing when the database is not a SQLite file or the home
    cannot be written (the next start migrates, as Prefect does)."""
    db = _database_file()
    state = None if db is None else _state(db)
    if state is None:
        return
    marker = _marker()
    tmp = marker.with_name(f"{marker.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(state, encoding="utf-8")
        os.replace(tmp, marker)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
