"""An interrupted publish (full disk, kill -9) is finished by the next one, and a published file is
never left half-written under its final name (issue 12, item 6). Library calls, no Prefect."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

import elopipe.publish.atomic as atomic
from elopipe.publish import write_list
from elopipe.publish.lists import list_dates
from elopipe.publish.manifest import MANIFEST
from elopipe.publish.plan import LEDGER, pending_dates, publish_changed, publish_recorded, published_dates
from elopipe.publish.workers import default_workers
from tests.helpers.paths import REPO
from tests.helpers.publish_store import FEB, JAN, build_store


def _files(folder: Path) -> dict[str, bytes]:
    """The folder's files and their bytes, but for the manifest (it records each file's time)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def _tmp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if atomic.TMP_MARK in p.name]


def _disk_full_at(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The disk fills up while the file `name` is being written (after its bytes went to the
    temporary file, before it reached its final name)."""
    real = atomic._fsync

    def fsync(path: Path) -> None:
        if path.name.startswith(f".{name}{atomic.TMP_MARK}"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path)

    monkeypatch.setattr(atomic, "_fsync", fsync)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


def _reference(store: Path, folder: Path) -> dict[str, bytes]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        publish_recorded(con, store, "fide", folder, [JAN, FEB])
    finally:
        con.close()
    return {k: v for k, v in _files(folder).items() if k != LEDGER}


def test_disk_full_mid_publish_is_finished_by_the_next_publish(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = _reference(store, tmp_path / "reference")
    out = tmp_path / "out"
    con = duckdb.connect(str(store), read_only=True)
    try:
        _disk_full_at(monkeypatch, "fide_2024-02-01.parquet")
        with pytest.raises(OSError) as failed:
            publish_recorded(con, store, "fide", out, [JAN, FEB])
        # One line naming the file and the reason, for the user's terminal.
        assert str(failed.value) == f"cannot write {out / 'lists' / 'fide_2024-02-01.parquet'}: No space left on device"
        assert failed.value.errno == errno.ENOSPC
        # The January list was written whole and recorded; February was not, and is pending.
        assert published_dates(out, store, "fide") == {JAN}
        assert pending_dates(out, store, "fide") == {FEB}
        assert not _tmp_files(out)
        before = _files(out)
        assert all(before[k] == reference[k] for k in before if k != LEDGER), "a file differs from a whole publish"
        assert "lists/fide_2024-02-01.parquet" not in before
        jan = {p: p.stat().st_mtime_ns for p in (out / "lists").glob("fide_2024-01-01.*")}
        assert len(jan) == 4

        # Space again; nothing changed in the store: the next publish writes what was missing.
        monkeypatch.undo()
        paths, resumed = publish_recorded(con, store, "fide", out, [])
    finally:
        con.close()
    assert resumed == [FEB]
    written = {str(p.relative_to(out)) for p in paths}
    assert {w for w in written if w.startswith("lists/")} == {
        f"lists/fide_2024-02-01.{f}" for f in ("csv", "parquet", "txt", "html")
    }
    assert any(w.startswith("reports/fide/1_") for w in written) and "index-fide.html" in written
    assert {p: p.stat().st_mtime_ns for p in jan} == jan, "the January list was written again"
    after = _files(out)
    assert {k: v for k, v in after.items() if k != LEDGER} == reference
    assert published_dates(out, store, "fide") == {JAN, FEB} and pending_dates(out, store, "fide") == set()
    ledger = json.loads(after[LEDGER])
    assert ledger["systems"] == {"fide": ["2024-01-01", "2024-02-01"]} and ledger["pending"] == {}


def test_a_failed_write_leaves_no_half_file_under_the_final_name(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "lists"
    con = duckdb.connect(str(store), read_only=True)
    try:
        write_list(con, "fide", FEB, out, ["csv", "parquet"])
        old = _files(out)
        real = pl.DataFrame.write_parquet

        def half_then_full(self: pl.DataFrame, file: object, *args: object, **kwargs: object) -> None:
            if hasattr(file, "write"):  # the bytes are made in memory, then written atomically
                file.write(b"PAR1 half a file")
            else:
                Path(str(file)).write_bytes(b"PAR1 half a file")
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(pl.DataFrame, "write_parquet", half_then_full)
        with pytest.raises(OSError, match="No space left on device"):
            write_list(con, "fide", FEB, out, ["csv", "parquet"])
        assert _files(out) == old, "the previous files must stay whole"
        (out / "fide_2024-02-01.parquet").unlink()
        with pytest.raises(OSError):
            write_list(con, "fide", FEB, out, ["parquet"])
        assert not (out / "fide_2024-02-01.parquet").exists(), "a half-written file under its final name"
        assert not _tmp_files(out)
        monkeypatch.setattr(pl.DataFrame, "write_parquet", real)
    finally:
        con.close()


def test_kill_9_mid_publish_then_publish_command_finishes_it(store: Path, tmp_path: Path) -> None:
    """A process killed (SIGKILL) while writing the February list: the ledger says what is
    missing, no half file is left under a final name, and `elopipe publish` finishes it."""
    out = tmp_path / "out"
    reference = _reference(store, tmp_path / "reference")
    script = textwrap.dedent(
        f"""
        import os, signal
        import duckdb
        import elopipe.publish.atomic as atomic
        from elopipe.publish.plan import publish_recorded
        from tests.helpers.publish_store import FEB, JAN
        real = atomic._fsync
        def fsync(path):
            if path.name.startswith(".fide_2024-02-01.txt"):
                os.kill(os.getpid(), signal.SIGKILL)
            real(path)
        atomic._fsync = fsync
        con = duckdb.connect({str(store)!r}, read_only=True)
        publish_recorded(con, {str(store)!r}, "fide", __import__("pathlib").Path({str(out)!r}), [JAN, FEB])
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests")}
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == -signal.SIGKILL, res.stderr[-2000:]
    # February is missing; January is published, or still pending when the kill came while a
    # worker thread was writing February before January's last report was recorded
    pending, published = pending_dates(out, store, "fide"), published_dates(out, store, "fide")
    assert FEB in pending and FEB not in published and pending | published == {JAN, FEB} and not pending & published
    assert not (out / "lists" / "fide_2024-02-01.txt").exists()
    # the file being written at the kill is left under its temporary name, with at most the one
    # each other worker thread was writing at that moment
    left = [p.name for p in _tmp_files(out)]
    pid = left[0].rsplit("-", 1)[1] if left else "?"
    assert f".fide_2024-02-01.txt{atomic.TMP_MARK}{pid}" in left and len(left) <= default_workers(), left

    from elopipe.cli.main import app

    res = CliRunner().invoke(app, ["publish", "--db", str(store), "--out", str(out), "--format", "csv"])
    assert res.exit_code == 0, res.output
    n = "1 list" if len(pending) == 1 else f"{len(pending)} lists"
    assert f"finished an interrupted publish: {n} ({min(pending)} .. 2024-02-01)" in res.output
    assert pending_dates(out, store, "fide") == set() and published_dates(out, store, "fide") == {JAN, FEB}
    assert not _tmp_files(out), "the killed process's temporary file is cleaned up"
    assert {k: v for k, v in _files(out).items() if k != LEDGER} == reference


def _rating_run(store: Path, run_id: int, first: object, last: object) -> None:
    rw = duckdb.connect(str(store))
    try:
        rw.execute(
            "INSERT INTO rating_runs (run_id, system, started_at, first_list, last_list)"
            " VALUES (?, 'fide', now(), ?, ?)",
            [run_id, first, last],
        )
    finally:
        rw.close()


def test_lists_of_a_rating_run_no_publish_took_are_published_next(store: Path, tmp_path: Path) -> None:
    """A `rate` on its own, or a run killed between rating and publishing, rewrote lists that
    no publish saw: the next publish writes them even though its own rating changed nothing."""
    out = tmp_path / "out"
    _rating_run(store, 1, JAN, FEB)

    def publish(changed: list, own_run: int | None) -> object:
        con = duckdb.connect(str(store), read_only=True)
        try:
            return publish_changed(con, store, "fide", out, changed, None, own_run)
        finally:
            con.close()

    first = publish([JAN, FEB], 1)
    assert first.missed == [] and published_dates(out, store, "fide") == {JAN, FEB}
    assert publish([], None).unchanged
    _rating_run(store, 2, FEB, FEB)  # rated on its own: February rewritten, nothing published
    caught_up = publish([], None)
    assert caught_up.missed == [FEB]
    assert {p.name for p in caught_up.paths if p.parent.name == "lists"} == {
        f"fide_2024-02-01.{f}" for f in ("csv", "parquet", "txt", "html")
    }
    assert publish([], None).unchanged, "once taken, the run is not published again"
    # The run that produced `changed` is not a missed one, even when it changed nothing.
    _rating_run(store, 3, JAN, FEB)
    assert publish([], 3).unchanged
    assert publish([], None).unchanged


def test_a_changed_date_with_no_list_rows_does_not_hold_back_the_other_lists(store: Path, tmp_path: Path) -> None:
    """A rating run can change a date whose rows are all in rating_changes (every player of it
    still unrated: two Irish 2011 majors gave 2011-05-01 so): there is no list of that date to
    publish, and the system's changed lists are published all the same (it stopped the whole
    system's publish, and the next run's too)."""
    out = tmp_path / "out"
    listless = dt.date(2023, 12, 1)
    rw = duckdb.connect(str(store))
    try:  # the period's games, rated between unrated players: rows in rating_changes only
        rw.execute(
            "INSERT INTO rating_changes SELECT * REPLACE (DATE '2023-12-01' AS list_date) FROM rating_changes"
            " WHERE system = 'fide' AND list_date = ?",
            [FEB],
        )
        assert listless not in set(list_dates(rw, "fide"))
    finally:
        rw.close()
    con = duckdb.connect(str(store), read_only=True)
    try:
        done = publish_changed(con, store, "fide", out, [listless, JAN, FEB], None, None)
    finally:
        con.close()
    assert published_dates(out, store, "fide") == {JAN, FEB}
    assert {p.name for p in done.paths if p.parent.name == "lists"} >= {"fide_2024-01-01.csv", "fide_2024-02-01.csv"}


def test_deferred_lists_are_pending_as_a_publish_would_pick_them(tmp_path: Path) -> None:
    """`defer` (a run stopped after its rating) records what a publish of the changed lists would
    write, `max_lists` and the folder's published lists included, and writes no list file."""
    from elopipe.publish.plan import defer, remember

    out, db = tmp_path / "out", tmp_path / "s.duckdb"
    dates = [dt.date(2024, m, 1) for m in (1, 2, 3, 4)]
    assert defer(out, db, "fide", [], 2) == 0 and not out.exists()
    remember(out, db, "fide", [dates[0]])  # January is published in this folder
    assert defer(out, db, "fide", dates, 2) == 3  # the two most recent, and January again
    assert pending_dates(out, db, "fide") == {dates[0], dates[2], dates[3]}
    assert published_dates(out, db, "fide") == set()  # pending until written again
    assert [p.name for p in out.iterdir()] == [LEDGER]


def test_a_new_folder_gets_the_latest_list_beside_an_older_changed_one(tmp_path: Path) -> None:
    """A run whose rating changed only an old list (an event of 2011 into a store whose lists run
    to 2022) published that list alone into a new folder: no list in force there, and no
    index for the system when that old list was empty (a fresh user)."""
    store = build_store(tmp_path / "s.duckdb")
    out = tmp_path / "out"
    con = duckdb.connect(str(store), read_only=True)
    try:
        assert list_dates(con, "fide")[-1] == FEB
        done = publish_changed(con, store, "fide", out, [JAN], None, None)
    finally:
        con.close()
    assert published_dates(out, store, "fide") == {JAN, FEB}
    assert {"fide_2024-01-01.csv", "fide_2024-02-01.csv"} <= {p.name for p in done.paths}
