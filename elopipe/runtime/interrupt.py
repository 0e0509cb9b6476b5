"""Stopping a long run cleanly: Ctrl-C finishes the current transaction, then exits.

`graceful_stop()` replaces the SIGINT/SIGTERM handlers while a long-running command works:
the first signal only sets a flag that the flows check at their safe points (`stop_requested()`:
between batches of files, between two systems' rating or publishing); a second Ctrl-C raises
KeyboardInterrupt at once (DuckDB then rolls the open transaction back, so the store stays
consistent either way). A process started with those signals blocked (the flow runs of
`elopipe serve`) takes them once the handler is in place.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

_stop = threading.Event()


def stop_requested() -> bool:
    """True once a stop was asked for (signal or `request_stop`)."""
    return _stop.is_set()


def request_stop() -> None:
    """Ask running loops to stop after the file they are on."""
    _stop.set()


def clear_stop() -> None:
    _stop.clear()


def wait_or_stop(seconds: float) -> bool:
    """Sleep up to `seconds`, waking early on a stop request. Returns True if stop was requested."""
    return _stop.wait(seconds)


@contextlib.contextmanager
def graceful_stop(on_first: Callable[[str], None] | None = None) -> Iterator[None]:
    """Install the two-step Ctrl-C handler for the duration of the block (main thread only;
    elsewhere it does nothing). `on_first` gets a message for the user on the first signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    clear_stop()

    def handler(signum: int, _frame: object) -> None:
        if _stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        _stop.set()
        if on_first is not None:
            on_first("stopping after the current batch of files (press Ctrl-C again to abort now) ...")

    signals = {signal.SIGINT, signal.SIGTERM}
    previous = {sig: signal.signal(sig, handler) for sig in signals}
    # A process started with these blocked (a flow run of `elopipe serve`) takes them from now
    # on; one that came meanwhile is handled here, as a stop request.
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for sig, old in previous.items():
            signal.signal(sig, old)
