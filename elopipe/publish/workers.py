"""Publishing on every core, and telling how far it got.

`Workers` runs the jobs of one publish (a list's files, a report, a player page) on threads, each
with its own cursor of the caller's DuckDB connection. Threads, not processes: most of a job is
DuckDB's query work and Polars, which run without Python's GIL, and a cursor works on the
connection the caller holds, also the read-write one of `elopipe run` (which holds the store's
lock for the whole run: another process could not open the store even read-only). With one
worker every job runs at once, in the caller's thread, in the order given: the serial publish.

`Ticker` turns "n of N done" into progress text for a callback: at most every `every` seconds,
and again every `heartbeat` seconds while a long job keeps the count still, so that a log never
goes quiet for long.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import duckdb

from elopipe.runtime.heartbeat import Heartbeat

T = TypeVar("T")

MAX_WORKERS = 4


def default_workers() -> int:
    """Threads a publish uses: the cores this process may run on, at most `MAX_WORKERS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


class Workers:
    """`submit(fn, *args)` runs `fn(cursor, *args)` on one of `n` threads (see the module
    docstring). Use as a context manager: on exit the jobs not started are cancelled, the
    running ones finished, and the cursors closed."""

    def __init__(self, con: duckdb.DuckDBPyConnection, n: int) -> None:
        self.con = con
        self.n = max(1, n)
        self._pool = cf.ThreadPoolExecutor(self.n, thread_name_prefix="elopipe-publish") if self.n > 1 else None
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        for cursor in self._cursors:
            cursor.close()
        self._cursors.clear()

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        cursor: duckdb.DuckDBPyConnection | None = getattr(self._local, "cursor", None)
        if cursor is None:
            cursor = self.con.cursor()
            self._local.cursor = cursor
            with self._lock:
                self._cursors.append(cursor)
        return cursor

    def submit(self, fn: Callable[..., T], *args: Any) -> cf.Future[T]:
        """`fn(connection, *args)` as a future; with one worker it has run when this returns."""
        if self._pool is None:
            done: cf.Future[T] = cf.Future()
            try:
                done.set_result(fn(self.con, *args))
            except Exception as exc:  # raised again by the caller's result()
                done.set_exception(exc)
            return done
        # the thread sees this context's variables (the output folder's manifest)
        ctx = contextvars.copy_context()
        return self._pool.submit(ctx.run, lambda: fn(self._cursor(), *args))


class Ticker:
    """Progress of `total` jobs for `emit(done, total)`: called at most every `every` seconds as
    `advance` counts jobs, every `heartbeat` seconds while the count stands still, and at the end
    when it was called before (work done in under `every` seconds shows nothing). Use as a
    context manager."""

    def __init__(
        self, total: int, emit: Callable[[int, int], None] | None, every: float = 0.5, heartbeat: float = 1.0
    ) -> None:
        self.total = total
        self.done = 0
        self._emit = emit
        self._every = every
        self._heartbeat = heartbeat
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self._heart = Heartbeat(heartbeat / 4, self._beat, enabled=emit is not None)
        self._emitted = False

    def __enter__(self) -> Ticker:
        self._heart.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._heart.__exit__(*exc)
        if exc[0] is None and self._emitted:
            self._send(force=True)

    def advance(self, n: int = 1) -> None:
        """Count `n` more jobs done."""
        with self._lock:
            self.done += n
        self._send(force=False)

    def _send(self, force: bool) -> None:
        if self._emit is None:
            return
        with self._lock:
            now = time.monotonic()
            if not force and now - self._last < self._every:
                return
            self._last = now
            self._emitted = True
            done = self.done
        self._emit(done, self.total)

    def _beat(self) -> None:
        with self._lock:
            quiet = time.monotonic() - self._last >= self._heartbeat
        if quiet:
            self._send(force=True)
