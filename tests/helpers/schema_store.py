"""A new store with elopipe's schema, copied from one made once per test process.

`ensure_schema` on a new database runs every statement of the schema (about 0.1 CPU-s and 51
fsyncs for a file, 0.07 CPU-s in memory); a test that needs an empty store (then its own rows)
gets a copy of the one `ensure_schema` made the first time, then calls `ensure_schema` on it as
the library would (which finds it current). The copy holds the same tables, views, sequences,
indexes, constraints and rows (`store_schema`'s fingerprint, with the template's creation time);
the tests of `ensure_schema` itself (tests/store/test_schema_docs.py) still start from nothing.
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


def schema_connect(db: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A connection to a new store with the schema, after `ensure_schema`: the file `db` (which
    must not exist yet), or an in-memory database when `db` is None."""
    if db is not None:
        con = duckdb.connect(str(new_store(db)))
    else:
        con = duckdb.connect()
        con.execute("ATTACH ? AS elopipe_schema_template (READ_ONLY)", [str(_template())])
        con.execute("COPY FROM DATABASE elopipe_schema_template TO memory")
        con.execute("DETACH elopipe_schema_template")
    ensure_schema(con)
    return con
