"""`ingest_files` flow: parse files as tasks (in parallel where it pays), load from one writer.

Parsing (`elopipe.ingest.parse_source`) is pure and picklable, so each file's parse task hands
the work to a process pool when the batch is big enough for processes to pay for their start
(`PARALLEL_MIN_BYTES`, more than one file and core); otherwise it parses in the task's thread.
Loading (`elopipe.ingest.load_parsed_source`) happens in one writer task per chunk of files, one
DuckDB transaction per file, in the order the files were discovered; the next chunk is parsed
while the current one is written. Between files the writer checks `stop_requested()` so Ctrl-C
ends after the current file's transaction.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import concurrent.futures as cf
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import quote, unmapped

from elopipe.ingest import ParsedSource, Source, discover, load_parsed_source, parse_source
from elopipe.interrupt import stop_requested
from elopipe.lifeline import exit_with
from elopipe.sources import path_from_param
from elopipe.store import DEFAULT_DB, StoreFullError, disk_full_message, is_disk_full, open_writer
from flows._stages import stage_line, stage_warning

PARALLEL_MIN_BYTES = 2_000_000  # below this, starting worker processes costs more than it saves
CHUNK_FILES = 64  # parsed files held in memory at most ~2 chunks at a time
CHUNK_BYTES = 256_000_000


@dataclass(frozen=True)
class FileRecord:
    """One source's outcome. status: 'loaded' | 'partial' | 'rejected' | 'skipped'."""

    name: str  # path, or 'archive!member'
    path: str  # the file on disk (the archive for a member)
    member: str | None
    status: str
    reason: str | None
    n_games: int
    n_errors: int
    n_warnings: int = 0


@dataclass
class IngestFlowSummary:
    """What `ingest_files` did: one record per source, in discovery order."""

    files: list[FileRecord] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    skipped_paths: list[tuple[str, str]] = field(default_factory=list)  # not chess files, by suffix
    stopped: bool = False  # a stop request ended the run before every file was loaded
    failure: str | None = None  # why the ingest stopped early (the store's disk is full)
    parallel_workers: int = 0  # 0: parsed in threads of this process

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def games(self) -> int:
        return sum(f.n_games for f in self.files)

    @property
    def errors(self) -> int:
        return sum(f.n_errors for f in self.files)

    def line(self) -> str:
        text = (
            f"{len(self.files)} files: {self.count('loaded')} loaded, {self.count('partial')} partial, "
            f"{self.count('rejected')} rejected, {self.count('skipped')} already in store; "
            f"{self.games} games, {self.errors} errors"
        )
        warnings = sum(f.n_warnings for f in self.files)
        if warnings:
            text += f", {warnings} warnings (v_ingest_errors)"
        if self.stopped:
            text += " (stopped early)"
        return text


def _pool_size(sources: Sequence[Source]) -> int:
    """Worker processes worth starting for `sources` (0 = parse in threads)."""
    cores = os.cpu_count() or 1
    if cores < 2 or len(sources) < 2:
        return 0
    total = 0
    for s in sources:
        try:
            total += os.path.getsize(s.path)
        except OSError:
            pass
    if total < PARALLEL_MIN_BYTES:
        return 0
    return min(cores, len(sources))


def _chunks(sources: Sequence[Source]) -> Iterator[list[Source]]:
    chunk: list[Source] = []
    size = 0
    for s in sources:
        try:
            n = os.path.getsize(s.path)
        except OSError:
            n = 0
        if chunk and (len(chunk) >= CHUNK_FILES or size + n > CHUNK_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(s)
        size += n
    if chunk:
        yield chunk


_pool: cf.ProcessPoolExecutor | None = None


def _make_pool(workers: int) -> cf.ProcessPoolExecutor:
    # forkserver: workers start from a clean process that imported only the readers, not from a
    # fork of this one (which runs Prefect's threads and event loop).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["elopipe.ingest"])
    # Each worker ends when this process does, even on kill -9: a worker's parent is the
    # forkserver, which lives as long as its workers, so they watch this process (elopipe.lifeline).
    return cf.ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=exit_with, initargs=(os.getpid(), 0.0)
    )


@task(name="parse_file", task_run_name="parse {source.display}", cache_policy=NO_CACHE, persist_result=False)
def parse_file(source: Source, validate_moves: bool = False) -> ParsedSource:
    """Parse one source (elopipe.ingest.parse_source); never raises on the file's content.

    If a worker process dies (killed, out of memory), the files it may have been reading are
    recorded as rejected with that reason, and the rest of the batch is parsed in this process.
    """
    global _pool
    pool = _pool
    if pool is not None:
        try:
            return pool.submit(parse_source, source, validate_moves).result()
        except BrokenProcessPool as exc:
            _pool = None
            reason = f"the parser process died while reading this file ({exc or 'killed'}); drop it again to retry"
            return ParsedSource(source, None, _size(source), "unknown", None, None, None, reason)
    return parse_source(source, validate_moves=validate_moves)


def _size(source: Source) -> int:
    try:
        return os.path.getsize(source.path)
    except OSError:
        return 0


@task(name="write_files", cache_policy=NO_CACHE, persist_result=False)
def write_files(parsed: list[PrefectFuture[ParsedSource]], db: str) -> tuple[list[FileRecord], str | None]:
    """The one writer: load each parsed source as it completes, in order, one transaction each.
    Stops between files when a stop was requested, and at a file the store's disk has no room
    for (or when the store cannot even be opened on a full disk): (records, why it stopped
    early, or None). A file that did not fit gets no record: a watched file stays in the inbox,
    not quarantined, for the next batch."""
    records: list[FileRecord] = []
    try:
        with open_writer(db) as con:
            for fut in parsed:
                if stop_requested():
                    break
                ps = fut.result()
                res = load_parsed_source(con, ps)
                records.append(
                    FileRecord(
                        name=res.name,
                        path=ps.source.stored_path,
                        member=ps.source.member,
                        status=res.status,
                        reason=res.reason,
                        n_games=res.n_games,
                        n_errors=res.n_errors,
                        n_warnings=res.n_warnings,
                    )
                )
                if res.status == "rejected":
                    stage_warning("ingest", f"rejected {res.name}: {res.reason}")
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        return records, str(exc) if isinstance(exc, StoreFullError) else disk_full_message(db, "the next file")
    return records, None


@flow(
    name="ingest_files",
    task_runner=ThreadPoolTaskRunner(max_workers=max(2, os.cpu_count() or 1)),
    validate_parameters=False,
)
def ingest_files(
    paths: list[str | os.PathLike[str]],
    db: str | os.PathLike[str] = DEFAULT_DB,
    validate_moves: bool = False,
) -> IngestFlowSummary:
    """Ingest files, folders and archives under `paths` into `db` (see module docstring).

    Returns an IngestFlowSummary (loaded / partial / rejected / skipped files, games, errors).
    Raises StoreBusyError if another process holds the store's write lock and does not let go.
    """
    global _pool
    disc = discover([path_from_param(os.fspath(p)) for p in paths])
    summary = IngestFlowSummary(missing=disc.missing, skipped_paths=disc.skipped)
    if stop_requested():  # Ctrl-C while Prefect was starting: do not even parse
        summary.stopped = bool(disc.sources)
        stage_line("ingest", summary.line())
        return summary
    for missing in disc.missing:
        stage_warning("ingest", f"no such file or folder: {missing}")
    for path, why in disc.refused:
        stage_warning("ingest", f"skipped {path}: {why}")
    workers = _pool_size(disc.sources)
    summary.parallel_workers = workers
    _pool = _make_pool(workers) if workers else None
    try:
        chunks = list(_chunks(disc.sources))
        pending = parse_file.map(chunks[0], validate_moves=unmapped(validate_moves)) if chunks else None
        for i in range(len(chunks)):
            current = pending
            # Parse the next chunk while this one is written.
            pending = (
                parse_file.map(chunks[i + 1], validate_moves=unmapped(validate_moves))
                if i + 1 < len(chunks) and not stop_requested()
                else None
            )
            records, summary.failure = write_files(quote(list(current)), os.fspath(db))
            summary.files.extend(records)
            if summary.failure:
                stage_warning("ingest", summary.failure)
                summary.stopped = True
                break
            if stop_requested():
                summary.stopped = len(summary.files) < len(disc.sources)
                break
        if pending is not None:  # stopped: let queued parses finish quietly before the pool goes
            pending.wait()
    finally:
        if _pool is not None:
            _pool.shutdown(cancel_futures=True)
            _pool = None
    stage_line("ingest", summary.line())
    return summary
