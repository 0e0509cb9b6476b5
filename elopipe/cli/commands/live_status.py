"""What `run` and `watch` are doing, while they do it: Prefect starting, then each stage.

On a terminal a rich status line (a spinner and the current step) sits under the lines already
printed; elsewhere (a pipe, a log file, CI) each step is a plain line. The flows' stage lines and
warnings (the `elopipe.stages` logger, flows/_stages.py) are printed through it, in elopipe's
words: no Prefect run names, levels or logger names.

Imports nothing heavy: the first line of a command must not wait for Polars or Prefect.

A status line on a terminal is redrawn by a thread of rich's; a process forked while that thread
writes would inherit the terminal's stream locked (a forked Prefect server, flows.prefect_server,
then hangs on its first line of log). Around every fork of this process the status line stops,
and comes back after it in this process only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

import typer
from rich.console import Console

from elopipe.cli.app import EXIT_PIPE_CLOSED
from elopipe.runtime.heartbeat import Heartbeat
from elopipe.runtime.interrupt import output_closed
from flows.prefect_env import PROGRESS_ATTR, STAGE_LOGGER, STEP_ATTR

# Off a terminal, a stage's progress (a bar) is a line at most this often
PROGRESS_LINE_SECONDS = 3.0
# Off a terminal, a busy step that said nothing for this long gets a "still working" line: a
# log must show a line at least every 5 s (one file of a big ingest, a system's rating).
QUIET_LINE_SECONDS = 4.0


class LiveStatus:
    """A context manager: `step(text)` says what is being done now, `line(text)` prints a line that
    stays. While it is open it prints the stage logger's records (their own handlers are set
    aside, and put back at the end)."""

    def __init__(self, console: Console, warn_once: tuple[str, ...] = ()) -> None:
        """`warn_once`: the stages (`"rate"`) whose warnings are shown once while it is open: a
        `watch` rates the whole store after each batch, and the same store-wide warnings (Ro far
        from the files) came again after every file."""
        self.console = console
        self.warn_once = tuple(f"{stage}: " for stage in warn_once)
        self.warned: set[str] = set()
        self._status: Any = None  # rich.status.Status on a terminal
        self._handler = _StageLines(self)
        self._set_aside: list[logging.Handler] = []
        self._progress_at = 0.0
        self._said_at = time.monotonic()
        self._busy: tuple[str, float] | None = None  # the busy step and when it began
        self._keep_alive = Heartbeat(1.0, self._still_working, enabled=not console.is_terminal)

    def __enter__(self) -> LiveStatus:
        logger = logging.getLogger(STAGE_LOGGER)
        self._set_aside = [h for h in logger.handlers if getattr(h, "_elopipe_stage", False)]
        for handler in self._set_aside:
            logger.removeHandler(handler)
        logger.addHandler(self._handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
        if self.console.is_terminal:
            self._status = self.console.status("", spinner="dots")
            self._status.start()
            _animated.append(self)
        self._keep_alive.__enter__()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._keep_alive.__exit__()
        if self._status is not None:
            if self in _animated:  # a forked child forgot it
                _animated.remove(self)
            self._status.stop()
            self._status = None
        logger = logging.getLogger(STAGE_LOGGER)
        logger.removeHandler(self._handler)
        for handler in self._set_aside:
            logger.addHandler(handler)

    def step(self, text: str, busy: bool = True) -> None:
        """What is being done now: the status line on a terminal, a plain line otherwise. Off a
        terminal, a `busy` step that stays quiet for `QUIET_LINE_SECONDS` gets a line saying it
        is still at work; `busy=False` (waiting for files) does not."""
        self._busy = (text, time.monotonic()) if busy else None
        if self._status is not None:
            self._status.update(text)
        else:
            self.line(text)

    def progress(self, text: str) -> None:
        """How far a stage got: the status line on a terminal; otherwise a plain line, at most
        one every `PROGRESS_LINE_SECONDS` (the stage sends one at least every second, so a line
        comes every 3 to 4 seconds: with a heartbeat of 2 s, every other one fell within the 3 s
        and the lines came 4 to 5 s apart)."""
        if self._status is not None:
            self._status.update(text)
        elif time.monotonic() - self._progress_at >= PROGRESS_LINE_SECONDS:
            self._progress_at = time.monotonic()
            self.line(text)

    def counter(self, head: str, tail: str) -> Callable[[int, int], None]:
        """A `progress(done, total)` callback (`elopipe.publish.workers.Ticker` calls one at least
        every second while a job runs) that shows `head [#####-----] done/total tail` as `progress`
        does: the status line on a terminal, else a line every 3 to 4 seconds (`publish`, `report
        --all`)."""
        from elopipe.runtime.words import bar

        return lambda done, total: self.progress(f"{head} {bar(done, total)} {tail}")

    def line(self, text: str, style: str | None = None) -> None:
        """A line that stays, stamped with the time of day."""
        self._said_at = time.monotonic()
        self.console.print(f"{time.strftime('%H:%M:%S')} | {text}", style=style, soft_wrap=True, markup=False)

    def step_done(self) -> None:
        """The busy step ended (its stage said how it went); until the next step, a quiet spell
        off a terminal still gets a plain "still working" line."""
        if self._busy is not None:
            self._busy = ("", time.monotonic())

    def _still_working(self) -> None:
        busy, now = self._busy, time.monotonic()
        if busy is not None and now - self._said_at >= QUIET_LINE_SECONDS:
            text, began = busy
            seconds = int(now - began)
            took = f"{seconds // 60}m {seconds % 60:02d}s"
            # never mid-line when `run` forks its Prefect server; in the heartbeat's thread, a
            # closed pipe would end that thread alone, and the command went on headless
            with _keeping_alive, lines_to_a_closed_pipe():
                self.line(f"{text.removesuffix(' ...')} (still working, {took})" if text else f"still working ({took})")


# The open LiveStatus objects whose status line a thread redraws (see the module docstring).
_animated: list[LiveStatus] = []


# Held while the keep-alive thread prints, and across a fork: a child forked mid-line would
# inherit the standard error's lock held by a thread it does not have.
_keeping_alive = threading.Lock()


def _stop_for_fork() -> None:
    for live in _animated:
        if live._status is not None:  # stopped under rich's lock: its thread writes nothing after
            live._status.stop()


def _start_after_fork() -> None:
    for live in _animated:
        if live._status is not None:
            live._status.start()


def _forget_after_fork() -> None:
    _animated.clear()  # the child never draws the parent's status line


os.register_at_fork(before=_stop_for_fork, after_in_parent=_start_after_fork, after_in_child=_forget_after_fork)
os.register_at_fork(
    before=_keeping_alive.acquire, after_in_parent=_keeping_alive.release, after_in_child=_keeping_alive.release
)


@contextlib.contextmanager
def lines_to_a_closed_pipe() -> Iterator[None]:
    """For the lines said from a logging handler or a thread: a closed pipe (BrokenPipeError, or
    a console's answer to it: elopipe's Exit(141), rich's SystemExit(1)) stops the command as a SIGPIPE would
    (`interrupt.output_closed`); logging swallowed the error, and `watch ... | head` went on for
    ever, headless."""
    try:
        yield
    except BrokenPipeError:
        output_closed()
    except typer.Exit as exc:  # elopipe's consoles' answer (`app.stdout_closed`)
        if exc.exit_code != EXIT_PIPE_CLOSED:
            raise
        output_closed()
    except SystemExit as exc:
        if exc.code != 1:
            raise
        output_closed()


class _StageLines(logging.Handler):
    # Marked as a stage handler: configure() then adds no plain one beside it.
    _elopipe_stage = True

    def __init__(self, status: LiveStatus) -> None:
        super().__init__(logging.INFO)
        self._live = status

    def emit(self, record: logging.LogRecord) -> None:
        with lines_to_a_closed_pipe():
            self._emit(record)

    def _emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if getattr(record, PROGRESS_ATTR, False):
            self._live.progress(text)
        elif getattr(record, STEP_ATTR, False):
            self._live.step(text)
        elif record.levelno >= logging.WARNING:
            if text.startswith(self._live.warn_once):
                if text in self._live.warned:
                    return
                self._live.warned.add(text)
            self._live.line(text, "yellow")
        else:  # a stage's closing line: its step is over, the next one not yet said
            self._live.line(text)
            self._live.step_done()
