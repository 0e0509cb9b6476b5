"""A Prefect home for the temporary server of a process a test starts, its database migrated by
the first such server of the test process.

Prefect's server migrates a new database at its start (Alembic's 115 revisions: about 4.6 CPU-s,
10 s of wall time on a loaded machine), and each test that starts a server of its own did so on
a new home. The first test of a process gets an empty home, and its server migrates it for real,
as a user's first `run` does; once that test is done, `keep_migrated` keeps a copy of the
database it left (SQLite's backup: the pages of its write-ahead log too), when the test wrote no
flow run into it. The later tests get a new home holding a copy: their server finds it at the
newest revision, and Alembic has nothing to do. The marker of flows.prefect_migrations is not
copied (it names another database file), so a forked server still runs its migration step and
records the marker, as on a home another Prefect command migrated.

    home = new_home(tmp_path / "home")   # empty for the first test of the process
    ...                                  # a process whose server runs on `home`, then stops
    keep_migrated(home)                  # only after a test whose server wrote no run
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from pathlib import Path

# Prefect's database in its home (PREFECT_API_DATABASE_CONNECTION_URL unset)
DATABASE = "prefect.db"
_TEMPLATE: Path | None = None


def _copy(source: Path, target: Path) -> None:
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def new_home(home: Path) -> Path:
    """Make `home` (a new folder), with a copy of the kept migrated database when there is one."""
    home.mkdir(parents=True)
    if _TEMPLATE is not None:
        _copy(_TEMPLATE, home / DATABASE)
    return home


def keep_migrated(home: Path) -> None:
    """Keep the database of `home` for the next `new_home`, unless one is kept already: call it
    once the server that migrated it has stopped, and only when nothing but its start (and
    reads) went to that server."""
    global _TEMPLATE
    db = home / DATABASE
    if _TEMPLATE is not None or not db.exists():
        return
    folder = Path(tempfile.mkdtemp(prefix="elopipe-test-prefect-db-"))
    atexit.register(shutil.rmtree, folder, True)
    kept = folder / DATABASE
    _copy(db, kept)
    con = sqlite3.connect(f"file:{kept}?mode=ro", uri=True)
    try:
        revisions = con.execute("SELECT count(*) FROM alembic_version").fetchone()[0]
        runs = con.execute("SELECT count(*) FROM flow_run").fetchone()[0]
    finally:
        con.close()
    assert revisions == 1 and runs == 0, (revisions, runs)
    _TEMPLATE = kept
