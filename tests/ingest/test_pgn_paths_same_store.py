"""The PGN reader's fast paths store what reading game by game stores (issue 27, item 5).

Every PGN of ../shared/data/pgn and sample_pgn is ingested twice, in this process (so the
switches below reach the reader): once with every game read one by one
(`read_loop.USE_COLUMNS` off), once with every file read by the column path whatever its size
(`COLUMNS_MIN_BYTES` 0) and its refs assigned set-wise (elopipe.read.pgn.chunk_refs). Every table
of the two stores, ids included, is the same.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

import elopipe.ingest.parse_pool as pp
from elopipe.ingest.driver import ingest_paths
from elopipe.read.pgn import read_loop
from elopipe.read.pgn import reader as pgn_reader
from tests.helpers.paths import SAMPLE_PGN, SHARED_DATA
from tests.helpers.store_rows import store_tables


def _store(db: Path, monkeypatch: pytest.MonkeyPatch, module: ModuleType, **switches: object) -> dict[str, list[tuple]]:
    with monkeypatch.context() as m:
        m.setattr(pp, "pool_size", lambda sources: 0)  # parsed here: worker processes would not see the switches
        for name, value in switches.items():
            m.setattr(module, name, value)
        summary = ingest_paths([SHARED_DATA / "pgn", SAMPLE_PGN], db)
    assert summary.games > 10_000
    return store_tables(db)


@pytest.mark.slow
def test_column_path_stores_what_one_by_one_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = _store(tmp_path / "slow.duckdb", monkeypatch, read_loop, USE_COLUMNS=False)
    fast = _store(tmp_path / "fast.duckdb", monkeypatch, pgn_reader, COLUMNS_MIN_BYTES=0)
    assert fast.keys() == slow.keys()
    for table in slow:
        assert fast[table] == slow[table], table
