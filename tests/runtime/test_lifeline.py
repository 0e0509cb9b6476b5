"""Child processes end with the elopipe process that started them, even after `kill -9`."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

DATA = REPO.parent / "shared" / "data" / "pgn"
ELOPIPE = str(Path(sys.executable).with_name("elopipe"))


def _processes() -> dict[int, tuple[int, str, str, str]]:
    """pid -> (ppid, state, start time in clock ticks, command line), from /proc."""
    table: dict[int, tuple[int, str, str, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                stat = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended while we looked
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # the name in (...) may hold spaces
        table[int(entry)] = (int(fields[1]), fields[0], fields[19], cmd)
    return table


def _descendants(root: int) -> dict[int, tuple[str, str]]:
    """Every living descendant of `root`: pid -> (start time, command line)."""
    table = _processes()
    found: dict[int, tuple[str, str]] = {}
    parents = [root]
    while parents:
        parent = parents.pop()
        for pid, (ppid, state, start, cmd) in table.items():
            if ppid == parent and state != "Z":
                found[pid] = (start, cmd)
                parents.append(pid)
    return found


def _still_running(procs: dict[int, tuple[str, str]]) -> dict[int, str]:
    """Those of `procs` still alive (a zombie holds no memory: it counts as ended)."""
    table = _processes()
    return {
        pid: cmd
        for pid, (start, cmd) in procs.items()
        if pid in table and table[pid][2] == start and table[pid][1] != "Z"
    }


def _wait_until_gone(procs: dict[int, tuple[str, str]], timeout: float = 60.0) -> dict[int, str]:
    deadline = time.monotonic() + timeout
    left = _still_running(procs)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _still_running(procs)
    return left


def _kill_all(procs: dict[int, str]) -> None:
    for pid in procs:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# A parent that starts a child which calls exit_with(parent), then waits to be killed.
PARENT = textwrap.dedent(
    """
    import os, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c",
        "import os, sys, time; from elopipe.runtime.lifeline import exit_with; exit_with(int(sys.argv[1])); "
        "print('READY', flush=True); time.sleep(600)", str(os.getpid())], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == 'READY'
    print(child.pid, flush=True)
    child.stdout.close()
    time.sleep(600)  # until killed
    """
)


def test_a_child_watching_its_parent_ends_when_the_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        procs = _descendants(parent.pid)
        assert child in procs
        parent.kill()
        parent.wait(30)
        left = _wait_until_gone(procs)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    _kill_all(left)
    assert not left, f"still running after the parent was killed: {left}"


@pytest.mark.slow
def test_kill_9_of_run_leaves_no_server_and_no_parse_workers(tmp_path: Path) -> None:
    # Two files over 2 MB: `run` parses them in worker processes; no PREFECT_API_URL (conftest):
    # Prefect starts its temporary server.
    inbox = tmp_path / "in"
    inbox.mkdir()
    for name in ("Carlsen.pgn", "olym22.pgn", "cancer0707.pgn", "world_matches.pgn"):
        shutil.copy(DATA / name, inbox / name)
    proc = subprocess.Popen(
        [ELOPIPE, "run", str(inbox), "--db", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    procs: dict[int, tuple[str, str]] = {}
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            procs = _descendants(proc.pid)
            cmds = [cmd for _, cmd in procs.values()]
            # `run` forks its server once Prefect is imported (flows/prefect_server.py): a child
            # with the command's own command line; `watch` starts one by `-m uvicorn`
            server = any("uvicorn" in c or (f"{ELOPIPE} run " in c and "forkserver" not in c) for c in cmds)
            workers = sum("multiprocessing.forkserver" in c for c in cmds)  # the forkserver and its workers
            if server and workers >= 2:
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"the run ended or stalled before its server and workers were seen: {proc.communicate()}")
        proc.kill()
        proc.wait(30)
        left = _wait_until_gone(procs)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _kill_all(left)
    assert not left, f"still running after `run` was killed: {left}"
