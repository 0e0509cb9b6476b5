"""`cache.released` drops the store's blocks DuckDB cached and the changes it held in memory, without
a temporary directory (never ``<store>.tmp`` beside the user's store), and leaves DuckDB's settings
as they were; on a store of the real Irish TRF files of ../shared/data."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.store import cache
from elopipe.store.connect import open_writer
from tests.helpers.paths import SHARED_DATA

TRF = SHARED_DATA / "trf"
FILES = [TRF / "irl_bunratty_masters_2011_crlf.trf", TRF / "irl_irish_junior_champs_2011_crlf.trf"]

pytestmark = pytest.mark.skipif(not all(f.exists() for f in FILES), reason="../shared/data is not available")


def _memory(con: duckdb.DuckDBPyConnection, tag: str) -> int:
    rows = con.execute("SELECT memory_usage_bytes FROM duckdb_memory() WHERE tag = ?", [tag]).fetchall()
    return int(rows[0][0]) if rows else 0


def _settings(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0] for name in ("temp_directory", "memory_limit")
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("cache") / "s.duckdb"
    ingest_paths(FILES, db)
    return db


def _mib(limit: str) -> int:
    assert limit.endswith("MiB")
    return int(limit.removesuffix("MiB")) * 2**20


def test_release_drops_the_cached_blocks_and_the_committed_changes(store: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    db.write_bytes(store.read_bytes())
    bound = _mib(cache._RELEASE_LIMIT)
    with open_writer(db) as con:
        # the two files' blocks are under the bound the release leaves: a table of 48 MB of doubles
        # that do not compress puts the cache well over it
        con.execute("CREATE TABLE filler AS SELECT random() AS r FROM range(6000000)")
        con.execute("CHECKPOINT")
        before = _settings(con)
        rows = con.execute("SELECT count(*), sum(hash(g)) FROM games g").fetchall()
        filled = con.execute("SELECT count(*), sum(hash(r)) FROM filler").fetchall()
        # a change committed and not yet checkpointed is held in memory
        con.execute("CREATE TABLE copied AS SELECT * FROM games")
        assert _memory(con, "IN_MEMORY_TABLE") > 0
        cached = _memory(con, "BASE_TABLE")
        assert cached > 2 * bound
        with cache.released(con) as release:
            assert _settings(con)[0] == ""
            release()
            # what stays cached is bounded by the release's limit, whatever was cached before
            assert _memory(con, "BASE_TABLE") + _memory(con, "IN_MEMORY_TABLE") <= bound
            assert _memory(con, "IN_MEMORY_TABLE") == 0
            assert _settings(con) == ["", before[1]]
            # the blocks are read again from the store
            assert con.execute("SELECT count(*), sum(hash(g)) FROM games g").fetchall() == rows
            assert con.execute("SELECT count(*), sum(hash(g)) FROM copied g").fetchall() == rows
            assert con.execute("SELECT count(*), sum(hash(r)) FROM filler").fetchall() == filled
        assert _settings(con) == before
    assert not Path(f"{db}.tmp").exists()


def test_a_statement_run_at_the_release_limit_reads_the_store(store: Path, tmp_path: Path) -> None:
    """The limit `released` sets for an instant leaves room for a statement's pins: at 0 B, a query
    that ran in that instant failed (``failed to pin block of size 256.0 KiB (0 bytes/0 bytes
    used)``, a `rate` of the federation bench)."""
    db = tmp_path / "s.duckdb"
    db.write_bytes(store.read_bytes())
    with open_writer(db) as con:
        query = "SELECT count(*), sum(hash(g)) FROM games g"
        rows = con.execute(query).fetchall()
        con.execute("SET temp_directory = ''")
        con.execute(f"SET memory_limit = '{cache._RELEASE_LIMIT}'")
        try:
            assert con.execute(query).fetchall() == rows
            assert con.execute("SELECT count(*) FROM players").fetchall()[0][0] > 0
        finally:
            con.execute("RESET memory_limit")


def test_nothing_is_released_once_duckdb_wrote_temporary_files(store: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    db.write_bytes(store.read_bytes())
    spill = tmp_path / "spill"
    with open_writer(db) as con:
        con.execute(f"SET temp_directory = '{spill}'")
        con.execute("CREATE TEMP TABLE big AS SELECT range AS i, random() AS r FROM range(3000000)")
        con.execute("SET memory_limit = '16MB'")  # the temporary table goes to `spill`
        con.execute("RESET memory_limit")
        assert any(spill.iterdir())
        con.execute("SELECT count(*) FROM games").fetchall()
        cached = _memory(con, "BASE_TABLE")
        before = _settings(con)
        with cache.released(con) as release:
            release()
            assert _memory(con, "BASE_TABLE") == cached > 0
        assert _settings(con) == before
