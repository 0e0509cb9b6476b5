"""Finding the files to ingest: folders (recursive), single files, and .gz/.bz2/.zip archives.

A `Source` is one stream of bytes with a stable name: a plain file, or one member of an archive
(`member` set). Reading the bytes is deferred so discovery stays cheap for large folders.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import os
import stat
import zipfile
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, BinaryIO

from elopipe.read.zips import open_zip
from elopipe.runtime.errors import ElopipeError, first_line
from elopipe.runtime.settings import env_bytes

CHESS_SUFFIXES = {".pgn", ".trf", ".txt"}
# Largest stream read into memory (decompressed). A FIDE month of PGN is about 120 MB; the cap
# keeps a mistaken drop (a disk image, a decompression bomb) from exhausting memory.
MAX_BYTES = env_bytes("ELOPIPE_MAX_FILE_BYTES", 512 * 1024 * 1024)
BLOCK_BYTES = 8 * 1024 * 1024  # decompressed bytes read at a time (`Source.blocks`)


class SourceError(ElopipeError):
    """A source that cannot be read as a whole, stable file (too large, not a regular file, changed
    while read). The message says why; the caller records the file as rejected."""


ARCHIVE_SUFFIXES = {".gz", ".bz2", ".zip"}


def text_path(path: str) -> str:
    """A path as valid text: a file name that is not UTF-8 (os gives its bytes as surrogates,
    which DuckDB, JSON and a terminal refuse) has those bytes written as \\xNN. Used for every path
    that is stored or shown; the file itself is opened by its real name."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_text(path: str) -> bool:
    """False for a path that is not valid UTF-8 (a name os gives with surrogates)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_BYTES_PARAM = "elopipe-path-bytes:"


def path_param(path: str | os.PathLike[str]) -> str:
    """`path` as a flow parameter: Prefect sends parameters as JSON, which cannot carry a file
    name that is not UTF-8 (os gives its bytes as surrogates); such a name travels as its bytes
    in hex. `path_from_param` gives the path back."""
    text = os.fspath(path)
    return text if is_text(text) else _BYTES_PARAM + os.fsencode(text).hex()


def path_from_param(param: str) -> str:
    """The path that `path_param` wrote."""
    if param.startswith(_BYTES_PARAM):
        return os.fsdecode(bytes.fromhex(param[len(_BYTES_PARAM) :]))
    return param


@dataclass(frozen=True)
class Source:
    """One file, or one member of an archive. `path` is absolute. `resolved`: `discover` resolved
    `path` (no symbolic link in it), so the file read must be the one at that very path.

    A zip member is the entry at `position` in the archive's directory (`ZipFile.infolist()`):
    a zip may hold two entries of one name, and each is read. `member` is the member as stored and
    shown: its name, and for the second and later entries of a name `NAME (member N)`, N its
    1-based position; `member_name` is its name in the archive."""

    path: str
    member: str | None = None
    position: int | None = None
    name_in_archive: str | None = field(default=None, compare=False)
    resolved: bool = field(default=False, compare=False)

    @property
    def member_name(self) -> str | None:
        """The member's name in the archive (None for a plain file)."""
        return self.name_in_archive or self.member

    @property
    def display(self) -> str:
        """The name shown and stored: `path` (or `path!member`) as text (see `text_path`)."""
        return f"{self.stored_path}!{self.member}" if self.member else self.stored_path

    @property
    def stored_path(self) -> str:
        """`path` as the store keeps it (`text_path`)."""
        return text_path(self.path)

    @property
    def suffix(self) -> str:
        """The suffix that decides the format: of the member, or of the path without .gz/.bz2."""
        name = self.member_name or self.path
        p = Path(name)
        if not self.member and p.suffix.lower() in {".gz", ".bz2"}:
            p = p.with_suffix("")
        return p.suffix.lower()

    @property
    def compressed(self) -> bool:
        """Whether the bytes are read through a decompressor (.gz, .bz2, a zip member): a stream
        that cannot be entered in the middle."""
        return self.member is not None or self.path.lower().endswith((".gz", ".bz2"))

    def read_bytes(self, limit: int | None = None) -> bytes:
        """The decompressed bytes, at most `limit` (default MAX_BYTES). Raises OSError,
        zipfile.BadZipFile, EOFError or gzip.BadGzipFile for unreadable files, SourceError for a
        stream over the limit, a non-regular file (FIFO, device) or a file that changed while it
        was read; the caller records those as rejected."""
        return b"".join(self.blocks(limit))

    def blocks(self, limit: int | None = None, block_size: int | None = None) -> Generator[bytes, None, None]:
        """The decompressed bytes in consecutive blocks of `block_size` (default BLOCK_BYTES; the
        last one shorter), so that a large file or a decompression bomb is never held whole. The
        cap `limit` (default MAX_BYTES) applies to the decompressed stream as it is read. Raises
        as `read_bytes` does, SourceError when the stream passes the limit (after the blocks
        before it were yielded) or when the file changed once the last block was read."""
        limit = MAX_BYTES if limit is None else limit
        block_size = BLOCK_BYTES if block_size is None else block_size
        with self._open() as (fh, before):
            total = 0
            while True:
                block = _read_block(fh, min(block_size, limit + 1 - total), self.compressed)
                total += len(block)
                if total > limit:
                    raise SourceError(f"larger than {limit:,} bytes (set ELOPIPE_MAX_FILE_BYTES to raise the limit)")
                if isinstance(block, TrailingBlock):  # (an empty one too: it ends the stream)
                    if not total:  # no gzip stream at all: not a gzip file
                        raise gzip.BadGzipFile(block.why)
                    yield block
                    break
                if not block:
                    break
                yield block
                if isinstance(block, _CutBlock):
                    raise EOFError(block.why)
        after = os.stat(self.path)
        if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns):
            raise SourceError("the file changed while it was being read; ingest it again once it is complete")

    @contextmanager
    def _open(self) -> Iterator[tuple[IO[bytes] | gzip.GzipFile | bz2.BZ2File, os.stat_result]]:
        """The decompressed stream of the file or archive member, and the file's status once
        opened. Only a regular file is opened (`open_regular`)."""
        lower = self.path.lower()
        with open_regular(self.path, resolved=self.resolved) as raw:
            before = os.fstat(raw.fileno())
            if self.member is not None:
                with open_zip(raw) as zf, _open_member(zf, self._entry(zf)) as fh:
                    yield fh, before
            elif lower.endswith(".gz"):
                with gzip.open(raw, "rb") as fh:
                    yield fh, before
            elif lower.endswith(".bz2"):
                with bz2.open(raw, "rb") as fh:
                    yield fh, before
            else:
                yield raw, before

    def member_size(self) -> int:
        """The archive member's size decompressed, as the archive's directory gives it (what a
        member that cannot be read is recorded with). Raises as `blocks` does."""
        with open_regular(self.path, resolved=self.resolved) as raw, open_zip(raw) as zf:
            return self._entry(zf).file_size

    def _entry(self, zf: zipfile.ZipFile) -> zipfile.ZipInfo:
        """The member's entry: the one at `position` when it still has the member's name, else the
        entry of that name. Raises SourceError when the archive no longer holds it."""
        entries = zf.infolist()
        name = self.member_name or ""
        if self.position is not None and self.position < len(entries) and entries[self.position].filename == name:
            return entries[self.position]
        try:  # the archive changed since it was listed: by name
            return zf.getinfo(name)
        except KeyError:  # not a read error callers know: it escaped `parse_source` and stopped the ingest
            raise SourceError(
                "the archive changed while it was being read (this member is no longer in it); ingest it again"
                " once it is complete"
            ) from None


def _open_member(zf: zipfile.ZipFile, entry: zipfile.ZipInfo) -> IO[bytes]:
    """The member's decompressed stream. Raises SourceError for a member that cannot be read
    without a password (encrypted) or with a compression method Python lacks: zipfile raises
    RuntimeError and NotImplementedError there, which stopped the whole ingest."""
    if entry.flag_bits & 0x1:
        raise SourceError("the archive member is encrypted: it cannot be read without its password")
    try:
        return zf.open(entry)
    except NotImplementedError as exc:
        raise SourceError(f"the archive member cannot be read: {first_line(exc, 'unsupported compression')}") from None


def open_regular(path: str | os.PathLike[str], resolved: bool = False) -> BinaryIO:
    """Open `path` for reading in binary, only if it is a regular file and not a symbolic link.

    Raises SourceError for a folder, a FIFO, a socket or a device (opened without blocking and
    checked on the open descriptor, so nothing can be swapped in between a check and the open: a
    FIFO would otherwise hang the reader), or a symbolic link (a named link is resolved by
    `discover` before it gets here; one swapped in later is not followed). With `resolved` (a
    path `discover` resolved), the file opened must be the one at that very path: a folder of it
    swapped for a symbolic link during an ingest is refused too. OSError for the rest.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SourceError("a symbolic link (not followed)") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise SourceError("a folder that could not be listed (permissions?)")
        if not stat.S_ISREG(mode):
            raise SourceError("not a regular file (a pipe, a socket or a device)")
        if resolved and _opened_path(fd) not in (None, os.path.abspath(path)):
            raise SourceError("the path changed while it was read (a folder replaced by a symbolic link?)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _opened_path(fd: int) -> str | None:
    """The path the kernel gives for an open descriptor (Linux), None where it cannot say."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


NOT_CHESS_SUFFIX = "not a chess file suffix"


@dataclass
class Discovery:
    sources: list[Source]
    skipped: list[tuple[str, str]]  # (path, why) entries seen in folders and not read
    missing: list[str]  # paths given that do not exist

    @property
    def refused(self) -> list[tuple[str, str]]:
        """The skipped entries to tell the user about one by one: symbolic links and entries that
        are not regular files (the rest were passed over for their suffix)."""
        return refused(self.skipped)


def refused(skipped: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (path, why) pairs of `skipped` that were not passed over for their suffix."""
    return [(path, why) for path, why in skipped if not why.startswith(NOT_CHESS_SUFFIX)]


def discover(paths: list[str | os.PathLike[str]]) -> Discovery:
    """Expand `paths` into sources, in a stable (sorted) order.

    Folders are walked recursively; inside them only chess suffixes (.pgn .trf .txt) and archives
    (.gz .bz2 .zip) are taken, other files are listed in `skipped` with the reason. Inside a
    folder, symbolic links (to files or folders) and entries that are not regular files (FIFOs,
    sockets, devices) are never opened: they are listed in `skipped` too, so a link dropped in an
    inbox cannot pull another file of the machine into the store. A path named explicitly is
    always taken, a named symbolic link followed (its format is then detected by content). Zip
    members are expanded here (a corrupt zip, or one cut short or with data before or after the
    archive (`elopipe.read.zips`), becomes one source that fails when read).
    """
    out: list[Source] = []
    skipped: list[tuple[str, str]] = []
    missing: list[str] = []
    for raw in paths:
        p = Path(raw).expanduser()
        if not p.exists():
            missing.append(str(raw))
            continue
        if p.is_dir():
            for f in _walk(p, skipped):
                suf = f.suffix.lower()
                if suf in CHESS_SUFFIXES or suf in ARCHIVE_SUFFIXES or f.is_dir():
                    out.extend(_expand(f))  # unreadable folders come back as sources that fail on read
                else:
                    skipped.append((str(f.absolute()), f"{NOT_CHESS_SUFFIX} ({suf or 'none'})"))
        else:
            out.extend(_expand(p))
    return Discovery(out, skipped, missing)


def _walk(top: Path, skipped: list[tuple[str, str]]) -> list[Path]:
    """Every regular file below `top` (dot files and dot folders left out), sorted; folders that
    cannot be listed are returned too (they fail when read, so they are recorded rather than
    silently passed over). Symbolic links and other non-regular entries go to `skipped`."""
    found: list[Path] = []

    def unreadable(err: OSError) -> None:
        if err.filename:
            found.append(Path(err.filename))

    if _is_output(top):
        skipped.append((str(top.absolute()), OUTPUT_FOLDER))
        return found
    for root, dirs, files in os.walk(top, onerror=unreadable, followlinks=False):
        outputs = {d for d in dirs if _is_output(Path(root) / d)}
        skipped.extend((str((Path(root) / d).absolute()), OUTPUT_FOLDER) for d in sorted(outputs))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in outputs)
        for name in dirs:  # os.walk lists a linked folder here but never goes into it
            why = not_regular(Path(root) / name)
            if why is not None:
                skipped.append((str((Path(root) / name).absolute()), _in_folder(why)))
        for name in files:
            if name.startswith("."):
                continue
            f = Path(root) / name
            why = not_regular(f)
            if why is None:
                found.append(f)
            else:
                skipped.append((str(f.absolute()), _in_folder(why)))
    return sorted(set(found))


#: the mark of a folder elopipe publishes into (`elopipe.publish.manifest` writes it): never read
#: as input, so that `run DIR --out DIR/out` does not read its own lists back on the next run
OUTPUT_MARK = ".elopipe-manifest.json"
OUTPUT_FOLDER = f"elopipe's output folder (it holds {OUTPUT_MARK}), not read as input"


def _is_output(folder: Path) -> bool:
    """`folder` holds `OUTPUT_MARK`. A folder that cannot be searched is no output folder: it is
    listed (and recorded as unreadable) like any other; the check's PermissionError stopped the
    whole ingest."""
    try:
        return (folder / OUTPUT_MARK).is_file()
    except OSError:
        return False


def _in_folder(why: str) -> str:
    if why == SYMLINK:
        return f"{SYMLINK}, not followed inside a folder (name it on the command line to read it)"
    return why


SYMLINK = "a symbolic link"
# The reason of a source found, then gone when it was read (another process moved or deleted it):
# no rejection of the user's file (elopipe.ingest.ledger skips it, recording nothing)
GONE = "gone before it was read (moved or deleted meanwhile)"


def not_regular(f: Path) -> str | None:
    """Why a folder entry (or an inbox entry) is not read (`SYMLINK`, or a FIFO, a socket or a
    device), or None for a regular file or a real folder. Looked at without following links and
    without opening."""
    try:
        mode = os.lstat(f).st_mode
    except OSError:
        return None  # vanished or unreadable: the read records it
    if stat.S_ISLNK(mode):
        return SYMLINK
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return "not a regular file (a pipe, a socket or a device)"


def _expand(p: Path) -> list[Source]:
    path = str(p.absolute()) if p.is_symlink() and not p.exists() else str(p.resolve())
    if p.suffix.lower() == ".zip":
        try:
            with open_regular(path, resolved=True) as fh, open_zip(fh) as zf:
                entries = [(i.filename, pos) for pos, i in enumerate(zf.infolist()) if not i.is_dir()]
        except (zipfile.BadZipFile, OSError, SourceError):
            # fails on read and is recorded as rejected: a zip cut short, whose last 64 KiB may hold
            # the end record of a zip stored inside it, too (`open_zip`), none of its members read
            return [Source(path, resolved=True)]
        out: list[Source] = []
        seen: set[str] = set()
        for name, pos in entries:  # in the archive's order, so the first of a name keeps it plain
            if not Path(name).name.startswith("."):
                label = name if name not in seen else f"{name} (member {pos + 1})"
                seen.add(name)
                out.append(Source(path, label, pos, name, resolved=True))
        return sorted(out, key=lambda s: (s.member_name or "", s.position or 0))
    return [Source(path, resolved=True)]


class TrailingBlock(bytes):
    """The last bytes of a gzip file's stream(s), after which come bytes that start no other stream
    (`why`: gzip's words); `Source.blocks` ends with it, and the reader says the rest was left out.
    As the first block (no stream at all), the file is no gzip file and `blocks` raises."""

    why: str


class _CutBlock(bytes):
    """The last bytes a compressed stream gave before it ended without its end marker (`why`)."""

    why: str


def _read_block(fh: IO[bytes] | gzip.GzipFile | bz2.BZ2File, n: int, compressed: bool) -> bytes:
    """Up to `n` bytes of `fh`. A decompressor is read a buffer at a time (read1), so that a
    stream cut short (a download that stopped) gives every byte before the cut, as a `_CutBlock`
    (empty when none), instead of an EOFError that loses the bytes of the block it was filling."""
    if not compressed:
        return fh.read(n)
    read1 = getattr(fh, "read1", fh.read)  # every decompressor has read1
    buf = bytearray()
    while len(buf) < n:
        try:
            chunk = read1(n - len(buf))
        except EOFError as exc:
            cut = _CutBlock(bytes(buf))
            cut.why = str(exc)
            if not cut:
                raise
            return cut
        except gzip.BadGzipFile as exc:
            # after a whole stream, bytes that start no other one: gzip reads them as a next
            # member and refuses the file, though every byte of the stream was read
            if not str(exc).startswith("Not a gzipped file"):
                raise
            trailing = TrailingBlock(bytes(buf))
            trailing.why = str(exc)
            return trailing
        if not chunk:
            break
        buf += chunk
    return bytes(buf)
