"""Frames between DuckDB and Polars without pyarrow (`elopipe.store.frames`, issue 27): every stored
column reads as ``.pl()`` reads it, a registered frame reads back as it was (also when a statement
scans it twice, and with columns of Polars' Null type), and neither an ingest nor a rate imports
pyarrow or NumPy. On the store of a real Irish TRF (Bunratty Masters 2011), ingested and rated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from elopipe.store import write
from elopipe.store.connect import open_writer
from elopipe.store.frames import registered, to_polars
from tests.helpers.ingested import rated as rated_store
from tests.helpers.paths import SHARED_DATA

BUNRATTY = SHARED_DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf"

pytestmark = pytest.mark.skipif(not BUNRATTY.exists(), reason="../shared/data is not available")


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("frames") / "s.duckdb"
    rated_store(db, [[BUNRATTY]], "fide")
    return db


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND estimated_size > 0 ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def test_every_stored_table_reads_as_pl_reads_it_and_registers_back(rated: Path) -> None:
    with duckdb.connect(str(rated), read_only=True) as con:
        tables = _tables(con)
        assert {"games", "tournament_players", "rating_lists", "title_norms"} <= set(tables)
        for table in tables:
            query = f"SELECT * FROM {table} ORDER BY ALL"
            got, expected = to_polars(con.sql(query)), con.sql(query).pl()
            assert got.schema == expected.schema, table
            assert got.equals(expected), table
            # scanned twice by one statement: each scan gets its own stream
            with registered(con, "_back", got):
                twice = con.execute("SELECT count(*) FROM (SELECT * FROM _back UNION ALL SELECT * FROM _back)")
                assert twice.fetchall()[0][0] == 2 * got.height, table
                back = con.execute("SELECT * FROM _back ORDER BY ALL").fetchall()
            assert back == con.execute(query).fetchall(), table


def test_a_frame_with_null_typed_columns_is_written(rated: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    db.write_bytes(rated.read_bytes())
    with open_writer(db) as con:
        pid, name = con.execute("SELECT player_id, name FROM players ORDER BY player_id LIMIT 1").fetchall()[0]
        frame = pl.DataFrame({"player_id": [pid + 100_000], "name": [name], "name_key": ["k"]}).with_columns(
            pl.lit(None).alias("birth_year"), pl.lit(None).alias("fide_id")
        )
        assert frame.schema["birth_year"] == pl.Null
        write.insert(con, "players", frame)
        row = con.execute("SELECT name, birth_year, fide_id FROM players WHERE player_id = ?", [pid + 100_000])
        assert row.fetchall() == [(name, None, None)]


def test_ingest_and_rate_import_neither_pyarrow_nor_numpy(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from elopipe.ingest.driver import ingest_paths\n"
        "from elopipe.rating.run import rate\n"
        "from elopipe.store.connect import open_writer\n"
        f"ingest_paths([{str(BUNRATTY)!r}], {str(tmp_path / 's.duckdb')!r})\n"
        f"with open_writer({str(tmp_path / 's.duckdb')!r}) as con:\n"
        "    rate(con, 'fide')\n"
        "    rate(con, 'fide')\n"
        "print(sorted(m for m in ('pyarrow', 'numpy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_pgn_ingest_and_batched_merges_import_no_pyarrow(tmp_path: Path) -> None:
    """A PGN ingest re-links games with moves (`identity.near_pairs`) and `consolidate`'s merges end
    with `Batch.flush`: both lend and read frames through the Arrow stream, never DuckDB's
    pyarrow path (~0.05 CPU-s of an ingest). NumPy is the PGN reader's own (`chunk_refs`)."""
    pgn = SHARED_DATA / "pgn" / "tata2018.pgn"
    db = str(tmp_path / "s.duckdb")
    code = (
        "import sys\n"
        "from elopipe.identity.decisions import Batch, merge_into\n"
        "from elopipe.ingest.driver import ingest_paths\n"
        "from elopipe.store.connect import open_writer\n"
        f"ingest_paths([{str(pgn)!r}], {db!r})\n"
        "print('pyarrow' in sys.modules)\n"
        f"with open_writer({db!r}) as con:\n"
        # two players of no common tournament (the file holds several groups)
        "    a = con.execute('SELECT min(player_id) FROM tournament_players').fetchall()[0][0]\n"
        "    b = con.execute('SELECT min(player_id) FROM tournament_players WHERE player_id NOT IN'\n"
        "                    ' (SELECT player_id FROM tournament_players WHERE tournament_id IN'\n"
        "                    ' (SELECT tournament_id FROM tournament_players WHERE player_id = ?))',\n"
        "                    [a]).fetchall()[0][0]\n"
        "    con.execute('UPDATE players SET fide_id = NULL, national_id = NULL WHERE player_id = ?', [b])\n"
        "    batch = Batch(con)\n"
        "    merge_into(con, a, b, 'test', 'rule:name', batch)\n"
        "    batch.flush(con)\n"
        "    moved = con.execute('SELECT count(*) FROM games WHERE ? IN (white_id, black_id)', [b]).fetchall()[0][0]\n"
        "print('pyarrow' in sys.modules, moved)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-2:] == ["False", "False 0"], done.stderr
