"""Ctrl-C at any moment of a long command: one line, exit 130, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.paths import REPO
from tests.helpers.progress import is_progress
from tests.helpers.publish_store import build_store

SAMPLE = REPO / "sample_pgn"


def _interrupt(args: list[str], busy: Callable[[subprocess.Popen], bool]) -> tuple[int, str, str]:
    """Run `elopipe ARGS`, send one SIGINT (as a terminal's Ctrl-C) once `busy(proc)` says the work
    is under way; (exit code, stdout, stderr)."""
    elopipe = Path(sys.executable).with_name("elopipe")
    proc = subprocess.Popen(
        [str(elopipe), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a shell's background job ignores it
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and not busy(proc):
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err


def _has_open(proc: subprocess.Popen, path: Path) -> bool:
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{proc.pid}/fd").iterdir())
    except OSError:
        return False


def test_ctrl_c_stops_a_running_query_in_one_line(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    slow = "SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b"
    # the query runs once the process has the store open
    code, out, err = _interrupt(["sql", slow, "--db", str(db)], lambda proc: _has_open(proc, db))
    assert code == 130, err
    assert err.strip() in ("the query was stopped (Ctrl-C)", "interrupted (Ctrl-C)"), err
    assert "Traceback" not in err and out == ""


def test_ctrl_c_while_a_large_table_is_drawn_is_one_line(tmp_path: Path) -> None:
    """The query has ended (the store is closed again) and the rows are being laid out as a
    table: Ctrl-C stops that too, in one line."""
    db = build_store(tmp_path / "s.duckdb")
    wide = "SELECT a, md5(a::VARCHAR) AS h FROM range(150000) t(a)"
    seen_open = []

    def drawing(proc: subprocess.Popen) -> bool:
        if _has_open(proc, db):
            seen_open.append(True)
            return False
        return bool(seen_open)

    # laying out 150,000 rows takes seconds: the signal comes well before the end
    code, out, err = _interrupt(["sql", wide, "--db", str(db), "--limit", "150000"], drawing)
    assert code == 130, err
    assert err.strip() == "interrupted (Ctrl-C)", err
    assert "Traceback" not in err


@pytest.mark.slow
def test_ctrl_c_during_publish_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest_paths([SAMPLE], db)
    with open_writer(db) as con:
        rate(con, "fide")
    out = tmp_path / "out"
    # interrupt once lists are being written, in the middle of the work
    code, _, err = _interrupt(
        ["publish", "--system", "fide", "--all", "--full", "--db", str(db), "--out", str(out)],
        lambda _proc: out.exists() and sum(1 for _ in out.rglob("*.csv")) >= 20,
    )
    assert "Traceback" not in err and "Error" not in err, err
    if code == 0:
        pytest.skip("publish finished before the signal came")
    # off a terminal a long publish says how far it is (a line every few seconds); the stop itself is one line
    said = [line for line in err.strip().splitlines() if not is_progress(line)]
    assert code == 130 and said == ["interrupted (Ctrl-C)"], err


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.parametrize("after", [0.0, 1.5, 3.0])  # parsing the first batch, writing it, later
def test_ctrl_c_to_the_terminal_group_stops_a_parallel_ingest_in_one_line(tmp_path: Path, after: float) -> None:
    """A terminal's Ctrl-C reaches the parser processes too: they leave it to the ingest, which
    stops in one line, also while it writes a batch (DuckDB's interrupt error is not a file to
    load again one by one)."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    trfs = sorted((REPO.parent / "shared" / "data" / "trf").glob("*.trf"))
    for i in range(40):  # several batches, several MB: parsed in worker processes
        for f in trfs:
            (inbox / f"{f.stem}_{i}.trf").write_bytes(f.read_bytes() + b"\n" * (i + 1))
    db = tmp_path / "s.duckdb"
    elopipe = Path(sys.executable).with_name("elopipe")
    proc = subprocess.Popen(
        [str(elopipe), "ingest", str(inbox), "--db", str(db), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        # the parser processes (children of the forkserver, a child of the ingest) are under way
        while (
            time.monotonic() < deadline
            and proc.poll() is None
            and not any(len(_children(c)) >= 2 for c in _children(proc.pid))
        ):
            time.sleep(0.02)
        time.sleep(after)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if proc.returncode == 0:
        pytest.skip("the ingest ended before the signal")  # a fast machine: nothing to interrupt
    assert proc.returncode == 130, err
    assert err.strip() == "interrupted (Ctrl-C)", err
    assert "Traceback" not in out + err
