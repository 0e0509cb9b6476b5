"""Data reached through a symbolic link (issue 26, item 9): `/data -> /mnt/disk/data`. The store
records one form of each path, the file's real path (`source_files.path`: as given, resolved), on
the local path and on the cluster's (units parsed by workers), so the two stores are equal."""

from __future__ import annotations

import concurrent.futures as cf
import os
import shutil
from pathlib import Path

import pytest

import elopipe.ingest.parse_pool as pp
import elopipe.ingest.units as pu
from elopipe.ingest.driver import ingest_paths
from elopipe.ingest.units import Unit, UnitParser, run_unit
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import store_tables

TRF = sorted((SHARED_DATA / "trf").glob("*.trf"))[:6]
PGN = SHARED_DATA / "pgn" / "wjun19.pgn"


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    """(the folder as the user names it, through a link; the real folder)."""
    real = tmp_path / "mnt" / "disk" / "data"
    real.mkdir(parents=True)
    for f in [*TRF, PGN]:
        shutil.copy(f, real / f.name)
    link = tmp_path / "data"
    link.symlink_to(tmp_path / "mnt" / "disk", target_is_directory=True)
    return link / "data", real


def _on_units(paths: list[Path], db: Path, fail: Path | None = None):
    """The cluster's path (units run by `run_unit`), on threads instead of Dask workers; the unit
    holding `fail` (as the worker sees it) fails for good."""
    pool = cf.ThreadPoolExecutor(2)

    def submit(unit: Unit) -> cf.Future:
        if fail is not None and any(os.path.samefile(s.path, fail) for s in unit.sources):
            fut: cf.Future = cf.Future()
            fut.set_exception(RuntimeError("worker killed 4 times (KilledWorker)"))
            return fut
        return pool.submit(run_unit, unit)

    with pool:
        return ingest_paths(paths, db, parser=lambda sources: UnitParser(sources, False, submit))


def test_the_local_and_the_cluster_path_record_the_same_real_paths(
    linked: tuple[Path, Path], tmp_path: Path, monkeypatch
) -> None:
    folder, real = linked
    monkeypatch.setattr(pu, "PIECE_BYTES", 300_000)  # wjun19.pgn is cut into pieces
    files = sorted(folder.iterdir())
    local = ingest_paths(files, tmp_path / "local.duckdb")
    units = _on_units(files, tmp_path / "units.duckdb")
    assert local.failure is None and units.failure is None
    expected = sorted(str(real / f.name) for f in files)
    assert sorted(f.name for f in local.files) == expected
    assert sorted(f.name for f in units.files) == expected
    stored = store_tables(tmp_path / "local.duckdb")
    assert sorted(r[2] for r in stored["source_files"]) == expected
    assert store_tables(tmp_path / "units.duckdb") == stored
    # the folder named through the link gives the same paths as its files named one by one
    again = ingest_paths([folder], tmp_path / "local.duckdb")
    assert {f.status for f in again.files} == {"skipped"}


def test_a_failed_unit_names_its_files_as_the_store_records_them(
    linked: tuple[Path, Path], tmp_path: Path, monkeypatch
) -> None:
    folder, real = linked
    monkeypatch.setattr(pp, "BATCH_FILES", 3)
    files = sorted(folder.glob("*.trf"))
    summary = _on_units(files, tmp_path / "s.duckdb", fail=files[4])
    batch2 = ", ".join(str(real / f.name) for f in files[3:6])
    assert summary.failure == f"the cluster could not parse {batch2}: worker killed 4 times (KilledWorker)"
    assert [f.name for f in summary.files] == [str(real / f.name) for f in files[:3]]
