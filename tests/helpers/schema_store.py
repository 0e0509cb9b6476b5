"""A new store with elopipe's schema, copied from one made once per test process.

`ensure_schema` on a new database runs every statement of the schema (about 0.1 CPU-s and 51
fsyncs for a file, 0.07 CPU-s in memory); a test that needs an empty store (then its own rows)
gets a copy of the one `ensure_schema` made the first time, then calls `ensure_schema` on it as
the library would (which finds it current). The copy holds the same tables, views, sequences,
indexes, constraints and rows (`store_schema`'s fingerprint, with the template's creation time);
the tests of `ensure_schema` itself (tests/store/test_schema_docs.py) still start from nothing.
A store the library itself creates in a test process (`open_writer` on a new file: every
ingest into a new store) is filled the same way (tests/conftest.py): on a file, `ensure_schema`
from nothing also waits for 51 fsyncs (0.3-0.5 s of wall time, against 0.1 s for the copy).
Processes the tests start (`elopipe` commands, flows) make their stores as users' do.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import duckdb

from elopipe.store.schema import ensure_schema

_TEMPLATE: Path | None = None


def _template() -> Path:
    global _TEMPLATE
    if _TEMPLATE is None:
        folder = Path(tempfile.mkdtemp(prefix="elopipe-test-schema-"))
        atexit.register(shutil.rmtree, folder, True)
        path = folder / "empty.duckdb"
        con = duckdb.connect(str(path))
        try:
            ensure_schema(con)
        finally:
            con.close()
        assert not path.with_name(path.name + ".wal").exists(), "the store was left with a WAL"
        _TEMPLATE = path
    return _TEMPLATE


def new_store(db: Path) -> Path:
    """`db`: a new store file with the schema (it must not exist yet); returns `db`."""
    if db.exists():
        raise FileExistsError(db)
    shutil.copyfile(_template(), db)
    return db


def copy_schema_into(con: duckdb.DuckDBPyConnection) -> None:
    """Copy the template's schema and rows into the database `con` is on (which holds nothing)."""
    into = con.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
    con.execute("ATTACH ? AS elopipe_schema_template (READ_ONLY)", [str(_template())])
    try:
        con.execute(f'COPY FROM DATABASE elopipe_schema_template TO "{into}"')
    finally:
        con.execute("DETACH elopipe_schema_template")


def holds_nothing(con: duckdb.DuckDBPyConnection) -> bool:
    """True when the database `con` is on has no table, view or sequence (a new file)."""
    n = con.execute(
        "SELECT (SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database())"
        " + (SELECT count(*) FROM duckdb_views() WHERE database_name = current_database() AND NOT internal)"
        " + (SELECT count(*) FROM duckdb_sequences() WHERE database_name = current_database())"
    ).fetchone()[0]  # type: ignore[index]
    return int(n) == 0


def schema_connect(db: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A connection to a new store with the schema, after `ensure_schema`: the file `db` (which
    must not exist yet), or an in-memory database when `db` is None."""
    if db is not None:
        con = duckdb.connect(str(new_store(db)))
    else:
        con = duckdb.connect()
        copy_schema_into(con)
    ensure_schema(con)
    return con
