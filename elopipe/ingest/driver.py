"""Ingest: sources -> parsed files -> the store.

Three steps, usable separately:

- `discover(paths)` (elopipe.read.sources): which byte streams to read;
- `parse_source(source)`: pure, no database; bytes -> hash, encoding, format, `ParsedFile`
  (elopipe.ingest.parse_pool runs it in worker processes, batch by batch);
- `load_batch(con, parsed)` (elopipe.ingest.loader): one transaction per batch of files.

`ingest_paths` chains them: it is the one driver of `elopipe ingest`, the Prefect flows
(`elopipe run`) and the drop folder (`elopipe watch`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import duckdb

from elopipe.identity import rerate
from elopipe.ingest.ledger import FileResult
from elopipe.ingest.loader import load_batch
from elopipe.read.parse import ParsedSource
from elopipe.read.sources import GONE, Source, discover
from elopipe.runtime.errors import ElopipeError
from elopipe.runtime.hints import command_hint
from elopipe.runtime.words import plural
from elopipe.store.connect import DEFAULT_DB, StoreFullError, disk_full_message, is_disk_full, open_writer

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


#: What the ingests could not read or found wrong, by file, line and game (the view
#: `v_ingest_errors`): the summary line and the ingest command's table of files with problems name
#: it, narrowed to what they counted (`problems_hint`).
PROBLEMS_QUERY = "SELECT path, line, game_index, message FROM v_ingest_errors"


def problems_hint(db: str | os.PathLike[str] | None = None, file_ids: Iterable[int] = ()) -> str:
    """The `elopipe sql` command that lists the errors and warnings an ingest counted, to copy:
    `PROBLEMS_QUERY` without the 'info' notes, of the files `file_ids` only (the ingest's files
    with problems: their ids, `file_id` = one or BETWEEN the least and the greatest, since one
    ingest's new files take consecutive ids and a file without problems adds no row), so that it
    lists as many rows as the summary counted and none of an earlier ingest. No `file_ids`: every
    file's. With `--db` for a store `db` that is not the default (`command_hint`)."""
    where = "severity IN ('error', 'warning')"
    ids = sorted(set(file_ids))
    if ids:
        where += f" AND file_id = {ids[0]}" if len(ids) == 1 else f" AND file_id BETWEEN {ids[0]} AND {ids[-1]}"
    return command_hint(f'sql "{PROBLEMS_QUERY} WHERE {where}"', db)


class BatchParseError(ElopipeError):
    """A parser could not parse a batch at all (a cluster that lost it): the ingest stops before
    that batch, with the message as its `failure`. Earlier batches stay loaded."""


class BatchParser(Protocol):
    """What `ingest_paths` takes its parsed batches from (elopipe.ingest.parse_pool.Parser locally,
    elopipe.ingest.units.UnitParser on a cluster): a context manager whose `parsed_batches()`
    gives the sources' `ParsedSource`s batch by batch, in order, and may raise BatchParseError;
    `pool_workers`: the processes it parses in (0: this one)."""

    pool_workers: int

    def __enter__(self) -> BatchParser: ...
    def __exit__(self, *exc: object) -> None: ...
    def parsed_batches(self) -> Iterator[list[ParsedSource]]: ...


@dataclass
class IngestSummary:
    """What one ingest did: one FileResult per source, in discovery order.

    `stopped`: a stop request (Ctrl-C in a flow) ended it before every file was loaded;
    `failure`: why it stopped early (the store's disk is full); `parallel_workers`: parser
    processes used (0: parsed in this process)."""

    files: list[FileResult] = field(default_factory=list)
    skipped_paths: list[tuple[str, str]] = field(default_factory=list)  # not chess files, by suffix
    missing: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # not read: symlinks, devices
    failure: str | None = None
    stopped: bool = False
    parallel_workers: int = 0

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def gone(self) -> int:
        """Files found, then gone when they were to be read (skipped, `GONE`)."""
        return sum(1 for f in self.files if f.status == "skipped" and f.reason == GONE)

    @property
    def games(self) -> int:
        return sum(f.n_games for f in self.files)

    @property
    def players(self) -> int:
        return len(set().union(*(f.player_ids for f in self.files))) if self.files else 0

    @property
    def errors(self) -> int:
        return sum(f.n_errors for f in self.files)

    @property
    def warnings(self) -> int:
        return sum(f.n_warnings for f in self.files)

    @property
    def problem_file_ids(self) -> list[int]:
        """The ids of the files with errors or warnings (`problems_hint`)."""
        return [f.file_id for f in self.files if (f.n_errors or f.n_warnings) and f.file_id is not None]

    @property
    def exit_code(self) -> int:
        """0 when every file loaded (or was already in the store), 1 when any was partial or
        rejected, or the ingest stopped early."""
        return 1 if self.failure or any(f.status in ("partial", "rejected") for f in self.files) else 0

    @property
    def results_exports(self) -> int:
        """Loaded PGN files in which no game shows a move (`FileResult.results_only`)."""
        return sum(1 for f in self.files if f.results_only and f.status in ("loaded", "partial"))

    def rerate_lines(self, db: str | os.PathLike[str] | None = None) -> list[str]:
        """'re-rate needed: fide lists from 2012-02-01 change (13 rated games moved); run ...', one
        line per system whose stored lists an automatic merge of this ingest changed (a player seen
        under two spellings, now one: `FileResult.rerate`); [] when none. The command it names
        carries `--db` for a store `db` that is not the default (`command_hint`)."""
        return [r.message(db) for r in rerate.combine([r for f in self.files for r in f.rerate])]

    def line(self, db: str | os.PathLike[str] | None = None, hint: bool = True) -> str:
        """The one-line summary of the ingest (the `ingest` command and the flows print it); it
        counts the games corrections removed (`FileResult.removed_games`). When files gave errors
        or warnings, the counts are followed by the command that lists them (`problems_hint`, with
        `--db` for a store `db` that is not the default), unless `hint` is False (the caller
        printed that command already)."""
        n = len(self.files)
        text = (
            f"{plural(n, 'file')}: {self.count('loaded')} loaded, {self.count('partial')} partial, "
            f"{self.count('rejected')} rejected, {self.count('skipped') - self.gone} already in store; "
            f"{plural(self.games, 'game')}, {plural(self.players, 'player')}, {plural(self.errors, 'error')}"
        )
        if self.warnings:
            text += f", {plural(self.warnings, 'warning')}"
        if hint and (self.errors or self.warnings):
            text += f" (`{problems_hint(db, self.problem_file_ids)}` lists them)"
        if self.gone:
            text += f"; {plural(self.gone, 'file')} {GONE}"
        removed = sum(f.removed_games for f in self.files)
        if removed:
            text += f"; {plural(removed, 'game')} removed by a correction"
        if self.results_exports:
            k = self.results_exports
            text += f"; {plural(k, 'results export')} (no game shows a move: see --no-moves)"
        if self.stopped:
            text += " (stopped early)"
        return text


def ingest_paths(
    paths: list[str | os.PathLike[str]],
    db: str | os.PathLike[str] = DEFAULT_DB,
    validate_moves: bool = False,
    progress: bool = False,
    on_file: Callable[[FileResult], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
    workers: int = 1,
    wait: float | None = None,
    stop: Callable[[], bool] | None = None,
    parser: Callable[[list[Source]], BatchParser] | None = None,
    on_sources: Callable[[int], None] | None = None,
) -> IngestSummary:
    """Ingest every source under `paths` into `db`: the one ingest driver of the CLI, the flows
    and the drop folder.

    Sources are parsed in batches (elopipe.ingest.parse_pool: in worker processes when it pays, the next
    batch while this one is written) and each batch is written in one transaction
    (elopipe.ingest.loader.load_batch): a batch is committed whole or not at all. Files already in the
    store (same sha256) are skipped; a changed file at a known path replaces its old rows; a file
    that cannot be read is recorded as rejected and the rest of its batch loads. `on_file` is
    called for each file once its batch is committed. `workers` > 1 replays each large PGN in
    that many forked processes with `validate_moves` (see `read_pgn`). `wait`: seconds to wait for
    another process that holds the store (None: for ever); raises StoreBusyError after that (see
    elopipe.store.connect). `stop`: checked between batches; when it returns True the ingest ends after
    the batch being written (`stopped`). A full disk stops the ingest at the file (or the batch)
    that did not fit: the batches before it stay loaded, and `failure` says why. `parser`: makes
    the BatchParser of the sources (default: elopipe.ingest.parse_pool.Parser, worker processes on this
    machine; elopipe.ingest.units.UnitParser parses on a Dask cluster); a batch it cannot parse
    (BatchParseError) stops the ingest before that batch, with `failure` saying why. `on_sources`
    is called once with the number of sources found, before any is read."""
    from elopipe.ingest.parse_pool import Parser

    disc = discover(paths)
    summary = IngestSummary(skipped_paths=disc.skipped, missing=disc.missing, refused=disc.refused)
    if on_sources is not None:
        on_sources(len(disc.sources))
    if stop is not None and stop():  # stopped before anything was read
        summary.stopped = bool(disc.sources)
        return summary
    bar = _progress(disc.sources) if progress else None
    # The collector is paused from a batch's parsing until the batch is written and released (the
    # parser and the loader pause it too, each for its own step): re-enabled in between, its
    # first pass walked every object of the parsed batch, still alive, and freed nothing (0.12 of
    # a TRF month's 4 CPU-s). Once the batch is released, a pass over the youngest objects frees
    # what cycles the batch left, and walks little.
    collect = gc.isenabled()
    gc.disable()
    try:
        with (
            open_writer(db, timeout=wait, on_wait=on_wait) as con,
            Parser(disc.sources, validate_moves, workers) if parser is None else parser(disc.sources) as batch_parser,
        ):
            summary.parallel_workers = batch_parser.pool_workers
            for parsed in _batches(batch_parser, summary):
                if bar is not None:
                    bar[0].update(bar[1], description=_short(parsed[-1].source.display))
                done = _write_batch(con, os.fspath(db), parsed, summary, on_file)
                if bar is not None:
                    bar[0].advance(bar[1], len(parsed))
                del parsed
                if collect:
                    gc.collect(0)
                if not done:
                    break
                if stop is not None and stop():
                    summary.stopped = len(summary.files) < len(disc.sources)
                    break
    except Exception as exc:  # the store cannot even be opened on a full disk
        if not is_disk_full(exc) or summary.failure:
            raise
        summary.failure = disk_full_message(os.fspath(db), "the next file")
    finally:
        if collect:
            gc.enable()
        if bar is not None:
            bar[0].stop()
    return summary


def _batches(parser: BatchParser, summary: IngestSummary) -> Iterator[list[ParsedSource]]:
    """The parser's batches; one it cannot parse ends them, with `summary.failure` set."""
    try:
        yield from parser.parsed_batches()
    except BatchParseError as exc:
        summary.failure = str(exc)


def _write_batch(
    con: duckdb.DuckDBPyConnection,
    db: str,
    parsed: list[ParsedSource],
    summary: IngestSummary,
    on_file: Callable[[FileResult], None] | None,
) -> bool:
    """Load one parsed batch into `summary`; False when the disk is full (the ingest stops)."""
    try:
        results = load_batch(con, parsed)
    except StoreFullError as exc:  # every later file would fail the same way
        results = [r for r in exc.loaded if isinstance(r, FileResult)]
        summary.failure = str(exc)
    except Exception as exc:
        # a full disk can also fail the batch's COMMIT so that DuckDB gives the connection up
        # (its checkpoint failed): nothing of the batch is stored, and nothing more can be
        if not is_disk_full(exc):
            raise
        results = []
        first = parsed[0].source.display
        what = f"the batch of {len(parsed)} files from {first}" if len(parsed) > 1 else first
        summary.failure = disk_full_message(db, what)
    for result in results:
        summary.files.append(result)
        if on_file is not None:
            on_file(result)
    if summary.failure is None:
        return True
    failed = parsed[len(results)]
    summary.files.append(FileResult(failed.source.display, "rejected", format=failed.format, reason=summary.failure,
                                    path=failed.source.stored_path, member=failed.source.member))  # fmt: skip
    return False


def _short(name: str, width: int = 40) -> str:
    return name if len(name) <= width else "…" + name[-(width - 1) :]


def _progress(sources: list[Source]) -> tuple[Progress, TaskID]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    prog = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
    )
    prog.start()
    task = prog.add_task("ingesting", total=len(sources))
    return prog, task
