"""The store's write lock, exercised with real processes (elopipe.store.connect)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import duckdb
import pytest

from elopipe.store.connect import (
    StoreBusyError,
    StorePathError,
    holds_write_lock,
    lock_path,
    open_reader,
    open_writer,
    write_lock,
)
from tests.helpers.paths import REPO

# A writer in its own process: takes the lock, inserts its tag, reports, then holds the lock
# until a line comes on its stdin (`hold`), never for a time: a loaded machine can take seconds
# to start the next process.
WRITER = textwrap.dedent(
    """
    import sys, time
    from elopipe.store.connect import open_writer
    db, tag, hold = sys.argv[1], sys.argv[2], sys.argv[3] == "hold"
    def waiting(msg):
        print("WAITING " + msg, flush=True)
    with open_writer(db, on_wait=waiting) as con:
        con.execute("CREATE TABLE IF NOT EXISTS lock_probe (tag VARCHAR, pid INTEGER, t DOUBLE)")
        con.execute("INSERT INTO lock_probe VALUES (?, ?, ?)", [tag, __import__('os').getpid(), time.time()])
        print("LOCKED", flush=True)
        if hold:
            sys.stdin.readline()
    print("RELEASED", flush=True)
    """
)


def _start_writer(db: Path, tag: str, hold: bool) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), tag, "hold" if hold else "go"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _release(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("release\n")
    proc.stdin.close()


def _read_until(proc: subprocess.Popen[str], word: str, timeout: float = 30.0) -> list[str]:
    """Lines of `proc` up to and including the first starting with `word`."""
    lines: list[str] = []
    result: dict[str, bool] = {}

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.strip())
            if line.startswith(word):
                result["ok"] = True
                return

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t.join(timeout)
    if not result.get("ok"):
        proc.kill()
        raise AssertionError(f"{word!r} not seen; got {lines!r}; stderr: {proc.stderr.read() if proc.stderr else ''}")
    return lines


def test_second_process_fails_fast_then_waits_and_both_writes_land(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    first = _start_writer(db, "first", hold=True)
    try:
        _read_until(first, "LOCKED")
        # This process, with no patience: a clear error, not a DuckDB crash.
        with pytest.raises(StoreBusyError, match=r"being written by another elopipe process \(pid \d+\)"):
            with open_writer(db, timeout=0):
                pass
        # A second process that waits: it says so, then gets the lock after the first lets go.
        second = _start_writer(db, "second", hold=False)
        waited = _read_until(second, "WAITING")
        assert f"pid {first.pid}" in waited[-1], waited
        _release(first)
        _read_until(second, "LOCKED")
        assert second.wait(30) == 0
        assert first.wait(30) == 0
    finally:
        for p in (first,):
            if p.poll() is None:
                p.kill()
    con = open_reader(db)
    try:
        rows = con.execute("SELECT tag, pid, t FROM lock_probe ORDER BY t").fetchall()
    finally:
        con.close()
    assert [r[0] for r in rows] == ["first", "second"]
    assert rows[0][1] == first.pid and rows[1][1] == second.pid


def test_lock_of_a_killed_process_is_released(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    holder = _start_writer(db, "killed", hold=True)
    try:
        _read_until(holder, "LOCKED")
        with pytest.raises(StoreBusyError):
            with write_lock(db, timeout=0.3):
                pass
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
    finally:
        if holder.poll() is None:
            holder.kill()
    # The OS dropped the flock with the process; DuckDB recovers the committed insert from its WAL.
    with open_writer(db, timeout=5) as con:
        assert con.execute("SELECT tag FROM lock_probe").fetchall() == [("killed",)]


def test_duckdb_lock_held_by_another_program_is_retried_then_reported(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    duckdb.connect(str(db)).close()
    # A program that opens the file with DuckDB directly, bypassing elopipe's lock file; it
    # closes it when a line comes on its stdin.
    script = "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('OPEN', flush=True); sys.stdin.readline()"
    other = subprocess.Popen(
        [sys.executable, "-c", script, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        _read_until(other, "OPEN")
        with pytest.raises(StoreBusyError, match="held open by another program"):
            with open_writer(db, timeout=0.3):
                pass
        messages: list[str] = []

        def waiting(message: str) -> None:  # it waits, says so, and the other program lets go
            messages.append(message)
            if len(messages) == 1:
                _release(other)

        with open_writer(db, timeout=30, on_wait=waiting) as con:
            con.execute("CREATE TABLE ok AS SELECT 1 AS x")
        assert messages and f"PID {other.pid}" in messages[0]
    finally:
        if other.poll() is None:
            other.kill()
        other.wait(10)


def test_lock_is_reentrant_within_a_process(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    assert not holds_write_lock(db)
    with write_lock(db, timeout=0):
        assert holds_write_lock(db)
        # A stage opening its own writer inside a run that holds the lock must not block on itself,
        # including from a worker thread (Prefect runs tasks in threads).
        done: list[bool] = []

        def stage() -> None:
            with open_writer(db, timeout=0) as con:
                con.execute("CREATE TABLE t AS SELECT 42 AS x")
                done.append(True)

        th = threading.Thread(target=stage)
        th.start()
        th.join(20)
        assert done == [True]
        assert holds_write_lock(db)
    assert not holds_write_lock(db)
    with open_writer(db, timeout=0) as con:
        assert con.execute("SELECT x FROM t").fetchone() == (42,)


@pytest.mark.parametrize("kind", ["text", "link", "hard link"])
def test_a_file_of_the_users_at_the_lock_files_name_is_kept_and_refused(tmp_path: Path, kind: str) -> None:
    """`<db>.lock` is written (the holder's pid): a file of the user's there was truncated and
    written over, and a link there wrote through to its target. Both are refused, untouched,
    before anything is written; elopipe's own lock file (empty, or a pid) is taken as before."""
    db = tmp_path / "s.duckdb"
    target = tmp_path / "notes.txt"
    target.write_text("keep me\n")
    if kind == "link":
        lock_path(db).symlink_to(target)
    elif kind == "hard link":  # an empty file of the user's, under a second name
        target.write_text("")
        os.link(target, lock_path(db))
    else:
        lock_path(db).write_text("my notes\n")
    with pytest.raises(StorePathError, match="not elopipe's lock file; move it away"):
        with write_lock(db):
            pass
    assert target.read_text() == ("" if kind == "hard link" else "keep me\n")
    if kind == "link":
        assert os.readlink(lock_path(db)) == str(target)
    elif kind == "text":
        assert lock_path(db).read_text() == "my notes\n"
    assert not db.exists()
    other = tmp_path / "t.duckdb"
    lock_path(other).write_text("pid 123")  # a lock file an earlier elopipe left
    with write_lock(other):
        assert lock_path(other).read_text() == f"pid {os.getpid()}"
