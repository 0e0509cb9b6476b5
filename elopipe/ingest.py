"""Ingest: sources -> parsed files -> the store.

Three steps, usable separately:

- `discover(paths)` (elopipe.sources): which byte streams to read;
- `parse_source(source)`: pure, no database; bytes -> hash, encoding, format, `ParsedFile`
  (elopipe.parse_pool runs it in worker processes, batch by batch);
- `load_batch(con, parsed)` (elopipe.loader): one transaction per batch of files.

`ingest_paths` chains them: it is the one driver of `elopipe ingest`, the Prefect flows
(`elopipe run`) and the drop folder (`elopipe watch`).
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import duckdb

from elopipe import streaming
from elopipe.game_frame import records_frame
from elopipe.loader import FileResult, load_batch, load_parsed_source
from elopipe.model import GameTable, IngestIssue, ParsedFile
from elopipe.sources import Discovery, Source, SourceError, discover
from elopipe.store import DEFAULT_DB, StoreFullError, disk_full_message, is_disk_full, open_writer
from elopipe.textio import decode_bytes, wide_bom

__all__ = [
    "Discovery",
    "FileResult",
    "IngestSummary",
    "ParsedSource",
    "Source",
    "detect_format",
    "discover",
    "ingest_paths",
    "load_parsed_source",
    "parse_source",
]


@dataclass
class ParsedSource:
    """What `parse_source` returns: picklable, so it can cross a process pool."""

    source: Source
    sha256: str | None
    size: int
    format: str  # 'pgn' | 'trf' | 'unknown'
    encoding: str | None
    newline: str | None
    parsed: ParsedFile | None  # None when rejected before parsing
    rejected_reason: str | None = None


def detect_format(suffix: str, text: str) -> str:
    """'pgn' or 'trf' from the suffix, or by content for .txt and anything else; 'unknown' if neither."""
    from elopipe.pgn_reader import looks_like_pgn
    from elopipe.trf_reader import looks_like_trf

    if suffix == ".pgn":
        return "pgn"
    if suffix == ".trf":
        return "trf"
    if looks_like_trf(text):
        return "trf"
    if looks_like_pgn(text):
        return "pgn"
    return "unknown"


def parse_source(source: Source, validate_moves: bool = False, workers: int = 1) -> ParsedSource:
    """Read, hash, decode and parse one source. Never raises on the file's content or on I/O errors:
    an unreadable or non-chess file comes back with `rejected_reason` set. `workers`: see
    `read_pgn`; the result is the same."""
    try:
        # only PGN is read in pieces: another file is read whole at once, not probed first
        data = _read_small(source) if source.suffix == ".pgn" else source.read_bytes()
        if data is None:
            return _parse_large_pgn(source, validate_moves, workers)
    except _READ_ERRORS as exc:
        return ParsedSource(source, None, _size(source), "unknown", None, None, None, f"cannot read file: {exc}")
    # hashlib releases the GIL on large inputs: the digest is computed while the text is parsed
    hashing = _HASHER.submit(_sha256, data)
    ps = _parse_bytes(source, data, validate_moves, workers)
    ps.sha256 = hashing.result()
    return ps


_HASHER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="elopipe-sha256")
_READ_ERRORS = (OSError, EOFError, zipfile.BadZipFile, ValueError, SourceError)


def _read_small(source: Source) -> bytes | None:
    """The decompressed bytes when there are at most `streaming.STREAM_BYTES`, else None (the
    stream is closed). Raises as `Source.blocks` does."""
    blocks = source.blocks()
    parts: list[bytes] = []
    n = 0
    for block in blocks:
        parts.append(block)
        n += len(block)
        if n > streaming.STREAM_BYTES:
            blocks.close()
            return None
    return b"".join(parts)


def _parse_large_pgn(source: Source, validate_moves: bool, workers: int) -> ParsedSource:
    """`parse_source` of a PGN larger than `streaming.STREAM_BYTES`: read in pieces (see
    elopipe.streaming), with the same result as a whole read. Raises the read errors of
    `Source.blocks` met by the first pass."""
    from elopipe.pgn_reader import read_pgn_chunks

    sc = streaming.scan(source)
    size = sc.size

    def rejected(reason: str, encoding: str | None = None, newline: str | None = None) -> ParsedSource:
        return ParsedSource(source, sc.sha256, size, "unknown", encoding, newline, None, reason)

    if sc.blank:
        return rejected("empty file")
    if wide_bom(sc.head) is None and _too_many_controls(sc.n_control, size):
        return rejected("binary file (NUL bytes)")
    encoding = sc.encoding
    if encoding is None:  # UTF-16/32 or lone CR line ends: read whole
        ps = _parse_bytes(source, source.read_bytes(), validate_moves, workers)
        ps.sha256 = sc.sha256
        return ps
    errors: list[Exception] = []
    parsed = read_pgn_chunks(
        streaming.pieces(source, sc, errors),
        maybe_mojibake=sc.hint,
        validate_moves=validate_moves,
        source_name=source.display,
        workers=workers,
    )
    if errors:
        return ParsedSource(source, None, _size(source), "unknown", None, None, None, f"cannot read file: {errors[0]}")
    if sc.n_nul:
        parsed.issues.insert(0, _nul_issue(sc.n_nul, sc.nul_line, sc.nul_excerpt))
    # the size of the text read, NULs removed, as for a file read whole
    return ParsedSource(source, sc.sha256, size - sc.n_nul, "pgn", encoding, sc.newline, parsed, parsed.rejected_reason)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parse_bytes(source: Source, data: bytes, validate_moves: bool, workers: int) -> ParsedSource:
    """`parse_source` once the bytes are read; the sha256 is set by the caller."""
    digest = None
    if source.member is None and source.path.lower().endswith(".zip"):
        return ParsedSource(source, digest, len(data), "unknown", None, None, None, "not a readable zip archive")
    if not data or data.isspace():  # no copy of a large file, unlike strip()
        return ParsedSource(source, digest, len(data), "unknown", None, None, None, "empty file")
    nul_issue = None
    if wide_bom(data) is None and _looks_binary(data):
        return ParsedSource(source, digest, len(data), "unknown", None, None, None, "binary file (NUL bytes)")
    if wide_bom(data) is None and b"\x00" in data:
        first = data.index(b"\x00")
        line = data.count(b"\n", 0, first) + 1
        nul_issue = _nul_issue(data.count(b"\x00"), line, data[max(0, first - 200) : first + 200])
        data = data.replace(b"\x00", b"")
    if (
        source.suffix == ".pgn"
        and wide_bom(data) is None
        and not data.startswith(b"\xef\xbb\xbf")
        and b"\r" not in data
    ):
        # UTF-8 with LF line ends, most likely: the reader checks the bytes as it reads them, and
        # the text is decoded only if they are not UTF-8 after all
        from elopipe.pgn_reader import NotUtf8

        try:
            return _read(source, data, "pgn", None, "utf-8", "LF" if b"\n" in data else None, nul_issue,
                         validate_moves, workers)  # fmt: skip
        except NotUtf8:
            pass
    dec = decode_bytes(data)
    fmt = detect_format(source.suffix, dec.text)
    if fmt == "unknown":
        return ParsedSource(
            source, digest, len(data), fmt, dec.encoding, dec.newline, None, "neither PGN nor TRF content"
        )
    return _read(source, data, fmt, dec.text, dec.encoding, dec.newline, nul_issue, validate_moves, workers)


def _read(
    source: Source,
    data: bytes,
    fmt: str,
    text: str | None,
    encoding: str,
    newline: str | None,
    nul_issue: IngestIssue | None,
    validate_moves: bool,
    workers: int,
) -> ParsedSource:
    """Read `text` (None: the undecoded bytes `data`, PGN only) with the reader of `fmt`. A reader
    bug is recorded as a rejected file; raises pgn_reader.NotUtf8 only when `text` is None."""
    from elopipe.pgn_reader import NotUtf8

    try:
        if fmt == "pgn":
            from elopipe.pgn_reader import read_pgn

            # the file's bytes are the text's UTF-8 when it was UTF-8 with LF line ends: no re-encoding
            same = text is None or (encoding == "utf-8" and newline in ("LF", None))
            parsed = read_pgn(
                text,
                validate_moves=validate_moves,
                source_name=source.display,
                workers=workers,
                utf8=data if same else None,
            )
        else:
            from elopipe.trf_reader import read_trf

            parsed = read_trf(text or "", source_name=source.display)
    except NotUtf8:
        raise
    except Exception as exc:  # a reader bug must not lose the file: record it as rejected
        return ParsedSource(source, None, len(data), fmt, encoding, newline, None, f"reader failed: {exc!r}")
    if nul_issue is not None:
        parsed.issues.insert(0, nul_issue)
    if not isinstance(parsed.games, GameTable):
        # the games as the frame the loader inserts, built here: in a parser process when there is one
        parsed.games = GameTable(records_frame(list(parsed.games)), len(parsed.games))
    return ParsedSource(source, None, len(data), fmt, encoding, newline, parsed, parsed.rejected_reason)


def _looks_binary(data: bytes) -> bool:
    return _too_many_controls(len(data.translate(None, streaming.NOT_CONTROL)), len(data))


def _too_many_controls(n_control: int, size: int) -> bool:
    """More than 1% control bytes (at least 16): an image, an archive, a database, not a text file.
    A few stray NULs in a text file are removed with a warning instead."""
    return n_control > max(16, size // 100)


def _nul_issue(n_nul: int, line: int, excerpt: bytes) -> IngestIssue:
    """The warning for NUL bytes removed before reading; `excerpt`: the bytes around the first."""
    return IngestIssue(
        "nul_bytes_removed", f"{n_nul} NUL byte(s) removed before reading (first on line {line})",
        line=line, severity="warning", raw=excerpt.decode("latin-1"),
    )  # fmt: skip


def _size(source: Source) -> int:
    try:
        return os.path.getsize(source.path)
    except OSError:
        return 0


class BatchParseError(Exception):
    """A parser could not parse a batch at all (a cluster that lost it): the ingest stops before
    that batch, with the message as its `failure`. Earlier batches stay loaded."""


class BatchParser(Protocol):
    """What `ingest_paths` takes its parsed batches from (elopipe.parse_pool.Parser locally,
    elopipe.parse_units.UnitParser on a cluster): a context manager whose `parsed_batches()`
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
    def exit_code(self) -> int:
        """0 when every file loaded (or was already in the store), 1 when any was partial or
        rejected, or the ingest stopped early."""
        return 1 if self.failure or any(f.status in ("partial", "rejected") for f in self.files) else 0

    @property
    def results_exports(self) -> int:
        """Loaded PGN files in which no game shows a move (`FileResult.results_only`)."""
        return sum(1 for f in self.files if f.results_only and f.status in ("loaded", "partial"))

    def line(self) -> str:
        """The one-line summary of the ingest (the `ingest` command and the flows print it)."""
        n = len(self.files)
        text = (
            f"{n} file{'' if n == 1 else 's'}: {self.count('loaded')} loaded, {self.count('partial')} partial, "
            f"{self.count('rejected')} rejected, {self.count('skipped')} already in store; "
            f"{self.games} games, {self.players} players, {self.errors} errors"
        )
        if self.warnings:
            text += f", {self.warnings} warnings (v_ingest_errors)"
        if self.results_exports:
            k = self.results_exports
            text += f"; {k} results export{'' if k == 1 else 's'} (no game shows a move: see --no-moves)"
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
) -> IngestSummary:
    """Ingest every source under `paths` into `db`: the one ingest driver of the CLI, the flows
    and the drop folder.

    Sources are parsed in batches (elopipe.parse_pool: in worker processes when it pays, the next
    batch while this one is written) and each batch is written in one transaction
    (elopipe.loader.load_batch): a batch is committed whole or not at all. Files already in the
    store (same sha256) are skipped; a changed file at a known path replaces its old rows; a file
    that cannot be read is recorded as rejected and the rest of its batch loads. `on_file` is
    called for each file once its batch is committed. `workers` > 1 replays each large PGN in
    that many forked processes with `validate_moves` (see `read_pgn`). `wait`: seconds to wait for
    another process that holds the store (None: for ever); raises StoreBusyError after that (see
    elopipe.store). `stop`: checked between batches; when it returns True the ingest ends after
    the batch being written (`stopped`). A full disk stops the ingest at the file (or the batch)
    that did not fit: the batches before it stay loaded, and `failure` says why. `parser`: makes
    the BatchParser of the sources (default: elopipe.parse_pool.Parser, worker processes on this
    machine; elopipe.parse_units.UnitParser parses on a Dask cluster); a batch it cannot parse
    (BatchParseError) stops the ingest before that batch, with `failure` saying why."""
    from elopipe.parse_pool import Parser

    disc = discover(paths)
    summary = IngestSummary(skipped_paths=disc.skipped, missing=disc.missing, refused=disc.refused)
    if stop is not None and stop():  # stopped before anything was read
        summary.stopped = bool(disc.sources)
        return summary
    bar = _progress(disc.sources) if progress else None
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


def _progress(sources: list[Source]):
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
