"""`elopipe watch` as users run it: a long-running process, stopped with Ctrl-C (SIGINT)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO

GOOD = REPO / "sample_pgn" / "fide_candidates_2022_madrid_spain.pgn"
ELOPIPE = str(Path(sys.executable).with_name("elopipe"))


def _wait_for(predicate, timeout: float, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            raise AssertionError(f"watch exited early ({proc.returncode}): {proc.communicate()}")
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"timed out; output: {proc.communicate()}")


def test_watch_processes_drops_and_stops_cleanly_on_ctrl_c(tmp_path: Path, prefect_harness: str) -> None:
    inbox, db, out = tmp_path / "inbox", tmp_path / "store.duckdb", tmp_path / "out"
    env = {**os.environ, "PREFECT_API_URL": prefect_harness}
    proc = subprocess.Popen(
        [ELOPIPE, "watch", str(inbox), "--db", str(db), "--out", str(out), "--interval", "0.5"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(lambda: (inbox / "processed").is_dir(), 60, proc)
        shutil.copy(GOOD, inbox / "good.pgn")
        (inbox / "notes.txt").write_text("shopping list: milk, eggs\n", encoding="utf-8")
        _wait_for(
            lambda: (
                (inbox / "processed" / "good.pgn").exists() and (inbox / "quarantine" / "notes.txt.reason.txt").exists()
            ),
            180,
            proc,
        )
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr  # stopped by Ctrl-C, as a shell expects
    first = f"| watch: {inbox} -> store {db}, outputs {out} (fide, fide-rapid, fide-blitz)"
    assert stderr.splitlines()[0].endswith(first), stderr
    assert f"created the drop folder {inbox}" in stderr.splitlines()[1], stderr  # the test's inbox was new
    assert "ready: loaded ->" in stderr
    assert "stopped: 1 batch, 1 processed, 1 quarantined" in stdout, stdout
    assert "stopping after" not in stderr, stderr  # the Ctrl-C came between batches: none to finish
    for internal in ("Flow run '", "Task run '", "Crash detected", "KeyboardInterrupt"):
        assert internal not in stderr, stderr
    assert "neither PGN nor TRF" in (inbox / "quarantine" / "notes.txt.reason.txt").read_text(encoding="utf-8")
    assert "Traceback" not in stderr
    con = open_reader(db)
    try:
        statuses = dict(con.execute("SELECT regexp_extract(path, '[^/]+$'), status FROM source_files").fetchall())
    finally:
        con.close()
    assert statuses == {"good.pgn": "loaded", "notes.txt": "rejected"}
    assert any((out / "lists").glob("fide_*.csv"))


@pytest.mark.parametrize("args", [["--cron", "*/10 * * * *"], ["--interval", "60"]])
def test_serve_without_a_server_says_schedules_need_one(tmp_path: Path, args: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    proc = subprocess.run(
        [ELOPIPE, "serve", str(tmp_path / "inbox"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "Scheduled runs need a Prefect server" in proc.stderr
    assert "prefect server start" in proc.stderr and "elopipe watch" in proc.stderr


def test_serve_with_an_unreachable_server_says_so(tmp_path: Path) -> None:
    env = {**os.environ, "PREFECT_API_URL": "http://127.0.0.1:9/api"}  # port 9: nothing listens
    proc = subprocess.run(
        [ELOPIPE, "serve", str(tmp_path / "inbox"), "--interval", "60"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "no Prefect server answers at http://127.0.0.1:9/api" in proc.stderr
    assert "elopipe watch" in proc.stderr


@pytest.mark.parametrize("command", ["run", "watch"])
def test_run_and_watch_refuse_a_configured_but_unreachable_server(tmp_path: Path, command: str) -> None:
    env = {**os.environ, "PREFECT_API_URL": "http://127.0.0.1:9/api"}
    proc = subprocess.run(
        [ELOPIPE, command, str(GOOD), "--db", str(tmp_path / "s.duckdb")]
        if command == "run"
        else [ELOPIPE, command, str(tmp_path / "inbox"), "--db", str(tmp_path / "s.duckdb")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "no Prefect server answers at http://127.0.0.1:9/api" in proc.stderr
    assert "unset PREFECT_API_URL" in proc.stderr
    assert not (tmp_path / "s.duckdb").exists()  # nothing was started


def test_a_second_watch_on_one_inbox_is_refused_in_one_line(tmp_path: Path) -> None:
    """Two watches on one inbox took the same files: the second recorded them as rejected with
    Python's '[Errno 2] No such file or directory' (or loaded them into its own store too)."""
    from elopipe.ingest.watcher.lock import inbox_lock

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    with inbox_lock(inbox):  # as a running watch holds it
        proc = subprocess.run(
            [ELOPIPE, "watch", str(inbox), "--db", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "out")],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"elopipe watch: error: {inbox} is watched by another process (pid {os.getpid()})"
    assert not (tmp_path / "s.duckdb").exists()


def test_a_link_in_place_of_elopipes_file_is_said_before_the_watching_begins(tmp_path: Path) -> None:
    inbox, victim = tmp_path / "inbox", tmp_path / "victim.jsonl"
    (inbox / ".elopipe").mkdir(parents=True)
    victim.write_text("the user's\n")
    (inbox / ".elopipe" / "filed-away.jsonl").symlink_to(victim)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    proc = subprocess.run(
        [ELOPIPE, "watch", str(inbox), "--db", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert "filed-away.jsonl" in proc.stderr and "Traceback" not in proc.stderr
    assert "watching" not in proc.stderr, proc.stderr
    # refused before Prefect starts: the one line of the refusal, nothing of a start
    line = proc.stderr.strip()
    assert line.startswith(f"elopipe watch: error: {inbox / '.elopipe' / 'filed-away.jsonl'}: "), line
    assert "\n" not in line and "Prefect" not in line, line
    assert victim.read_text() == "the user's\n"


@pytest.mark.parametrize("command", ["watch", "serve"])
@pytest.mark.parametrize("where", [".", "sub"])
def test_a_store_inside_the_drop_folder_is_refused(tmp_path: Path, command: str, where: str) -> None:
    """`watch . --db s.duckdb` took its own store, lock and log for dropped files, batch after batch
    (a verifier): a store inside the inbox, at any depth, is a usage error before anything starts."""
    inbox = tmp_path / "inbox"
    (inbox / "sub").mkdir(parents=True)
    db = inbox / where / "s.duckdb"
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    proc = subprocess.run(
        [ELOPIPE, command, str(inbox), "--db", str(db), "--out", str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert line.startswith(f"elopipe {command}: error: the store {db} is inside the drop folder {inbox}"), line
    assert "\n" not in line and not db.exists()
