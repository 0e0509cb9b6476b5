"""A full disk under the store: one line that names the disk and the file, the store intact, the
file kept on the ledger as rejected, and loaded normally once space allows."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest import loader
from elopipe.ingest.driver import ingest_paths
from elopipe.jobs.requests import RunRequest
from tests.helpers.paths import REPO
from tests.helpers.store_rows import db_rows

DATA = REPO.parent / "shared" / "data"
PGN = DATA / "pgn"


@contextlib.contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A small RAM disk at `where` (root only); the test is skipped where it cannot be mounted."""
    where.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if res.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _one_clean_line(output: str, *words: str) -> None:
    flat = " ".join(output.split())
    assert "Traceback" not in output and "Exception" not in output and "no transaction" not in output
    for w in words:
        assert w in flat, output


def test_ingest_on_a_full_disk_says_which_disk_and_file_and_loads_once_space_allows(tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "disk", "2m") as disk:
        db = disk / "s.duckdb"
        res = CliRunner().invoke(app, ["ingest", str(PGN), "--db", str(db)])
        assert res.exit_code == 1
        _one_clean_line(res.output, f"the disk holding {db} (mounted at {disk}) is full", "free some space")
        # the store is intact and the file that did not fit is on the ledger, as rejected
        rows = db_rows(db, "SELECT path, status, reason, sha256 FROM source_files WHERE status = 'rejected'")
        assert len(rows) == 1 and rows[0][2] == "the store's disk was full" and rows[0][3] == ""
        assert rows[0][0] in res.output.replace("\n", "")
        subprocess.run(["mount", "-o", "remount,size=200m", "tmpfs", str(disk)], check=True)
        again = CliRunner().invoke(app, ["ingest", str(PGN), "--db", str(db)])
        assert again.exit_code == 0, again.output
        statuses = dict(db_rows(db, "SELECT status, count(*) FROM source_files GROUP BY status"))
        assert statuses.get("rejected") is None and statuses["replaced"] == 1
        n_files = sum(1 for f in PGN.iterdir() if f.suffix.lower() == ".pgn")
        assert statuses["loaded"] + statuses.get("partial", 0) == n_files


def test_rate_on_a_full_disk_is_one_line_and_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "disk", "24m") as disk:
        db = disk / "s.duckdb"
        assert ingest_paths([PGN / "wchcand22.pgn", PGN / "dortmund.pgn"], db).exit_code == 0
        filler = disk / "filler"
        with open(filler, "wb") as fh, contextlib.suppress(OSError):
            while True:  # take every byte left on the disk
                fh.write(b"\0" * (1 << 16))
                fh.flush()
                os.fsync(fh.fileno())
        res = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)])
        assert res.exit_code == 1
        _one_clean_line(res.output, f"(mounted at {disk}) is full", "free some space")
        filler.unlink()
        assert db_rows(db, "SELECT count(*) FROM rating_lists") == [(0,)]
        ok = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)])
        assert ok.exit_code == 0, ok.output
        assert db_rows(db, "SELECT count(*) > 0 FROM rating_lists") == [(True,)]


def test_a_full_disk_during_commit_stops_the_ingest_and_keeps_a_ledger_row(tmp_path: Path, monkeypatch) -> None:
    """The same without a RAM disk: DuckDB's own error text for a WAL that cannot be written."""
    real_load = loader._load
    first, second = PGN / "dortmund.pgn", PGN / "wchcand22.pgn"

    def full_for_first(con, batch):
        # the disk fills while the first file's rows are written (its ledger row still fits)
        if any(ps.source.path == str(first.resolve()) and ps.parsed is not None for ps in batch):
            raise duckdb.IOException('IO Error: Could not write file "x.duckdb.wal": No space left on device')
        return real_load(con, batch)

    monkeypatch.setattr(loader, "_load", full_for_first)
    db = tmp_path / "s.duckdb"
    summary = ingest_paths([first, second], db)
    assert summary.exit_code == 1 and "is full" in summary.failure and str(first.resolve()) in summary.failure
    assert [f.status for f in summary.files] == ["rejected"]  # the second file was not attempted
    assert db_rows(db, "SELECT path, status, reason FROM source_files") == [
        (str(first.resolve()), "rejected", "the store's disk was full")
    ]
    assert db_rows(db, "SELECT count(*) FROM games") == [(0,)]


@pytest.mark.usefixtures("prefect_harness")
def test_run_on_a_full_disk_stops_after_ingest_with_one_warning_and_leaves_the_file_unfiled(
    tmp_path: Path, monkeypatch
) -> None:
    from flows.pipeline import pipeline

    real_load = loader._load

    def full_for(name: str):
        def load(con, batch):
            if any(ps.source.path.endswith(name) and ps.parsed is not None for ps in batch):
                raise duckdb.IOException('IO Error: Could not write file "x.duckdb.wal": No space left on device')
            return real_load(con, batch)

        return load

    monkeypatch.setattr(loader, "_load", full_for("wchcand22.pgn"))
    db = tmp_path / "s.duckdb"
    files = [PGN / "dortmund.pgn", PGN / "wchcand22.pgn"]
    summary = pipeline(RunRequest(tuple(str(f) for f in files), str(db), ("elo",), str(tmp_path / "out")))
    assert summary.stopped and "is full" in summary.ingest.failure
    # the file that did not fit has no outcome: a watched inbox keeps it for the next batch
    assert [Path(f.name).name for f in summary.ingest.files] == ["dortmund.pgn"]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.csv"))


def test_a_full_disk_hidden_behind_a_failed_rollback_is_still_one_line() -> None:
    """A failed COMMIT ends the transaction; the ROLLBACK after it fails too and hides the cause."""
    from elopipe.store.connect import is_disk_full

    try:
        try:
            raise duckdb.TransactionException('Failed to commit: Could not write file "x.wal": No space left on device')
        except duckdb.TransactionException:
            raise duckdb.TransactionException("cannot rollback - no transaction is active")  # noqa: B904
    except duckdb.TransactionException as exc:
        assert is_disk_full(exc)
    assert not is_disk_full(duckdb.TransactionException("cannot rollback - no transaction is active"))


def test_a_batch_whose_commit_makes_duckdb_give_the_store_up_is_named_in_one_line(tmp_path: Path, monkeypatch) -> None:
    """On a nearly full disk the batch's COMMIT can fail in its checkpoint, after which DuckDB
    refuses the connection: nothing of the batch is stored, the line names the batch."""
    import elopipe.ingest.driver as ingest

    def invalidated(con, batch):
        raise duckdb.FatalException(
            "FATAL Error: Failed: database has been invalidated because of a previous fatal error: "
            'Could not write file "x.duckdb.wal": No space left on device'
        )

    monkeypatch.setattr(ingest, "load_batch", invalidated)
    files = [PGN / "dortmund.pgn", PGN / "wchcand22.pgn"]
    summary = ingest_paths(files, tmp_path / "s.duckdb")
    assert summary.exit_code == 1 and "is full" in summary.failure
    assert f"the batch of 2 files from {files[0].resolve()}" in summary.failure
    assert [f.status for f in summary.files] == ["rejected"]
