"""Parsing the sources of one ingest, in batches, in worker processes when it pays.

Parsing (`elopipe.read.parse.parse_source`: bytes -> `ParsedSource`) is pure and picklable. When the
sources are big enough for processes to pay for their start (`PARALLEL_MIN_BYTES`, more than one
file and core; for TRF files `TRF_IN_PROCESS_BYTES`), they are parsed in a process pool; otherwise
in this process. Sources are
grouped into batches of at most `BATCH_FILES` files and `BATCH_BYTES` bytes (a larger file is a
batch of its own): the loader writes one batch per transaction while the pool parses the next.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import gc
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar
from zipfile import BadZipFile

from elopipe.ingest.execution import parse
from elopipe.read.parse import ParsedSource
from elopipe.read.sources import Source
from elopipe.read.zips import open_zip
from elopipe.runtime.interrupt import ctrl_c_held
from elopipe.runtime.lifeline import exit_with

PARALLEL_MIN_BYTES = 2_000_000  # below this, starting worker processes costs more than it saves
# TRF files below this many bytes in all are parsed in this process. On a FIDE month of TRF (750
# files, 5.6 MB; its parsing then cost about 3.8 CPU-s, now about 0.9) the pool cost 1.5-2.4 CPU-s
# of 11 (bench/federation.py):
# the forkserver imports the readers with Polars, and the parsed files come back pickled (43 MB,
# 8 times their size). Parsed here, the next batch is no longer parsed while this one is written:
# on idle cores that may cost up to the parsing's time in wall seconds (on the shared 2-core
# machine, where CPU is what is short, back-to-back runs were not slower).
TRF_IN_PROCESS_BYTES = 8_000_000
# A FIDE month of TRF (750 files, 7 MB) is one batch: the steps each batch runs against the
# tournaments near its own (identity, same-game evidence, dedup) read again those of the month's
# earlier batches, and three batches of 256 cost 1 CPU-s more than one (bench/federation.py).
BATCH_FILES = 1024
# Parsed PGN takes several times its size in memory, and two batches are held at once (one being
# written, the next being parsed): 64 MB keeps that well under a gigabyte.
BATCH_BYTES = 64_000_000


def _size(source: Source) -> int:
    """Bytes of `source` as batches count them: a file's size, an archive member's own
    (decompressed) size, not the whole archive's (a 3,000-member zip counted 3,000 times made
    batches of a few members, each paying the identity steps of a batch)."""
    try:
        st = os.stat(source.path)
    except OSError:
        return 0
    if source.member is None:
        return st.st_size
    return _member_sizes(source.path, st.st_size, st.st_mtime_ns).get(source.member, 0)


@functools.lru_cache(maxsize=16)
def _member_sizes(path: str, size: int, mtime_ns: int) -> dict[str, int]:
    """{member: decompressed size} of the zip archive at `path` (its directory read once for all
    its members; `size` and `mtime_ns` key the cache); empty when it cannot be read (its members
    are then recorded as rejected when parsed), as when it is cut short (`open_zip`)."""
    try:
        with open(path, "rb") as fh, open_zip(fh) as zf:
            return {i.filename: i.file_size for i in zf.infolist()}
    except (OSError, BadZipFile):
        return {}


def pool_size(sources: Sequence[Source]) -> int:
    """Worker processes worth starting for `sources` (0 = parse in this process)."""
    cores = os.cpu_count() or 1
    if cores < 2 or len(sources) < 2:
        return 0
    total = sum(_size(s) for s in sources)
    if total < PARALLEL_MIN_BYTES:
        return 0
    if total < TRF_IN_PROCESS_BYTES and all(s.suffix == ".trf" for s in sources):
        return 0
    return min(cores, len(sources))


def batches(sources: Sequence[Source]) -> Iterator[list[Source]]:
    """`sources` in order, cut into batches (see the module docstring)."""
    batch: list[Source] = []
    size = 0
    for s in sources:
        n = _size(s)
        if batch and (len(batch) >= BATCH_FILES or size + n > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(s)
        size += n
    if batch:
        yield batch


T = TypeVar("T")
S = TypeVar("S")
R = TypeVar("R")


def one_ahead(items: Iterable[T], start: Callable[[T], S], finish: Callable[[S], R]) -> Iterator[R]:
    """`finish(start(item))` for each item, in order, with the next item started before this one
    is finished: a batch is parsed while the caller writes the one before."""
    pending: list[S] = []
    for item in items:
        pending.append(start(item))
        if len(pending) == 2:
            yield finish(pending.pop(0))
    if pending:
        yield finish(pending.pop())


def make_pool(workers: int) -> cf.ProcessPoolExecutor:
    """A process pool of `workers` parsers."""
    # forkserver: workers start from a clean process that imported only the readers, not from a
    # fork of this one (which may run Prefect's threads and event loop).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["elopipe.ingest.driver"])
    # Each worker ends when this process does, even on kill -9: a worker's parent is the
    # forkserver, which lives as long as its workers, so they watch this process (elopipe.runtime.lifeline).
    # A killed ingest must not leave the resource tracker's warning about the pool's semaphores
    # in the user's terminal: the tracker takes this process's warning options when it starts.
    if _QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(_QUIET_TRACKER)
    _start_forkserver_quietly()
    return cf.ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(),)
    )


_QUIET_TRACKER = "ignore::UserWarning:multiprocessing.resource_tracker"


def _start_forkserver_quietly() -> None:
    """Start the forkserver (and the resource tracker) with their standard error on /dev/null.

    A worker forked while the ingest stops on Ctrl-C may start after this process has let its
    semaphores go, and Python prints that worker's start-up traceback on the standard error it
    inherited: the user's terminal. A worker's own errors come back through its futures, and a
    worker that dies is reported per file (`Parser._alone`), so nothing the user needs is lost."""
    from multiprocessing import forkserver, resource_tracker

    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    try:
        os.dup2(devnull, 2)
        # The tracker first: starting it unblocks SIGINT in this thread. Started with SIGINT
        # blocked, the forkserver and every worker it forks never take the terminal's Ctrl-C: one
        # that came as a worker started, before its initializer, killed it and broke the pool.
        resource_tracker.ensure_running()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _worker_init(parent: int) -> None:
    """A parser process: Ctrl-C is this process's parent's to handle (a terminal sends it to the
    whole process group; see `_start_forkserver_quietly`); it ends when the parent does
    (elopipe.runtime.lifeline)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with(parent, 0.0)


def _submit_whole(pool: cf.Executor, source: Source, validate_moves: bool) -> cf.Future[ParsedSource]:
    """`parse(source)` submitted to `pool`, with a Ctrl-C held until the pool has recorded the
    worker it may start for it (`ctrl_c_held`)."""
    with ctrl_c_held():
        return pool.submit(parse, source, validate_moves)


def _end_workers(pool: cf.Executor) -> None:
    """Kill the worker processes of `pool` (pure parsers: nothing of theirs is kept). A
    ProcessPoolExecutor has no public call for it before Python 3.14 (`kill_workers`): its
    `_processes` is read, and nothing is done when it is not there."""
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        if process.is_alive():
            process.kill()
    # A worker killed while it wrote its result leaves half a message in the result pipe: the
    # pool's manager thread then waits for the rest for ever, and so does the interpreter's exit
    # (an ingest said 'interrupted (Ctrl-C)' and hung). With this process's own copy of the
    # pipe's write end closed, the dead workers' were the last: the thread reads an end of file,
    # takes the pool as broken and ends.
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None:
        writer.close()


class Parser:
    """Parses `sources` batch by batch (`parsed_batches`), one batch ahead of the caller.

    If a worker process dies (killed, out of memory), every file in flight is parsed again alone
    (`_alone`), so only a file that kills its parser again is recorded as rejected, and later
    files go to a new pool (`_submit`). Use as a context manager: the pools are shut down on exit."""

    def __init__(self, sources: Sequence[Source], validate_moves: bool = False, workers: int = 1) -> None:
        self.sources = list(sources)
        self.validate_moves = validate_moves
        self.workers = workers  # processes replaying one large PGN (`execution.parse`), not the pool
        self.pool_workers = pool_size(self.sources)
        self.pool: cf.Executor | None = make_pool(self.pool_workers) if self.pool_workers else None
        self._retry: cf.Executor | None = None

    def __enter__(self) -> Parser:
        return self

    def __exit__(self, *exc: object) -> None:
        """Shut the pools down, with a Ctrl-C held until they are (a second Ctrl-C inside a
        shutdown left workers without their end-of-work sentinel, and the exit waited for them
        for ever). Left by an exception (a Ctrl-C, a failure), the parsing in flight is not
        wanted: the workers are ended, not waited for."""
        failed = bool(exc) and exc[0] is not None
        with ctrl_c_held():
            for pool in (self.pool, self._retry):
                if pool is None:
                    continue
                if failed:
                    _end_workers(pool)
                pool.shutdown(wait=not failed, cancel_futures=True)
            self.pool = self._retry = None

    def parsed_batches(self) -> Iterator[list[ParsedSource]]:
        """The parsed sources, batch by batch, in order. With a pool, the next batch is being
        parsed while the caller writes this one."""
        if self.pool is None:
            for batch in batches(self.sources):
                yield self._parse_here(batch)
            return
        yield from one_ahead(batches(self.sources), lambda batch: [(s, self._submit(s)) for s in batch], self._results)

    def _parse_here(self, batch: list[Source]) -> list[ParsedSource]:
        """`batch` parsed in this process. The collector is paused meanwhile, as the loader
        pauses it: the readers' records are many small objects without cycles, and its passes
        over them (a sixth of a TRF month's parsing) free nothing."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return [parse(s, self.validate_moves, self.workers) for s in batch]
        finally:
            if was_enabled:
                gc.enable()

    def _submit(self, source: Source) -> cf.Future[ParsedSource]:
        """`source` submitted to the pool; a pool broken by a worker that died is replaced first."""
        assert self.pool is not None
        try:
            return _submit_whole(self.pool, source, self.validate_moves)
        except BrokenProcessPool:
            self.pool.shutdown(cancel_futures=True)
            self.pool = make_pool(self.pool_workers)
            return _submit_whole(self.pool, source, self.validate_moves)

    def _results(self, pending: list[tuple[Source, cf.Future[ParsedSource]]]) -> list[ParsedSource]:
        out = []
        for source, fut in pending:
            try:
                out.append(fut.result())
            except (BrokenProcessPool, cf.CancelledError):  # cancelled: queued in a pool that died
                out.append(self._alone(source))
        return out

    def _alone(self, source: Source) -> ParsedSource:
        """Parse `source` again in a one-worker pool after a worker died, one file at a time; a
        file that kills this parser too is recorded as rejected."""
        for attempt in range(2):
            if self._retry is None:
                self._retry = make_pool(1)
            try:
                return _submit_whole(self._retry, source, self.validate_moves).result()
            except BrokenProcessPool as exc:
                self._retry.shutdown(cancel_futures=True)
                self._retry = None
                if attempt:
                    reason = (
                        f"the parser process died while reading this file ({exc or 'killed'}); drop it again to retry"
                    )
                    return ParsedSource(source, None, _size(source), "unknown", None, None, None, reason)
        raise AssertionError("not reached")
