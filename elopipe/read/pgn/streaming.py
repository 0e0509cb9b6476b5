"""Reading a large PGN file in pieces, so that memory does not grow with the file (issue 12).

A file of at most `STREAM_BYTES` (decompressed) and `STREAM_GAMES` games is read whole, as
before. A larger one is read twice as a stream, never whole:

1. `scan`: the facts the reader needs about the whole file before it reads a game: sha256, size,
   control and NUL bytes (binary or not, the NUL warning), line ends, whether the bytes are UTF-8
   and whether they show signs of mojibake (`text_prep.mojibake_hint`), which decide how every
   game is read;
2. `pieces`: the text again, cut into pieces of about `CHUNK_BYTES` where a game starts, decoded
   as the whole file would be (`textio.decode_bytes`), for `pgn_reader.read_pgn_chunks`.

The result is the one a whole read gives (tests/read/pgn/test_streaming.py compares them).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from elopipe.read.execution import Executor, Pending, submit
from elopipe.read.pgn.text_prep import mojibake_hint, mojibake_hint_single_byte
from elopipe.read.sources import BLOCK_BYTES, Source, SourceError
from elopipe.read.textio import CP1252_HOLES, wide_bom
from elopipe.runtime.settings import env_bytes

# Decompressed bytes of one piece.
CHUNK_BYTES = env_bytes("ELOPIPE_CHUNK_BYTES", 16 * 1024 * 1024)
# A file of at most this size is read whole: the two passes of a stream cost about a sixth more
# time (bench/ingest.py: 0.59 of python-chess instead of 0.70 on 110 MB), and a whole read of
# 128 MiB peaks near 1 GB, under the 1.5 GB a file may take.
STREAM_BYTES = env_bytes("ELOPIPE_STREAM_BYTES", 128 * 1024 * 1024)
# ... and of at most this many games: a whole read takes about 5 KB a game, whatever its bytes, so
# 128 MiB of games without moves (a results export: 370,000 games) would need 2 GB and more. The
# games are counted on the decompressed stream as it is read (a compressed file's size on disk
# tells nothing of them); the bench/ingest.py file (about 105,000 games) is still read whole.
STREAM_GAMES = 150_000

# C0 control bytes that text files do not contain (tab, LF, FF, CR and Ctrl-Z/EOF are text).
CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 26))
NOT_CONTROL = bytes(b for b in range(256) if b not in CONTROL)
# the bytes CP1252 leaves undefined: a file holding one is decoded as Latin-1 (textio)
_NOT_HOLES = bytes(b for b in range(256) if b not in CP1252_HOLES)
_BOM = b"\xef\xbb\xbf"
# a game's first tag line; a piece starts at one that follows a blank line (see `find_cut`)
_EVENT = b'\n[Event "'
_LOOK_BACK = 4096  # bytes searched back for the line before that blank line
CHANGED = "the file changed while it was being read; ingest it again once it is complete"


@dataclass
class Scan:
    """What `scan` found in the decompressed bytes. Counts of line ends are taken after NUL
    bytes are removed (as the reader sees the text); `head` is the first 4 bytes as they are."""

    sha256: str = ""
    size: int = 0
    n_control: int = 0  # C0 control bytes (`CONTROL`), NUL included
    n_nul: int = 0
    nul_line: int | None = None  # 1-based line of the first NUL
    nul_excerpt: bytes = b""  # 200 bytes either side of the first NUL
    n_lf: int = 0
    n_cr: int = 0
    n_crlf: int = 0
    utf8: bool = True  # every byte (NULs removed) is UTF-8
    holes: bool = False  # a byte CP1252 leaves undefined
    hint_utf8: bool = False  # `mojibake_hint` of the bytes as UTF-8
    hint_single_byte: bool = False  # the same of the bytes decoded as CP1252 or Latin-1
    blank: bool = True  # only whitespace
    head: bytes = b""
    stat: tuple[int, int] = (0, 0)  # the file's size and mtime (ns) when the scan started
    bom: bool = False  # a UTF-8 BOM starts the bytes (NULs removed)
    # where `find_cut` cuts the bytes into pieces, when asked (`scan(cut_bytes=...)`): (byte
    # offset of a piece's start, newlines before it), the first piece (0, 0) left out
    cuts: list[tuple[int, int]] = field(default_factory=list, repr=False)
    _tail: bytes = field(default=b"", repr=False)  # the end of the last block (NUL excerpt)
    _excerpt_rest: int = field(default=0, repr=False)  # bytes the NUL excerpt still needs

    @property
    def encoding(self) -> str | None:
        """The encoding `textio.decode_bytes` would choose, or None when the file is not read
        in pieces: UTF-16/32 (a wide BOM) or a lone CR line end (CR-only or mixed files)."""
        if wide_bom(self.head) is not None or self.n_cr != self.n_crlf:
            return None
        if self.utf8:
            return "utf-8-sig" if self.bom else "utf-8"
        return "latin-1" if self.holes else "cp1252"

    @property
    def hint(self) -> bool:
        """`mojibake_hint` of the whole text as the reader sees it, in `encoding`."""
        enc = self.encoding
        return self.hint_utf8 if enc is None or enc.startswith("utf-8") else self.hint_single_byte

    @property
    def newline(self) -> str | None:
        """'LF', 'CRLF', 'mixed' or None, as `textio.detect_newline` says of the decoded text."""
        lf = self.n_lf - self.n_crlf
        kinds = [k for k, n in (("CRLF", self.n_crlf), ("LF", lf)) if n]
        if not kinds:
            return None
        return kinds[0] if len(kinds) == 1 else "mixed"


def line_blocks(source: Source) -> Iterator[bytes]:
    """The decompressed bytes in blocks that end at a line end (the last one maybe not). Raises
    as `Source.blocks` does."""
    carry = b""
    for block in source.blocks():
        if carry:
            block = carry + block
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            carry = block
            continue
        carry = block[cut:]
        yield block[:cut] if carry else block
    if carry:
        yield carry


def scan(source: Source, cut_bytes: int | None = None, executor: Executor | None = None) -> Scan:
    """One pass over the decompressed bytes (see `Scan`); with `cut_bytes`, also where to cut
    them into pieces of at most about that many bytes (`Scan.cuts`: where `find_cut` finds a
    game start). `executor`: where the blocks are hashed (None: here). Raises as `Source.blocks` does."""
    st = os.stat(source.path)
    sc = Scan(stat=(st.st_size, st.st_mtime_ns))
    cutter = _Cutter(sc.cuts, cut_bytes) if cut_bytes is not None else None
    digest = hashlib.sha256()
    hashing: Pending[None] | None = None
    stripped = 0  # bytes seen with NULs removed
    for block in line_blocks(source):
        # hashlib releases the GIL: a block is hashed while it is checked (blocks in order)
        if hashing is not None:
            hashing.result()
        hashing = submit(executor, digest.update, block)
        if cutter is not None:
            cutter.feed(block)
        if not sc.head:
            sc.head = block[:4]
        if sc._excerpt_rest:
            sc.nul_excerpt += block[: sc._excerpt_rest]
            sc._excerpt_rest = max(0, sc._excerpt_rest - len(block))
        sc.size += len(block)
        sc.n_control += len(block.translate(None, NOT_CONTROL))
        tail = block[-200:]
        sc.blank = sc.blank and block.isspace()
        if b"\x00" in block:
            block = _nul_block(sc, block)
        sc._tail = tail
        if stripped == 0:
            sc.bom = block.startswith(_BOM)
        stripped += len(block)
        sc.n_lf += block.count(b"\n")
        if b"\r" in block:
            sc.n_cr += block.count(b"\r")
            sc.n_crlf += block.count(b"\r\n")
        if not block.isascii():
            _non_ascii_block(sc, block)
    if hashing is not None:
        hashing.result()
    sc.sha256 = digest.hexdigest()
    if not sc.utf8:
        _single_byte_facts(source, sc)
    return sc


class _Cutter:
    """Where to cut a file into pieces of at most about `size` bytes, found as the bytes go by:
    `cuts` gets (offset, newlines before) of each piece but the first. The one loop that finds
    cut points, for `scan` (offsets only) and `pieces` (`keep`: `feed` returns the bytes of each
    piece it completes, `rest` the last piece's)."""

    def __init__(self, cuts: list[tuple[int, int]], size: int, keep: bool = False) -> None:
        self.cuts, self.size, self.want, self.keep = cuts, size, size, keep
        self.parts: list[bytes] = []
        self.n = 0  # bytes in `parts`
        self.offset = 0  # of `parts` in the stream
        self.lines = 0  # newlines before `offset`

    def feed(self, block: bytes) -> list[bytes]:
        self.parts.append(block)
        self.n += len(block)
        if self.n < self.want:
            return []
        data = b"".join(self.parts)
        pos = 0  # where the current piece starts in `data`
        done: list[bytes] = []
        # a block may hold many pieces: each ends at the last game start within `want` bytes
        while len(data) - pos >= self.want:
            cut = find_cut(data, pos, pos + self.want)
            if cut is None:
                self.want *= 2  # no game starts in this piece yet: let it grow
                continue
            self.lines += data.count(b"\n", pos, cut)
            self.cuts.append((self.offset + cut, self.lines))
            if self.keep:
                done.append(data[pos:cut])
            pos, self.want = cut, self.size
        self.offset += pos
        self.parts, self.n = [data[pos:] if pos else data], len(data) - pos
        return done

    def rest(self) -> bytes:
        """The bytes after the last cut."""
        return b"".join(self.parts)


def _nul_block(sc: Scan, block: bytes) -> bytes:
    """Count the NULs of `block` (of the first: its line and excerpt); the block without them."""
    if sc.nul_line is None:
        first = block.index(b"\x00")
        sc.nul_line = sc.n_lf + block.count(b"\n", 0, first) + 1
        sc.nul_excerpt = (sc._tail + block[:first])[-200:] + block[first : first + 200]
        sc._excerpt_rest = max(0, first + 200 - len(block))
    sc.n_nul += block.count(b"\x00")
    return block.replace(b"\x00", b"")


def _non_ascii_block(sc: Scan, block: bytes) -> None:
    """The UTF-8 facts of a block with NULs removed (the single-byte ones wait for a file that
    turns out not to be UTF-8: `_single_byte_facts`)."""
    if not sc.utf8:
        return
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        sc.utf8 = False
        return
    sc.hint_utf8 = sc.hint_utf8 or mojibake_hint(block)


def _single_byte_facts(source: Source, sc: Scan) -> None:
    """`holes` and `hint_single_byte`, in another pass: only a file that is not UTF-8 needs them."""
    for block in line_blocks(source):
        if b"\x00" in block:
            block = block.replace(b"\x00", b"")
        if not block.isascii():
            sc.holes = sc.holes or len(block.translate(None, _NOT_HOLES)) > 0
            sc.hint_single_byte = sc.hint_single_byte or mojibake_hint_single_byte(block)


def find_cut(data: bytes, lo: int = 0, end: int | None = None) -> int | None:
    """The last place in `data[lo:end]` (not `lo`) where a piece may start: an `[Event "` tag at
    a line start, after a blank line, after a line that is not a tag line nor a `%` line. The reader
    starts a new game there whatever came before (a blank line before a tag section ends even an
    unclosed comment, and a line that is not a tag keeps it from joining the tag section before).
    None if there is no such place. The bytes before `lo` are looked at as the lines before."""
    end = len(data) if end is None else end
    while (i := data.rfind(_EVENT, lo, end)) > lo:
        end = i
        prev = data.rfind(b"\n", 0, i)
        if prev < 0 or data[prev + 1 : i].strip():
            continue  # no blank line before
        window = data[max(0, prev - _LOOK_BACK) : prev].rstrip()
        start = window.rfind(b"\n") + 1
        if start == 0 and prev > _LOOK_BACK:
            continue  # a line longer than the window: may be a long tag line
        line = window[start:].lstrip()
        if line and not line.startswith((b"[", b"%")):
            return i + 1
    return None


def pieces(
    source: Source, sc: Scan, errors: list[Exception], chunk_bytes: int | None = None
) -> Iterator[tuple[str | None, bytes | None]]:
    """The file in pieces of about `chunk_bytes` (default `CHUNK_BYTES`), each cut by
    `find_cut`, as (text, utf8) pairs for `pgn_reader.read_pgn_chunks`: (None, bytes) for UTF-8
    with LF line ends, else the text decoded with `sc.encoding` and CRLF turned into LF. NULs are
    removed. A piece grows until a cut is found (`_Cutter`: the loop `scan` cuts with). An error
    while reading (the file changed since `scan` started, ...) ends the pieces and is appended to
    `errors`."""
    size = CHUNK_BYTES if chunk_bytes is None else chunk_bytes
    encoding = sc.encoding
    cutter = _Cutter([], size, keep=True)
    first = True
    try:
        for block in source.blocks():
            if sc.n_nul:
                block = block.replace(b"\x00", b"")
            for piece in cutter.feed(block):
                yield _decode(piece, encoding, sc, first)
                first = False
        rest = cutter.rest()
        if rest:
            yield _decode(rest, encoding, sc, first)
        st = os.stat(source.path)
        if (st.st_size, st.st_mtime_ns) != sc.stat:  # since the scan: its facts are not this text's
            raise SourceError(CHANGED)
    except Exception as exc:  # noqa: BLE001 - reported by the caller as a file that cannot be read
        errors.append(exc)


def _decode(raw: bytes, encoding: str | None, sc: Scan, first: bool) -> tuple[str | None, bytes | None]:
    if encoding == "utf-8" and not sc.n_cr:
        return None, raw
    if encoding == "utf-8-sig":
        text = (raw[3:] if first else raw).decode("utf-8")
    else:
        text = raw.decode(encoding or "utf-8")
    return (text.replace("\r\n", "\n") if sc.n_cr else text), None


def read_range(source: Source, start: int, end: int, stat: tuple[int, int]) -> bytes:
    """Bytes [start, end) of the decompressed stream of `source`: a plain file is read from
    `start` on, a compressed stream (.gz, .bz2, a zip member) is decompressed from its start and
    the bytes before `start` dropped. `stat`: the file's (size, mtime in ns) when it was scanned
    (`Scan.stat`). Raises SourceError (`CHANGED`) when the file is not the one scanned or changed
    while read (or the stream ends before `end`), else as `Source.blocks` does."""
    want = end - start
    with source._open() as (fh, before):
        if (before.st_size, before.st_mtime_ns) != stat:
            raise SourceError(CHANGED)
        if not source.compressed:
            fh.seek(start)
        else:
            skip = start
            while skip and (block := fh.read(min(skip, BLOCK_BYTES))):
                skip -= len(block)
        parts: list[bytes] = []
        n = 0
        while n < want and (block := fh.read(want - n)):
            parts.append(block)
            n += len(block)
    after = os.stat(source.path)
    if n != want or (after.st_size, after.st_mtime_ns) != stat:
        raise SourceError(CHANGED)
    return b"".join(parts)
