"""Child processes that end with the elopipe process that started them, even after `kill -9`.

A killed parent runs no cleanup, so each child watches its parent itself: `exit_with(pid)` starts
a daemon thread that ends this process once process `pid` has ended. It covers:

- the parse workers of `flows.ingest_files` (a ProcessPoolExecutor on forkserver) and of
  `elopipe.ingest.execution.fork_spread` (the fork Pool of `read_pgn(workers=N)`): their
  initializer. A forkserver worker's own parent is the forkserver, which waits for its workers,
  so they must watch the elopipe process itself;
- Prefect's temporary API server (uvicorn, about 200 MB): `flows.prefect_env` starts it as
  `python -m elopipe.runtime.lifeline PID -m uvicorn ...`, which runs uvicorn in this same process after
  `exit_with(PID)` (see `main`).

A parent-death signal (prctl PR_SET_PDEATHSIG) would not do: it fires when the *thread* that
started the child ends, and Prefect starts these children from short-lived worker threads.

On Linux the thread waits on a pidfd (woken the moment the process ends, no polling); elsewhere it
polls every second. The server then gets SIGTERM (uvicorn shuts down cleanly) and is ended with
`os._exit` if it is still there `GRACE_SECONDS` later; a parse worker ends with `os._exit` at
once (a fork worker keeps its parent's SIGTERM handler, which only asks for a stop).
"""

from __future__ import annotations

import os
import runpy
import select
import signal
import sys
import threading
import time
from collections.abc import Callable

GRACE_SECONDS = 10.0
POLL_SECONDS = 1.0


def exit_with(pid: int, grace_seconds: float = GRACE_SECONDS) -> None:
    """End this process when process `pid` ends (see module docstring): SIGTERM, then `os._exit`
    after `grace_seconds` (0: `os._exit` at once, for workers with nothing to shut down). Returns
    at once; if `pid` is already gone this process ends now. Usable as a pool initializer."""
    wait = _pidfd_waiter(pid) or _poll_waiter(pid)
    threading.Thread(target=_end_after, args=(wait, grace_seconds), name="elopipe-lifeline", daemon=True).start()


def _pidfd_waiter(pid: int) -> Callable[[], None] | None:
    if sys.platform != "linux":  # os.pidfd_open is Linux's (5.3+)
        return None
    try:
        fd = os.pidfd_open(pid)
    except AttributeError:
        return None
    except ProcessLookupError:
        return lambda: None  # already gone
    except OSError:  # no pidfd in this kernel or sandbox
        return None

    def wait() -> None:
        select.select([fd], [], [])  # readable once the process has exited

    return wait


def _poll_waiter(pid: int) -> Callable[[], None]:
    parent = os.getppid()

    def wait() -> None:
        # A parent that ended shows as a changed ppid even before it is reaped.
        while alive(pid) and (parent != pid or os.getppid() == pid):
            time.sleep(POLL_SECONDS)

    return wait


def alive(pid: int) -> bool:
    """True while process `pid` exists (another user's process counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _end_after(wait: Callable[[], None], grace_seconds: float) -> None:
    wait()
    if grace_seconds > 0:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace_seconds)
    os._exit(1)


def main(argv: list[str]) -> None:
    """`python -m elopipe.runtime.lifeline PID -m MODULE ARGS...`: run MODULE as `python -m` would, in
    this process, ending when process PID ends."""
    if len(argv) < 3 or argv[1] != "-m" or not argv[0].isdigit():
        sys.exit("usage: python -m elopipe.runtime.lifeline PID -m MODULE [ARGS...]")
    pid, module = int(argv[0]), argv[2]
    exit_with(pid)
    sys.argv = [module, *argv[3:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
