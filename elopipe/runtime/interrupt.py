"""Stopping a long run cleanly: Ctrl-C finishes the current transaction, then exits.

`graceful_stop()` replaces the SIGINT/SIGTERM handlers while a long-running command works:
the first signal only sets a flag that the flows check at their safe points (`stop_requested()`:
between batches of files, between two systems' rating or publishing); a second Ctrl-C raises
KeyboardInterrupt at once (DuckDB then rolls the open transaction back, so the store stays
consistent either way). A process started with those signals blocked (the flow runs of
`elopipe serve`) takes them once the handler is in place.

`early_sigterm()` covers the time before that handler is in place (a command's first second, its
imports): a SIGTERM then raises `Terminated`, a KeyboardInterrupt the entry point ends in one
line (elopipe.cli.main), instead of a silent kill (status 143).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

_stop = threading.Event()
# the signal that asked for the stop: the lines the user sees name it (a service manager's SIGTERM
# is not a Ctrl-C, and a second SIGTERM does not abort)
_cause: list[int] = [signal.SIGINT]


class Terminated(KeyboardInterrupt):
    """A SIGTERM before a command's own handler was in place (`early_sigterm`)."""


def early_sigterm() -> None:
    """Until a command installs its own handler (`graceful_stop`), a SIGTERM raises `Terminated`
    in this process. A child forked meanwhile (Prefect's server, a parse worker) inherits the
    handler: there the signal does what it did before, end the process."""
    owner = os.getpid()

    def handler(signum: int, _frame: object) -> None:
        if os.getpid() != owner:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Terminated

    signal.signal(signal.SIGTERM, handler)


def interrupted_line(stop: BaseException | None) -> str:
    """The one line a command ends with when `stop` (a KeyboardInterrupt, or None) ended it."""
    return "stopped (SIGTERM)" if isinstance(stop, Terminated) else "interrupted (Ctrl-C)"


def stop_cause() -> str:
    """How the stop came, as the user knows it: 'SIGTERM', or 'Ctrl-C' (SIGINT or `request_stop`)."""
    return "SIGTERM" if _cause[0] == signal.SIGTERM else "Ctrl-C"


def stopping_line(what: str) -> str:
    """The line said on a first Ctrl-C: `what` ('stopping at the next safe point'), and how to
    abort at once."""
    return f"{what} (Ctrl-C again to abort now) ..."


def stop_requested() -> bool:
    """True once a stop was asked for (signal or `request_stop`)."""
    return _stop.is_set()


def request_stop() -> None:
    """Ask running loops to stop after the file they are on."""
    _stop.set()


_output_gone = threading.Event()


def output_closed() -> None:
    """The reader of the command's output went away (`elopipe watch ... 2>&1 | head -2`) while a
    log line was written from where the error cannot end the command (a logging handler, which
    swallows it): stop as a SIGPIPE would stop a program, at the next safe point, its later lines
    sent to /dev/null; the command then ends with 141 (`output_was_closed`)."""
    _output_gone.set()
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(devnull, fd)
    request_stop()


def output_was_closed() -> bool:
    """True once `output_closed` was called."""
    return _output_gone.is_set()


def clear_stop() -> None:
    _stop.clear()
    _cause[0] = signal.SIGINT


def wait_or_stop(seconds: float) -> bool:
    """Sleep up to `seconds`, waking early on a stop request. Returns True if stop was requested."""
    return _stop.wait(seconds)


@contextlib.contextmanager
def graceful_stop(on_first: Callable[[str], None] | None = None) -> Iterator[None]:
    """Install the two-step Ctrl-C handler for the duration of the block (main thread only;
    elsewhere it does nothing). `on_first` gets a message for the user on each Ctrl-C
    (`stopping_line`); a SIGTERM is said once, by the line the command ends with (`stop_cause()`
    names it): a service manager that sends one reads no progress."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    clear_stop()

    def handler(signum: int, _frame: object) -> None:
        if _stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        if not _stop.is_set():
            _cause[0] = signum
        _stop.set()
        if on_first is not None and signum != signal.SIGTERM:
            on_first(stopping_line("stopping after the current batch of files"))

    signals = {signal.SIGINT, signal.SIGTERM}
    previous = {sig: signal.signal(sig, handler) for sig in signals}
    # A process started with these blocked (a flow run of `elopipe serve`) takes them from now
    # on; one that came meanwhile is handled here, as a stop request.
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)
    try:
        yield
    finally:
        for sig, old in previous.items():
            # One it started deaf to is its parent's to act on (serve's runner stops the flow runs):
            # restoring Python's default would let the terminal's Ctrl-C break the run's exit, a
            # KeyboardInterrupt traceback from Prefect's atexit drain of its log and event workers.
            signal.signal(sig, signal.SIG_IGN if sig in mask else old)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Hold a Ctrl-C that comes during the block until its end, where it acts as it would have
    (KeyboardInterrupt, or the handler in place). For a step that must not be cut in two: a
    process pool starting a worker, which a KeyboardInterrupt between the fork and its
    bookkeeping left running unknown to the pool, whose shutdown then waited for ever. Main
    thread only; elsewhere it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[FrameType | None] = []
    previous = signal.signal(signal.SIGINT, lambda _signum, frame: came.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if came and callable(previous):
            previous(signal.SIGINT, came[0])
        elif came and previous == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)
