"""Parsing one source: bytes -> hash, encoding, format, `ParsedFile` (pure: no database).

`parse_source` reads a `Source` (elopipe.read.sources), decodes its text (elopipe.read.textio),
detects PGN or TRF and runs the reader; a large PGN is read as a stream (read.pgn.streaming). A
source that cannot be read at all (unreadable bytes, a binary file, too many control characters)
gives a `ParsedSource` with `rejected_reason` set: it is recorded and kept, never raised.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import zipfile
import zlib
from dataclasses import dataclass

from elopipe.read.execution import Executor, Spread, submit
from elopipe.read.game_frame import records_table
from elopipe.read.pgn import streaming
from elopipe.read.records import GameTable, IngestIssue, ParsedFile
from elopipe.read.sources import GONE, Source, SourceError, TrailingBlock
from elopipe.read.textio import decode_bytes, wide_bom
from elopipe.read.unfinished import TAIL_BYTES, unfinished
from elopipe.read.zips import NOT_A_ZIP, ZipEndError, zip_end_problem


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
    if suffix == ".pgn":
        return "pgn"
    if suffix == ".trf":
        return "trf"
    # the readers are imported when needed: the PGN reader's tables cost a TRF's ingest 0.2 CPU-s
    from elopipe.read.trf.reader import looks_like_trf

    if looks_like_trf(text):
        return "trf"
    from elopipe.read.pgn.reader import looks_like_pgn

    if looks_like_pgn(text):
        return "pgn"
    return "unknown"


def parse_source(
    source: Source,
    validate_moves: bool = False,
    workers: int = 1,
    executor: Executor | None = None,
    spread: Spread | None = None,
) -> ParsedSource:
    """Read, hash, decode and parse one source. Never raises on the file's content or on I/O errors:
    an unreadable or non-chess file comes back with `rejected_reason` set. `workers`, `executor`,
    `spread`: see `read_pgn` (elopipe.ingest.execution gives them); the result is the same."""
    run = _Run(validate_moves, workers, executor, spread)
    parts: list[bytes] = []
    cut = None
    try:
        # only PGN is read in pieces: another file is read whole at once, not probed first
        data = _read_small(source, parts) if source.suffix == ".pgn" else _read_whole(source, parts)
        if data is None:
            return _parse_large_pgn(source, run)
    except EOFError as exc:
        if not (source.compressed and parts):
            return unreadable(source, exc)
        # a .gz, .bz2 or zip member cut short (a download that stopped): everything readable lands
        data, cut = b"".join(parts), _cut_issue()
    except _READ_ERRORS as exc:
        return unreadable(source, exc)
    # hashlib releases the GIL on large inputs: the digest is computed while the text is parsed; a
    # small file's costs less here than a hand-over to a thread (a FIDE month of TRF: 750 of them)
    hashing = submit(executor if len(data) >= _HASH_BESIDE_BYTES else None, _sha256, data)
    ps = _parse_bytes(source, data, run)
    ps.sha256 = hashing.result()
    if cut is not None and ps.parsed is not None:
        ps.parsed.issues.insert(0, cut)
        ps.parsed.cut_short = True
    if ps.parsed is not None and unfinished(data[-TAIL_BYTES:], ps.format):
        ps.parsed.cut_short = True  # the text stops where a finished file does not (a copy cut short)
    trailing = next((p for p in reversed(parts) if isinstance(p, TrailingBlock)), None)
    if trailing is not None and ps.parsed is not None:
        ps.parsed.issues.insert(0, IngestIssue("compressed_trailing_data", _TRAILING, severity="warning"))
    return ps


def _read_whole(source: Source, parts: list[bytes]) -> bytes:
    """The decompressed bytes, gathered in `parts` as they are read (what was read before an
    error stays there). Raises as `Source.blocks` does."""
    for block in source.blocks():
        parts.append(block)
    return b"".join(parts)


_TRAILING = (
    "bytes after the end of the compressed stream are no compressed data (another program appended them):"
    " left out; everything before them was read"
)


def _cut_issue() -> IngestIssue:
    """The error of a compressed stream that ends before its end marker, read as far as it goes."""
    return IngestIssue(
        "compressed_cut_short",
        "the compressed file is cut short (no end-of-stream marker): read as far as it goes; load the complete"
        " file again to replace it",
        severity="error",
    )


@dataclass(frozen=True)
class _Run:
    """How `parse_source` reads (its arguments, passed on to the readers)."""

    validate_moves: bool
    workers: int
    executor: Executor | None
    spread: Spread | None


# from this size on, a file's digest is computed on the executor, beside its parsing
_HASH_BESIDE_BYTES = 1_000_000
_READ_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error, ValueError, SourceError)


def _read_small(source: Source, parts: list[bytes]) -> bytes | None:
    """The decompressed bytes when there are at most `streaming.STREAM_BYTES` holding at most
    `streaming.STREAM_GAMES` games (`[Event ` tags, counted as the stream is read), else None
    (the stream is closed). The bytes are gathered in `parts` as they are read. Raises as
    `Source.blocks` does."""
    blocks = source.blocks()
    n = games = 0
    tail = b""
    for block in blocks:
        parts.append(block)
        n += len(block)
        games += (tail + block[: len(_EVENT) - 1]).count(_EVENT) + block.count(_EVENT)  # one cut by a block's end too
        tail = (tail + block[-(len(_EVENT) - 1) :])[-(len(_EVENT) - 1) :]  # the stream's last bytes
        if n > streaming.STREAM_BYTES or games > streaming.STREAM_GAMES:
            blocks.close()
            return None
    return b"".join(parts)


_EVENT = b"[Event "


def _parse_large_pgn(source: Source, run: _Run) -> ParsedSource:
    """`parse_source` of a PGN larger than `streaming.STREAM_BYTES`: read in pieces (see
    elopipe.read.pgn.streaming), with the same result as a whole read. Raises the read errors of
    `Source.blocks` met by the first pass."""
    from elopipe.read.pgn.reader import read_pgn_chunks

    sc = streaming.scan(source, executor=run.executor)
    size = sc.size

    def rejected(reason: str, encoding: str | None = None, newline: str | None = None) -> ParsedSource:
        return ParsedSource(source, sc.sha256, size, "unknown", encoding, newline, None, reason)

    if sc.blank:
        return rejected("empty file")
    if wide_bom(sc.head) is None and too_many_controls(sc.n_control, size):
        return rejected("binary file (NUL bytes)")
    encoding = sc.encoding
    if encoding is None:  # UTF-16/32 or lone CR line ends: read whole
        ps = _parse_bytes(source, source.read_bytes(), run)
        ps.sha256 = sc.sha256
        return ps
    errors: list[Exception] = []
    parsed = read_pgn_chunks(
        streaming.pieces(source, sc, errors),
        maybe_mojibake=sc.hint,
        validate_moves=run.validate_moves,
        source_name=source.display,
        workers=run.workers,
        executor=run.executor,
        spread=run.spread,
    )
    if errors:
        return unreadable(source, errors[0])
    if sc.n_nul:
        assert sc.nul_line is not None  # set with the first NUL counted (streaming._nul_block)
        parsed.issues.insert(0, _nul_issue(sc.n_nul, sc.nul_line, sc.nul_excerpt))
    # the size of the text read, NULs removed, as for a file read whole
    return ParsedSource(source, sc.sha256, size - sc.n_nul, "pgn", encoding, sc.newline, parsed, parsed.rejected_reason)


# zip (a local file header, an empty archive's end record), gzip and bzip2 signatures
_ARCHIVE_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh")
NESTED_ARCHIVE = "an archive inside an archive: archives inside archives are not read (unpack it first)"
TAR_ARCHIVE = "a tar archive: elopipe reads .zip, .gz and .bz2 files of PGN or TRF, not tar (unpack it first)"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parse_bytes(source: Source, data: bytes, run: _Run) -> ParsedSource:
    """`parse_source` once the bytes are read; the sha256 is set by the caller."""
    digest = None
    if source.member is None and source.path.lower().endswith(".zip"):
        # a zip that discovery could not open (its bytes are read, so the ledger keeps its digest)
        why = zip_end_problem(io.BytesIO(data)) or NOT_A_ZIP
        return ParsedSource(source, digest, len(data), "unknown", None, None, None, why)
    if not data or data.isspace():  # no copy of a large file, unlike strip()
        return ParsedSource(source, digest, len(data), "unknown", None, None, None, "empty file")
    if source.compressed and data.startswith(_ARCHIVE_MAGIC):
        return ParsedSource(source, digest, len(data), "unknown", None, None, None, NESTED_ARCHIVE)
    nul_issue = None
    if data[257:262] == b"ustar":  # a tar archive (POSIX header): its members are not read
        return ParsedSource(source, digest, len(data), "unknown", None, None, None, TAR_ARCHIVE)
    if wide_bom(data) is None and _looks_binary(data):
        return ParsedSource(source, digest, len(data), "unknown", None, None, None, "binary file (NUL bytes)")
    if wide_bom(data) is None and b"\x00" in data:
        first = data.index(b"\x00")
        line = data.count(b"\n", 0, first) + 1
        # a TRF's fields are columns: a NUL becomes a space, so the row keeps them (removed, the
        # rating moved into the next column and a player's games were read as unplayed)
        fixed_columns = source.suffix != ".pgn"
        nul_issue = _nul_issue(data.count(b"\x00"), line, data[max(0, first - 200) : first + 200], fixed_columns)
        data = data.replace(b"\x00", b" " if fixed_columns else b"")
    if (
        source.suffix == ".pgn"
        and wide_bom(data) is None
        and not data.startswith(b"\xef\xbb\xbf")
        and b"\r" not in data
    ):
        # UTF-8 with LF line ends, most likely: the reader checks the bytes as it reads them, and
        # the text is decoded only if they are not UTF-8 after all
        from elopipe.read.pgn.reader import NotUtf8

        try:
            return _read(source, data, "pgn", None, "utf-8", "LF" if b"\n" in data else None, nul_issue, run)
        except NotUtf8:
            pass
    dec = decode_bytes(data)
    fmt = detect_format(source.suffix, dec.text)
    if fmt == "unknown":
        return ParsedSource(
            source, digest, len(data), fmt, dec.encoding, dec.newline, None, "neither PGN nor TRF content"
        )
    return _read(source, data, fmt, dec.text, dec.encoding, dec.newline, nul_issue, run)


def _read(
    source: Source,
    data: bytes,
    fmt: str,
    text: str | None,
    encoding: str,
    newline: str | None,
    nul_issue: IngestIssue | None,
    run: _Run,
) -> ParsedSource:
    """Read `text` (None: the undecoded bytes `data`, PGN only) with the reader of `fmt`. A reader
    bug is recorded as a rejected file; raises pgn_reader.NotUtf8 only when `text` is None."""
    # only the PGN reader raises NotUtf8; a TRF never imports it (its tables cost 0.2 CPU-s)
    not_utf8: tuple[type[Exception], ...] = ()
    try:
        if fmt == "pgn":
            from elopipe.read.pgn.reader import NotUtf8, read_pgn

            not_utf8 = (NotUtf8,)
            # the file's bytes are the text's UTF-8 when it was UTF-8 with LF line ends: no re-encoding
            same = text is None or (encoding == "utf-8" and newline in ("LF", None))
            parsed = read_pgn(
                text,
                validate_moves=run.validate_moves,
                source_name=source.display,
                workers=run.workers,
                utf8=data if same else None,
                executor=run.executor,
                spread=run.spread,
            )
        else:
            from elopipe.read.trf.reader import read_trf

            parsed = read_trf(text or "", source_name=source.display)
    except not_utf8:
        raise
    except Exception as exc:  # a reader bug must not lose the file: record it as rejected
        return ParsedSource(source, None, len(data), fmt, encoding, newline, None, f"reader failed: {exc!r}")
    if nul_issue is not None:
        parsed.issues.insert(0, nul_issue)
    if not isinstance(parsed.games, GameTable):
        # the games as the frame the loader inserts, built with the other files' of the batch by the
        # loader (`build_frames`: a frame per file cost a TRF month 0.3 CPU-s more), or in the parser
        # process when the table is pickled to leave it
        parsed.games = records_table(list(parsed.games))
    return ParsedSource(source, None, len(data), fmt, encoding, newline, parsed, parsed.rejected_reason)


def _looks_binary(data: bytes) -> bool:
    return too_many_controls(len(data.translate(None, streaming.NOT_CONTROL)), len(data))


def too_many_controls(n_control: int, size: int) -> bool:
    """More than 1% control bytes (at least 16): an image, an archive, a database, not a text file.
    A few stray NULs in a text file are removed with a warning instead."""
    return n_control > max(16, size // 100)


def _nul_issue(n_nul: int, line: int, excerpt: bytes, as_spaces: bool = False) -> IngestIssue:
    """The warning for NUL bytes removed (`as_spaces`: each replaced by a space, so that a TRF's
    columns stay in place) before reading; `excerpt`: the bytes around the first."""
    done = "replaced by spaces" if as_spaces else "removed"
    return IngestIssue(
        "nul_bytes_removed", f"{n_nul} NUL byte(s) {done} before reading (first on line {line})",
        line=line, severity="warning", raw=excerpt.decode("latin-1"),
    )  # fmt: skip


def unreadable(source: Source, reason: object) -> ParsedSource:
    """The result of a source whose bytes could not be read: recorded (rejected) with `reason`, in
    plain words (`read_error_words`); one gone meanwhile (FileNotFoundError) has the reason `GONE`."""
    why = GONE if isinstance(reason, FileNotFoundError) else f"cannot read file: {read_error_words(reason)}"
    return ParsedSource(source, None, source_size(source), "unknown", None, None, None, why)


def read_error_words(reason: object) -> str:
    """What went wrong reading a file, in an officer's words: Python's and the decompressors'
    messages ("Not a gzipped file (b'no')", "[Errno 13] Permission denied: '/x'") are not his."""
    if isinstance(reason, gzip.BadGzipFile):
        return "not a gzip file, though its name ends in .gz"
    if isinstance(reason, ZipEndError):  # its message is the reason, in plain words already
        return str(reason)
    if isinstance(reason, zipfile.BadZipFile):
        return "not a zip archive, or a damaged one"
    if isinstance(reason, zlib.error):  # "Error -3 while decompressing data: invalid bit length repeat"
        return "its compressed data is damaged (it cannot be decompressed)"
    if isinstance(reason, EOFError):
        return "the compressed file is cut short before anything could be read"
    if isinstance(reason, OSError) and reason.strerror:  # the file's path is named beside the reason
        return reason.strerror[0].lower() + reason.strerror[1:]
    if isinstance(reason, OSError) and "invalid data stream" in str(reason).lower():  # bz2
        return "not a bzip2 file, though its name ends in .bz2"
    return str(reason)


def source_size(source: Source) -> int:
    """The size of a source that could not be read: of an archive member, its size decompressed
    as the archive's directory gives it (the archive's own size was recorded); else the file's
    size on disk (of a .gz or .bz2, compressed: nothing tells its size decompressed). 0 when even
    that cannot be read."""
    try:
        if source.member is not None:
            return source.member_size()
        return os.path.getsize(source.path)
    except (OSError, zipfile.BadZipFile, ValueError, SourceError):
        return 0
