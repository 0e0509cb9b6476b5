"""Parsing as units of work that any process on any machine can run (issue 14: Dask scale-out).

The local path parses a batch file by file in a process pool (elopipe.ingest.parse_pool). Scaled out,
each batch (the same batches: `parse_pool.batches`) becomes units:

- small files are grouped, about `UNIT_BYTES` or `UNIT_FILES` a unit, so that a FIDE month of
  750 TRF files is a few dozen tasks rather than 750;
- a PGN larger than `PIECE_BYTES` is cut where a game starts (elopipe.ingest.pieces), one unit a
  piece, so that one large archive spreads over every worker; the pieces are merged here, in
  file order, into the result a whole read gives (game indexes and line numbers of the whole
  file).

`run_unit` runs on a worker: it reads the files itself (a worker must see the input files at
the same path: a shared or copied folder) and returns the parsed files with their games either
as Arrow IPC bytes in the result or, with a stage folder, as Parquet shards there. `UnitParser`
plans the units of each batch, hands them to a `submit` function (Prefect's Dask task runner in
flows/dask_parse.py; a process pool in tests) one batch ahead, and gives the batches back to
the ingest driver (`elopipe.ingest.driver.ingest_paths`) exactly as the local `Parser` does, so the
single DuckDB writer loads them through the same code.

A unit that fails for good (its workers killed more often than the cluster retries it, a
worker that cannot see the file) fails its whole batch (`ClusterParseError`): nothing of that
batch is written.
"""

from __future__ import annotations

import io
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import polars as pl

from elopipe.ingest import scaleout
from elopipe.ingest.driver import BatchParseError
from elopipe.ingest.execution import parse
from elopipe.ingest.parse_pool import _size, batches, one_ahead
from elopipe.ingest.pieces import PgnPiece, PiecePlan, assemble, parse_piece, plan_pieces
from elopipe.read.parse import ParsedSource
from elopipe.read.records import GameTable
from elopipe.read.sources import Source
from elopipe.runtime.errors import ElopipeError, first_line

UNIT_BYTES = 8_000_000
UNIT_FILES = 64
# A PGN larger than this is cut into pieces of about this size (decompressed bytes); None: the
# environment's `ELOPIPE_PIECE_BYTES` (elopipe.ingest.scaleout.piece_bytes), read when a batch is planned.
PIECE_BYTES: int | None = None


class ClusterParseError(BatchParseError):
    """A unit could not be parsed on the cluster; the message names its files and the reason in
    one line. Its batch is not written."""


class WorkerCannotSee(ElopipeError):
    """The worker does not see an input file at the path the writer gave."""


@dataclass(frozen=True)
class Unit:
    """One task: `sources` parsed whole, one after the other, or piece `piece` of `plan`.
    `stage`: the folder for Parquet shards (None: games travel in the result)."""

    sources: tuple[Source, ...] = ()
    plan: PiecePlan | None = None
    piece: int = 0
    validate_moves: bool = False
    stage: str | None = None

    @property
    def names(self) -> str:
        """The unit's files, for a message."""
        if self.plan is not None:
            return f"{self.plan.source.display} (piece {self.piece + 1} of {len(self.plan.pieces)})"
        shown = ", ".join(s.display for s in self.sources[:3])
        return shown + (f" and {len(self.sources) - 3} more" if len(self.sources) > 3 else "")


@dataclass
class Shipped:
    """A games frame on its way from a worker: Arrow IPC bytes, or the path of a Parquet shard."""

    n_games: int
    ipc: bytes | None = None
    parquet: str | None = None

    def land(self) -> GameTable:
        """The frame back, as the loader takes it. Raises OSError when a shard cannot be read."""
        if self.parquet is not None:
            frame = pl.read_parquet(os.path.abspath(self.parquet), glob=False)  # a --stage DIR is no pattern
        else:
            frame = pl.read_ipc(io.BytesIO(self.ipc or b""))
        return GameTable(frame, self.n_games)


def ship(table: GameTable | pl.DataFrame, stage: str | None) -> Shipped:
    """`table`'s frame as Arrow IPC bytes, or written to a Parquet shard in `stage`."""
    frame = table.frame if isinstance(table, GameTable) else table
    n = len(table) if isinstance(table, GameTable) else frame.height
    if stage is not None:
        path = os.path.join(stage, f"{uuid.uuid4().hex}.parquet")
        frame.write_parquet(path, compression="lz4")
        return Shipped(n, parquet=path)
    buf = io.BytesIO()
    # lz4: a quarter of the bytes on the network (164 bytes a game instead of 675) for about 30 ms a piece
    frame.write_ipc(buf, compression="lz4")
    return Shipped(n, ipc=buf.getvalue())


@dataclass
class UnitResult:
    """What a unit sends back: its parsed files (their games `Shipped`), or one parsed piece."""

    files: list[ParsedSource] = field(default_factory=list)
    piece: PgnPiece | None = None


def run_unit(unit: Unit) -> UnitResult:
    """Parse `unit` (on a worker). Never raises on a file's content or I/O error (those are
    recorded as for the local path); raises WorkerCannotSee when an input path does not exist
    on this machine, so that the batch fails rather than the file being recorded as rejected."""
    for source in (unit.plan.source,) if unit.plan is not None else unit.sources:
        if not os.path.lexists(source.path):
            raise WorkerCannotSee(
                f"worker {os.uname().nodename} does not see {source.display}: "
                "put the input files in a folder every worker sees at the same path"
            )
    if unit.plan is not None:
        piece = parse_piece(unit.plan, unit.piece, unit.validate_moves)
        if piece.state is not None:
            piece.state.games = ship(piece.state.games, unit.stage)
        return UnitResult(piece=piece)
    files = []
    for source in unit.sources:
        ps = parse(source, unit.validate_moves)
        if ps.parsed is not None and isinstance(ps.parsed.games, GameTable):
            ps.parsed.games = ship(ps.parsed.games, unit.stage)  # type: ignore[assignment]
        files.append(ps)
    return UnitResult(files=files)


def plan_units(
    batch: Sequence[Source], validate_moves: bool, stage: str | None, piece_bytes: int | None = None
) -> list[Unit]:
    """The units of one batch, in file order. A PGN larger than `piece_bytes` (default
    `PIECE_BYTES`) is scanned here, once (elopipe.ingest.pieces.plan_pieces), and cut into pieces."""
    limit = piece_bytes or PIECE_BYTES or scaleout.piece_bytes()
    units: list[Unit] = []
    group: list[Source] = []
    size = 0

    def close_group() -> None:
        nonlocal group, size
        if group:
            units.append(Unit(tuple(group), validate_moves=validate_moves, stage=stage))
        group, size = [], 0

    for source in batch:
        n = _size(source)
        plan = plan_pieces(source, limit) if _may_split(source, n, limit) else None
        if plan is not None and len(plan.pieces) > 1:
            close_group()
            units.extend(
                Unit(plan=plan, piece=k, validate_moves=validate_moves, stage=stage) for k in range(len(plan.pieces))
            )
            continue
        if group and (len(group) >= UNIT_FILES or size + n > UNIT_BYTES):
            close_group()
        group.append(source)
        size += n
    close_group()
    return units


def _why(exc: BaseException) -> str:
    """A failed task's reason, in one line, without Dask's task keys and links."""
    text = first_line(exc, "")
    if type(exc).__name__ == "KilledWorker":
        return "every worker that ran it died (killed, or out of memory?), more often than Dask retries a task"
    if "scheduler-connection-lost" in text or not text:
        return "the connection to the Dask scheduler was lost"
    return text


def _may_split(source: Source, size: int, limit: int) -> bool:
    """Whether `source` may hold more than `limit` bytes of PGN, so it is worth scanning: a
    compressed file may hold several times its size on disk."""
    if source.suffix != ".pgn":
        return False
    return size > (limit // 10 if source.compressed else limit)


class Future(Protocol):
    def result(self) -> Any: ...


class UnitParser:
    """Parses `sources` on a cluster, batch by batch (`parsed_batches`), one batch ahead of the
    caller: the same interface and the same batches as elopipe.ingest.parse_pool.Parser.

    `submit(unit)` starts `run_unit(unit)` somewhere and returns a future whose `result()` is its
    UnitResult (or raises). Use as a context manager."""

    def __init__(
        self,
        sources: Sequence[Source],
        validate_moves: bool,
        submit: Callable[[Unit], Future],
        stage: str | None = None,
        workers: int = 0,
        piece_bytes: int | None = None,
    ) -> None:
        self.sources = list(sources)
        self.validate_moves = validate_moves
        self.submit = submit
        self.stage = stage
        self.pool_workers = workers  # for the summary: the cluster's workers, as far as known
        self.piece_bytes = piece_bytes

    def __enter__(self) -> UnitParser:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def parsed_batches(self) -> Iterator[list[ParsedSource]]:
        """The parsed sources, batch by batch, in order. Raises ClusterParseError when a unit
        fails for good; the batches before it have been given already."""
        yield from one_ahead(batches(self.sources), self._start, self._gather)

    def _start(self, batch: list[Source]) -> list[tuple[Unit, Future]]:
        units = plan_units(batch, self.validate_moves, self.stage, self.piece_bytes)
        return [(u, self.submit(u)) for u in units]

    def _gather(self, pending: list[tuple[Unit, Future]]) -> list[ParsedSource]:
        """The batch's parsed files in order, pieces assembled, games landed."""
        out: list[ParsedSource] = []
        parts: list[PgnPiece] = []
        for unit, fut in pending:
            try:
                result: UnitResult = fut.result()
            except Exception as exc:  # noqa: BLE001 - any failure of the cluster fails the batch
                why = _why(exc)
                raise ClusterParseError(f"the cluster could not parse {unit.names}: {why}") from None
            try:
                if unit.plan is None:
                    for ps in result.files:
                        if ps.parsed is not None and isinstance(ps.parsed.games, Shipped):
                            ps.parsed.games = ps.parsed.games.land()
                        out.append(ps)
                    continue
                piece = result.piece
                assert piece is not None
                if piece.state is not None and isinstance(piece.state.games, Shipped):
                    piece.state.games = piece.state.games.land().frame
                parts.append(piece)
                if unit.piece == len(unit.plan.pieces) - 1:
                    out.append(assemble(unit.plan, parts))
                    parts = []
            except OSError as exc:
                raise ClusterParseError(f"cannot read the parsed games of {unit.names}: {first_line(exc)}") from None
        return out
