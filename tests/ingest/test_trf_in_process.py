"""A folder of TRF files below `parse_pool.TRF_IN_PROCESS_BYTES` is parsed in the writer's process,
with no forkserver (issue 27, item 5: the pool cost about 1 CPU-s of a FIDE month's ingest), and
the store is the one the process pool gives: players, aliases, entries, games and their links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import elopipe.ingest.parse_pool as pp
from elopipe.ingest.driver import ingest_paths
from elopipe.read.sources import discover
from tests.helpers.paths import SHARED_DATA
from tests.ingest.test_batch_ingest import TABLES, _tables

TRF = sorted((SHARED_DATA / "trf").glob("*.trf"))
PGN = SHARED_DATA / "pgn" / "Carlsen.pgn"


def _month(folder: Path, copies: int) -> list[Path]:
    """The real TRF files `copies` times, each copy a tournament of its own (its 012 name line
    says which copy), so that the folder is over `PARALLEL_MIN_BYTES` and its players recur across
    files as a federation's do."""
    folder.mkdir()
    out = []
    for i in range(copies):
        for src in TRF:
            data = src.read_bytes()
            at = data.find(b"\n012 ")
            if at < 0:  # no name line: a line of its own at the top
                data = f"012 copy {i}\n".encode() + data
            else:
                end = data.index(b"\n", at + 1)
                data = data[:end].rstrip(b"\r") + f" copy {i}".encode() + data[end:]
            path = folder / f"{i:02d}_{src.name}"
            path.write_bytes(data)
            out.append(path)
    return out


def test_a_month_of_trf_is_parsed_here_and_a_folder_with_pgn_in_the_pool(tmp_path: Path) -> None:
    files = _month(tmp_path / "m", 6)
    sources = discover([tmp_path / "m"]).sources
    total = sum(pp._size(s) for s in sources)
    assert pp.PARALLEL_MIN_BYTES <= total < pp.TRF_IN_PROCESS_BYTES
    assert pp.pool_size(sources) == 0
    # a PGN among them: the pool, as before (its reader's cost is another's)
    with_pgn = discover([*files, PGN]).sources
    cores = os.cpu_count() or 1
    assert pp.pool_size(with_pgn) == (min(cores, len(with_pgn)) if cores >= 2 else 0)


@pytest.mark.slow
def test_trf_parsed_here_gives_the_store_the_pool_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # two copies of the folder (its players recur across files) stand for a month: the size
    # thresholds are the first test's; here they are lowered so that the same choice is made
    _month(tmp_path / "m", 2)
    monkeypatch.setattr(pp, "PARALLEL_MIN_BYTES", 0)
    here = ingest_paths([tmp_path / "m"], tmp_path / "here.duckdb")
    assert here.parallel_workers == 0
    monkeypatch.setattr(pp, "TRF_IN_PROCESS_BYTES", 0)
    pooled = ingest_paths([tmp_path / "m"], tmp_path / "pool.duckdb")
    assert pooled.parallel_workers > 0
    assert [(f.name, f.status, f.n_games, f.n_players) for f in here.files] == [
        (f.name, f.status, f.n_games, f.n_players) for f in pooled.files
    ]
    assert here.games > 0
    a, b = _tables(tmp_path / "here.duckdb"), _tables(tmp_path / "pool.duckdb")
    for name in TABLES:
        assert a[name] == b[name], name
