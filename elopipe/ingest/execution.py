"""Where the readers' work runs: the threads and the fork pool of one parsing process.

The readers of `elopipe.read` start no thread or process (elopipe.read.execution); the ingest
gives them these:

- `threads()`: this process's thread pool, on which a reader hashes bytes (hashlib), finds
  newlines (numpy) and analyses PGN columns (Polars) while its own Python goes on: all release
  the GIL. No task waits on another, so a bounded pool cannot deadlock;
- `fork_spread`: `read_pgn(workers=N, validate_moves=True)` reads its ranges of games in forked
  processes, which inherit the reader's text (nothing is pickled on the way in);
- `parse(source, validate_moves, workers)`: `parse_source` with both, as the parser processes
  (elopipe.ingest.parse_pool, elopipe.ingest.units) call it.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from elopipe.read.parse import ParsedSource, parse_source
from elopipe.read.sources import Source
from elopipe.runtime.lifeline import exit_with

T = TypeVar("T")
R = TypeVar("R")

# hashing, newline offsets, column analyses and their hashes of one file can all be in flight
THREADS = 4
_pool: cf.ThreadPoolExecutor | None = None
_pool_pid = 0
_lock = threading.Lock()


def threads() -> cf.ThreadPoolExecutor:
    """This process's reader threads, started on first use (again in a forked child)."""
    global _pool, _pool_pid
    with _lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = cf.ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="elopipe-read")
            _pool_pid = os.getpid()
        return _pool


_FORK_JOB: Callable[[int, int], Any] | None = None  # the job forked workers inherit


def _run_job(start: int, end: int) -> Any:
    assert _FORK_JOB is not None  # set before the pool forks
    return _FORK_JOB(start, end)


def fork_spread(
    fn: Callable[[int, int], T], ranges: list[tuple[int, int]], local: Callable[[], R]
) -> tuple[R, list[T | None]]:
    """(`local()`, `fn` of each range) with the ranges read by forked processes meanwhile (they
    end with this process, even if it is killed: elopipe.runtime.lifeline). A range whose worker
    failed is None; where fork is unavailable, every range is None (the reader reads them)."""
    global _FORK_JOB
    _FORK_JOB = fn
    results: list[T | None] = [None] * len(ranges)
    try:
        try:
            pool = multiprocessing.get_context("fork").Pool(len(ranges), initializer=exit_with,
                                                            initargs=(os.getpid(), 0.0))  # fmt: skip
        except (OSError, ValueError):  # no fork here (or no resources)
            return local(), results
        with pool:
            pending = [pool.apply_async(_run_job, r) for r in ranges]
            here = local()
            for i, job in enumerate(pending):
                try:
                    results[i] = job.get()
                except Exception:  # noqa: BLE001 - a worker died or could not send its result: read here
                    results[i] = None
        return here, results
    finally:
        _FORK_JOB = None


def parse(source: Source, validate_moves: bool = False, workers: int = 1) -> ParsedSource:
    """`parse_source` with this process's threads and the fork spread (picklable: a pool runs it)."""
    return parse_source(source, validate_moves, workers, executor=threads(), spread=fork_spread)
