"""A terminal's Ctrl-C is the ingest's to handle, never a parse worker's: workers are started
deaf to it, and a Ctrl-C that comes while the pool starts one waits until the pool has recorded
it (elopipe.ingest.parse_pool; a CI run hung once, a parallel ingest stopped at its start)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import elopipe.ingest.parse_pool as pp
from elopipe.runtime.interrupt import ctrl_c_held


def _blocked(pid: int) -> set[int]:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("SigBlk:"))
    mask = int(line.split()[1], 16)
    return {sig for sig in range(1, 65) if mask >> (sig - 1) & 1}


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the workers' signal masks in /proc")
def test_parse_workers_are_started_with_ctrl_c_blocked() -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    pool = pp.make_pool(2)
    try:
        workers = {pool.submit(os.getpid).result() for _ in range(4)}
        assert workers and os.getpid() not in workers
        assert all(signal.SIGINT in _blocked(pid) for pid in workers)
    finally:
        pool.shutdown()
    # this process takes Ctrl-C as before
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before
    assert signal.SIGINT not in before


def test_a_ctrl_c_held_over_a_step_comes_at_its_end() -> None:
    finished = []
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held():
            os.kill(os.getpid(), signal.SIGINT)
            finished.append("the step")
    assert finished == ["the step"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_held_goes_to_the_handler_in_place() -> None:
    taken: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: taken.append(signum))
    try:
        with ctrl_c_held():
            os.kill(os.getpid(), signal.SIGINT)
            assert taken == []
        assert taken == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("leaving", ["by a Ctrl-C", "at the end"])
def test_a_ctrl_c_inside_the_pools_shutdown_comes_after_it_and_leaves_no_worker(leaving: str) -> None:
    """A second Ctrl-C that came inside the pool's shutdown cut it short: the workers never got
    their end-of-work sentinel and the exit waited for them for ever (a hostile tester's double
    Ctrl-C, 50 ms apart, hung 12 times in 15). Now the shutdown finishes, then the Ctrl-C comes."""
    parser = pp.Parser([])
    pool = pp.make_pool(2)
    parser.pool = pool
    assert len({pool.submit(os.getpid).result() for _ in range(4)}) >= 1
    workers = list(pool._processes.values())
    shutdown = pool.shutdown

    def interrupted_shutdown(*args: object, **kwargs: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the terminal's second Ctrl-C, just now
        shutdown(*args, **kwargs)  # type: ignore[arg-type]

    pool.shutdown = interrupted_shutdown  # type: ignore[method-assign]
    exc = (KeyboardInterrupt, KeyboardInterrupt(), None) if leaving == "by a Ctrl-C" else (None, None, None)
    with pytest.raises(KeyboardInterrupt):
        parser.__exit__(*exc)
    for worker in workers:
        worker.join(60)  # a guard: a worker left waiting for its sentinel never ends
    assert not [w for w in workers if w.is_alive()]
    assert parser.pool is None


_HALF_A_RESULT = """
import os, struct, sys
import elopipe.ingest.parse_pool as pp

if __name__ == "__main__":  # the workers import this module again
    pool = pp.make_pool(1)
    assert pool.submit(os.getpid).result() != os.getpid()  # a worker runs
    # what a worker killed while it sends a large result leaves: the length of a message, and less
    os.write(pool._result_queue._writer.fileno(), struct.pack("!i", 1_000_000) + b"half")
    pp._end_workers(pool)
    pool.shutdown(wait=False)
    print("exiting", flush=True)
"""


def test_a_worker_killed_while_it_sends_its_result_does_not_hang_the_exit(tmp_path: Path) -> None:
    """An ingest stopped by Ctrl-C said 'interrupted (Ctrl-C)' and never ended (a CI run, twice):
    the pool's manager thread waited for the rest of a half-sent result, and the interpreter's
    exit for that thread. The timeout is only the failure's bound."""
    import subprocess
    import sys

    script = tmp_path / "half.py"
    script.write_text(_HALF_A_RESULT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert (proc.returncode, proc.stdout) == (0, "exiting\n"), proc.stderr
