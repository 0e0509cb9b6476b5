"""Batch ingest (issue 13): a batch of files equals the same files one by one, and an interrupted
batch leaves no partial file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import elopipe.ingest.parse_pool as pp
from elopipe.ingest.driver import ingest_paths
from tests.helpers.paths import REPO
from tests.helpers.store_rows import db_rows

DATA = REPO.parent / "shared" / "data"
# Every real TRF and PGN file but the three of several megabytes (a file that size is a batch's
# worth on its own; that it reads the same in pieces is tests/ingest/test_pgn_pieces.py's): what
# is tested is the batch, and the rest are 44 files whose players recur across them.
FILES = sorted((DATA / "trf").glob("*.trf")) + sorted(
    p for p in (DATA / "pgn").glob("*.pgn") if p.stat().st_size < 2**20
)

# Every row the ingest writes, by content (ids included: a batch draws them in file order, as
# one file at a time does).
TABLES = {
    "source_files": "SELECT file_id, sha256, path, member, status, n_tournaments, n_players, n_games, n_unplayed,"
    " n_errors, reason, replaced_by FROM source_files",
    "tournaments": "SELECT * EXCLUDE (extra) FROM tournaments",
    "players": "SELECT * FROM players",
    "tournament_players": "SELECT * FROM tournament_players",
    "player_aliases": "SELECT * FROM player_aliases",
    "games": "SELECT * EXCLUDE (headers) FROM games",
    "unplayed_rounds": "SELECT * FROM unplayed_rounds",
    "game_sources": "SELECT * FROM game_sources",
    "player_merges": "SELECT merge_id, kept_id, merged_id, action, decided_by, reason FROM player_merges",
    "ingest_errors": "SELECT * FROM ingest_errors",
}


def _tables(db: Path) -> dict[str, list[tuple]]:
    return {name: sorted(db_rows(db, sql), key=repr) for name, sql in TABLES.items()}


def test_one_batch_equals_the_same_files_one_by_one(tmp_path: Path, monkeypatch) -> None:
    batch_db, single_db = tmp_path / "batch.duckdb", tmp_path / "single.duckdb"
    summary = ingest_paths(FILES, batch_db)
    assert summary.count("loaded") + summary.count("partial") == len(FILES)
    monkeypatch.setattr(pp, "BATCH_FILES", 1)
    single = ingest_paths(FILES, single_db)
    assert [(f.name, f.status, f.n_games, f.n_players) for f in single.files] == [
        (f.name, f.status, f.n_games, f.n_players) for f in summary.files
    ]
    batch, one_by_one = _tables(batch_db), _tables(single_db)
    for name in TABLES:
        assert batch[name] == one_by_one[name], name


_KILLER = textwrap.dedent(
    """
    import os, signal, sys
    import elopipe.ingest.loader as loader
    import elopipe.ingest.parse_pool as pp
    from elopipe.ingest.driver import ingest_paths

    pp.BATCH_FILES = int(sys.argv[3])
    real = loader._load
    seen = []

    def load_then_die(con, batch):
        out = real(con, batch)
        seen.append(len(batch))
        if len(seen) == 2:  # the second batch is written but not committed
            os.kill(os.getpid(), signal.SIGKILL)
        return out

    loader._load = load_then_die
    ingest_paths([sys.argv[1]], sys.argv[2])
    """
)


def test_a_batch_killed_before_its_commit_leaves_no_row_and_the_next_run_completes(tmp_path: Path) -> None:
    inbox = tmp_path / "in"
    inbox.mkdir()
    trfs = sorted((DATA / "trf").glob("*.trf"))[:9]
    for f in trfs:
        (inbox / f.name).write_bytes(f.read_bytes())
    db = tmp_path / "s.duckdb"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(inbox), str(db), "3"], env=env, timeout=300)
    assert proc.returncode == -signal.SIGKILL
    # the first batch (3 files) is committed whole; nothing of the second batch's files is stored
    names = sorted(Path(p).name for (p,) in db_rows(db, "SELECT path FROM source_files"))
    assert names == sorted(f.name for f in trfs[:3])
    stored = db_rows(db, "SELECT count(*) FROM tournaments WHERE file_id NOT IN (SELECT file_id FROM source_files)")
    assert stored == [(0,)]
    again = ingest_paths([inbox], db)
    assert again.count("skipped") == 3 and again.count("loaded") + again.count("partial") == 6
    clean = tmp_path / "clean.duckdb"
    ingest_paths([inbox], clean)
    assert db_rows(db, "SELECT count(*), sum(n_games) FROM source_files") == db_rows(
        clean, "SELECT count(*), sum(n_games) FROM source_files"
    )
    assert db_rows(db, "SELECT count(*) FROM canonical_games") == db_rows(clean, "SELECT count(*) FROM canonical_games")


@pytest.mark.parametrize("bad", ["binary.trf", "empty.pgn"])
def test_an_unreadable_file_is_rejected_and_the_rest_of_its_batch_loads(tmp_path: Path, bad: str) -> None:
    inbox = tmp_path / "in"
    inbox.mkdir()
    for f in sorted((DATA / "trf").glob("*.trf"))[:3]:
        (inbox / f.name).write_bytes(f.read_bytes())
    (inbox / bad).write_bytes(b"\x00\x01" * 500 if bad.startswith("binary") else b"")
    summary = ingest_paths([inbox], tmp_path / "s.duckdb")
    by_name = {Path(f.name).name: f for f in summary.files}
    assert by_name[bad].status == "rejected" and by_name[bad].reason
    assert sum(f.status in ("loaded", "partial") for f in summary.files) == 3
    assert db_rows(tmp_path / "s.duckdb", "SELECT status FROM source_files WHERE path LIKE ?", [f"%{bad}"]) == [
        ("rejected",)
    ]


def test_a_store_made_before_the_event_columns_gets_them_filled(tmp_path: Path) -> None:
    import duckdb

    from elopipe.store.connect import open_writer

    db = tmp_path / "old.duckdb"
    ingest_paths([DATA / "trf" / "irl_bunratty_major_2011_crlf.trf", DATA / "pgn" / "wchcand22.pgn"], db)
    expected = db_rows(db, "SELECT tournament_id, event_key, first_day, last_day FROM tournaments ORDER BY 1")
    assert all(k for _, k, _, _ in expected) and all(d0 and d1 for _, _, d0, d1 in expected)
    con = duckdb.connect(str(db))
    for col in ("event_key", "first_day", "last_day"):
        con.execute(f"ALTER TABLE tournaments DROP COLUMN {col}")
    con.execute("DROP TABLE store_schema")  # as an older store has none
    con.close()
    with open_writer(db):
        pass
    assert db_rows(db, "SELECT tournament_id, event_key, first_day, last_day FROM tournaments ORDER BY 1") == expected


def test_a_pool_broken_between_batches_is_replaced_and_every_file_loads(tmp_path: Path, monkeypatch) -> None:
    """A worker that died while nothing was read from it leaves the pool broken: the next submit
    raises. The batch goes to a new pool and nothing is lost."""
    import concurrent.futures as cf
    from concurrent.futures.process import BrokenProcessPool

    pools: list[object] = []

    class Pool:
        def __init__(self) -> None:
            self.broken = not pools  # the first pool breaks at its first submit
            pools.append(self)

        def submit(self, fn, *args):
            if self.broken:
                raise BrokenProcessPool("A child process terminated abruptly")
            fut: cf.Future = cf.Future()
            fut.set_result(fn(*args))
            return fut

        def shutdown(self, **kwargs) -> None:
            pass

    monkeypatch.setattr(pp, "pool_size", lambda sources: 2)
    monkeypatch.setattr(pp, "make_pool", lambda workers: Pool())
    trfs = sorted((DATA / "trf").glob("*.trf"))[:4]
    summary = ingest_paths(trfs, tmp_path / "s.duckdb")
    assert len(summary.files) == 4 and all(f.status in ("loaded", "partial") for f in summary.files)
    assert summary.games > 0 and len(pools) >= 2


def test_the_same_file_named_twice_in_one_call_has_one_ledger_row(tmp_path: Path) -> None:
    """As when it is ingested twice, one call after the other: the second is already in the store."""
    f = DATA / "trf" / "irl_bunratty_major_2011_crlf.trf"
    summary = ingest_paths([f, f], tmp_path / "s.duckdb")
    assert [s.status for s in summary.files] == ["loaded", "skipped"]
    assert summary.files[1].reason == "already ingested (loaded)"
    assert db_rows(tmp_path / "s.duckdb", "SELECT count(*) FROM source_files") == [(1,)]
