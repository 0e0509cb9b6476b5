"""A stop names the signal that asked for it; a SIGTERM before a command's own handler ends it in
one line (elopipe.runtime.interrupt)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from elopipe.runtime import interrupt
from tests.helpers.signals import signal_at_line

REPO = Path(__file__).resolve().parents[2]
ELOPIPE = str(Path(sys.executable).with_name("elopipe"))


def test_a_sigterm_stop_is_said_once_as_sigterm_and_a_ctrl_c_as_ctrl_c() -> None:
    lines: list[str] = []
    try:
        with interrupt.graceful_stop(on_first=lines.append):
            os.kill(os.getpid(), signal.SIGTERM)
            assert interrupt.stop_requested()
            assert interrupt.stop_cause() == "SIGTERM"
        assert lines == []  # a SIGTERM is said once, by the command's last line
        with interrupt.graceful_stop(on_first=lines.append):  # a new stop starts as a Ctrl-C's
            assert not interrupt.stop_requested()
            os.kill(os.getpid(), signal.SIGINT)
            assert interrupt.stop_cause() == "Ctrl-C"
            assert lines == ["stopping after the current batch of files (Ctrl-C again to abort now) ..."]
            with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C aborts at once
                os.kill(os.getpid(), signal.SIGINT)
    finally:
        interrupt.clear_stop()


def test_an_early_sigterm_raises_terminated_here_and_ends_a_forked_child_as_before() -> None:
    """In the process that installed it, `Terminated`; in a child forked after (Prefect's server,
    a parse worker), the signal's own action: the child ends with -SIGTERM, it does not raise into
    the parent's code."""
    code = textwrap.dedent(
        """
        import os, signal, sys
        from elopipe.runtime.interrupt import Terminated, early_sigterm
        early_sigterm()
        pid = os.fork()
        if pid == 0:
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            except BaseException:
                os._exit(3)
            os._exit(4)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except Terminated:
            print("parent terminated")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == [f"child {-signal.SIGTERM}", "parent terminated"], out


def test_a_flow_run_started_deaf_to_ctrl_c_stays_deaf_once_it_is_done() -> None:
    """A flow run of `elopipe serve` starts with SIGINT blocked and takes it in `graceful_stop`;
    once that block is over, a Ctrl-C to the terminal's group (serve's to act on) must not break
    its exit. It reached a thread the run had started (Prefect's log and event workers) and came
    back as a KeyboardInterrupt traceback from Prefect's atexit drain (a CI failure)."""
    code = textwrap.dedent(
        """
        import os, signal, threading
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # as serve's runner starts a run
        from elopipe.runtime import interrupt
        done = threading.Event()
        with interrupt.graceful_stop():
            worker = threading.Thread(target=done.wait)  # started with SIGINT open, as Prefect's
            worker.start()
        os.kill(os.getpid(), signal.SIGINT)  # only the worker can take it
        done.set()
        worker.join()
        print("exited", signal.getsignal(signal.SIGINT) is signal.SIG_IGN, interrupt.stop_requested())
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (run.returncode, run.stdout.strip()) == (0, "exited True False"), run.stderr
    assert "KeyboardInterrupt" not in run.stderr, run.stderr


def test_a_sigterm_before_the_commands_handler_ends_it_in_one_line(tmp_path: Path) -> None:
    """`run` stopped by a service manager while it waits for the store (before its own handler,
    before Prefect): status 130 and one line naming SIGTERM (was a silent 143)."""
    from elopipe.store.connect import write_lock

    db = tmp_path / "s.duckdb"
    with write_lock(db):  # another writer: the command waits for it, and says so
        status, stdout, stderr = signal_at_line(
            [ELOPIPE, "run", str(REPO / "sample_pgn"), "--db", str(db), "--out", str(tmp_path / "out")],
            "waiting for another elopipe process",
            signal.SIGTERM,
            tmp_path,
        )
    assert status == 130, stderr
    # the status line may be said once more as it closes; then the one line of the stop
    assert stderr.strip().splitlines()[-1] == "stopped (SIGTERM)", stderr
    assert "Ctrl-C" not in stderr and "Traceback" not in stdout + stderr, stderr
