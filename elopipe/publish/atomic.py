"""Published files appear whole or not at all.

Every file `elopipe.publish` writes goes first to a hidden temporary name in the same folder
(`.<name>.elopipe-tmp-<pid>`), is flushed to disk (fsync), and only then renamed over its final
name (`os.replace`, atomic on one file system). A `kill -9` or a full disk therefore leaves
either the previous file or the new one under the final name, never a truncated one; at worst a
temporary file is left, which `remove_stale` deletes on the next publish. A write that fails
raises `WriteError`, whose text names the file and the reason, for the user's terminal.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

import polars as pl

from elopipe.runtime.errors import ElopipeError, first_line
from elopipe.runtime.lifeline import alive

TMP_MARK = ".elopipe-tmp-"


class Recorder(Protocol):
    """What `write_bytes` asks before writing (elopipe.publish.manifest.Manifest)."""

    def relative(self, path: Path) -> str | None:
        """`path`'s name in the recorded folder; None when it is not recorded."""

    def write(self, path: Path, data: bytes, rel: str, durable: bool = True) -> bool:
        """Write `data` to `path` unless it holds it already; True when written."""


# The output folder's manifest while one is recording (elopipe.publish.manifest.recording)
RECORDER: ContextVar[Recorder | None] = ContextVar("elopipe_manifest", default=None)


class WriteError(ElopipeError, OSError):
    """A published file could not be written (disk full, no permission, ...); `str()` is one
    line naming the file and the reason, and `errno` is the original one when known."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(errno, message)

    def __str__(self) -> str:
        return str(self.strerror)


def describe(exc: BaseException) -> str:
    """One line for the user about a failed write: the reason and, when known, the file."""
    if isinstance(exc, WriteError):
        return str(exc)
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        return f"{reason}: {exc.filename}" if exc.filename else reason
    return str(exc)


def _tmp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}{TMP_MARK}{os.getpid()}")


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], durable: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to `path` for a writer to fill; when the block ends without
    an error, flush it to disk (unless not `durable`: then a kill still cannot leave it half
    written, only a power cut might) and rename it to `path`. On any error (OSError such as ENOSPC,
    KeyboardInterrupt, ...) the temporary file is removed and the error re-raised: `path` keeps
    its previous content, or stays absent."""
    final = Path(path)
    tmp = _tmp_name(final)
    try:
        yield tmp
        if durable:
            _fsync(tmp)
        os.replace(tmp, final)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        # Polars reports a full disk as OSError without errno, or for Parquet as ComputeError.
        if isinstance(exc, (OSError, pl.exceptions.PolarsError)) and not isinstance(exc, WriteError):
            reason, code = _reason(exc)
            raise WriteError(f"cannot write {final}: {reason}", code) from exc
        raise


# Rust's io::Error as Polars shows it: "Read-only file system (os error 30): /the/temporary/name"
_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_WORDS = {errno.EROFS: "the folder is on a read-only file system", errno.EACCES: "permission denied"}


def _reason(exc: BaseException) -> tuple[str, int | None]:
    """The reason a write failed, in elopipe's words (never the temporary file's name), and its
    errno when known."""
    code = getattr(exc, "errno", None)
    if code is None and (found := _RUST_OS_ERROR.search(str(exc))):
        code = int(found.group(1))
    if code is not None:
        return _WORDS.get(code, os.strerror(code)), code
    strerror = exc.strerror if isinstance(exc, OSError) else None
    return strerror or first_line(exc), None


def write_bytes(path: str | os.PathLike[str], data: bytes, durable: bool = True) -> Path:
    """Write `data` to `path` atomically (see `replacing`); return `path` as a Path. While an
    output folder's manifest is recording (`elopipe.publish.manifest.recording`), a file under
    it that already holds `data` is left untouched."""
    final = Path(path)
    manifest = RECORDER.get()
    rel = manifest.relative(final) if manifest is not None else None
    if manifest is not None and rel is not None:
        manifest.write(final, data, rel, durable)
    else:
        write_unrecorded(final, data, durable)
    return final


def write_unrecorded(path: Path, data: bytes, durable: bool = True) -> None:
    """Write `data` to `path` atomically, whatever a manifest holds (see `replacing`)."""
    with replacing(path, durable) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | os.PathLike[str], text: str, durable: bool = True) -> Path:
    """Write `text` in UTF-8 to `path` atomically (see `replacing`); return `path` as a Path."""
    return write_bytes(path, text.encode("utf-8"), durable)


def remove_stale(folders: list[Path]) -> int:
    """Delete the temporary files an interrupted publish left in `folders` (not recursive): those
    of a process that no longer runs, or of this one. Returns how many were deleted."""
    n = 0
    for folder in folders:
        for tmp in folder.glob(f".*{TMP_MARK}*"):
            # only a name `_tmp_name` gives, a regular file: `.notes.elopipe-tmp-abc` is the user's
            pid = tmp.name.rsplit(TMP_MARK, 1)[1]
            if not (pid.isascii() and pid.isdigit()) or not tmp.is_file() or tmp.is_symlink():
                continue
            if int(pid) != os.getpid() and alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                tmp.unlink()
                n += 1
    return n
