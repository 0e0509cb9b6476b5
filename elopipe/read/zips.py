"""Opening a zip archive only when the archive is the whole file: every place that opens one
(discovery, reading a member, batching by member sizes, the watcher's "has it arrived?") goes
through `open_zip` or `zip_end_problem`.

Why: CPython's `zipfile` looks for the end-of-central-directory record ("end record") in the
last 64 KiB of a file and takes the last one it finds, wherever it ends, and reads the archive
as starting wherever that record's directory says (it supports data before an archive). A zip
cut short in its last 64 KiB whose last member is itself a zip (stored) then reads as that inner
archive: its members loaded, the real ones silently missing, and the watcher took the upload at
once as complete. Here the end record (with its comment, and the zip64 locator and record before
it when present) must end exactly at the file's last byte, and the central directory must start
where the record says, with no data before the archive.
"""

from __future__ import annotations

import os
import struct
import zipfile
from typing import IO

_END = b"PK\x05\x06"  # end of central directory record
_END_SIZE = 22
_END_FORMAT = "<4s4H2LH"  # signature, disk numbers, entry counts, directory size and offset, comment length
_LOCATOR64 = b"PK\x06\x07"
_LOCATOR64_SIZE = 20
_END64 = b"PK\x06\x06"
_END64_SIZE = 56
_END64_FORMAT = "<4sQ2H2L4Q"  # ..., entry counts, directory size, directory offset
_LOCAL_HEADER = b"PK\x03\x04"
_MAX_COMMENT = 0xFFFF  # so zipfile searches the last 64 KiB and the record's size

NOT_A_ZIP = "not a readable zip archive"
CUT = "the archive is cut short or has data after its end"
PREPENDED = (
    "bytes come before the archive's start (a self-extracting archive, or an archive cut short just after a zip"
    " stored inside it): not read; unpack it, or load the complete file"
)


class ZipEndError(zipfile.BadZipFile):
    """A zip whose end record does not close the file, or whose archive does not start at the
    file's first byte: never read as an archive. The message is the reason recorded, one line."""


def zip_end_problem(fh: IO[bytes]) -> str | None:
    """Why the zip in the seekable binary file `fh` is not an archive as it stands, in one line;
    None when its end record (comment included, zip64 records before it) ends at the file's last
    byte and its directory starts where the record says (nothing before the archive).

    The record judged is the one `zipfile` reads: a record without a comment in the last 22
    bytes, else the last end-record signature in the last 64 KiB and 22 bytes. A directory that
    the record places before the file's start is left to `zipfile` (it raises BadZipFile).
    Reads at most the last 64 KiB and 98 bytes; moves `fh`'s position."""
    size = fh.seek(0, os.SEEK_END)
    if size >= _END_SIZE:
        fh.seek(size - _END_SIZE)
        last = fh.read(_END_SIZE)
        if last[:4] == _END and last[-2:] == b"\0\0":  # zipfile's first look: no comment
            return _start_problem(fh, size - _END_SIZE, last)
    tail_start = max(0, size - _MAX_COMMENT - _END_SIZE)
    fh.seek(tail_start)
    tail = fh.read()
    at = tail.rfind(_END)
    if at < 0:
        fh.seek(0)
        if fh.read(4) == _LOCAL_HEADER:
            return f"{NOT_A_ZIP}: {CUT} (no zip end record in its last 64 KiB)"
        return NOT_A_ZIP
    record = tail[at : at + _END_SIZE]
    if len(record) < _END_SIZE:
        return f"{CUT}: its last zip end record is cut short"
    end = tail_start + at + _END_SIZE + struct.unpack(_END_FORMAT, record)[-1]
    if end < size:
        return f"{CUT}: {size - end:,} bytes follow its last zip end record (at byte {tail_start + at:,})"
    if end > size:
        return f"{CUT}: its zip end record's comment runs {end - size:,} bytes past the file's end"
    return _start_problem(fh, tail_start + at, record)


def _start_problem(fh: IO[bytes], at: int, record: bytes) -> str | None:
    """`PREPENDED` when the archive whose end record is `record`, at byte `at`, does not start at
    the file's first byte (zipfile's `concat`), else None. The zip64 end record is taken, as
    zipfile takes it, when its locator and itself lie just before the end record."""
    _, _, _, _, _, dir_size, dir_offset, _ = struct.unpack(_END_FORMAT, record)
    before = 0
    if at >= _LOCATOR64_SIZE:
        fh.seek(at - _LOCATOR64_SIZE)
        if fh.read(4) == _LOCATOR64 and at >= _LOCATOR64_SIZE + _END64_SIZE:
            fh.seek(at - _LOCATOR64_SIZE - _END64_SIZE)
            record64 = fh.read(_END64_SIZE)
            if record64[:4] == _END64:
                *_, dir_size, dir_offset = struct.unpack(_END64_FORMAT, record64)
                before = _LOCATOR64_SIZE + _END64_SIZE
    concat = at - before - dir_size - dir_offset
    if concat > 0:
        return f"{concat:,} {PREPENDED}"
    return None


def open_zip(fh: IO[bytes]) -> zipfile.ZipFile:
    """`zipfile.ZipFile(fh)` for reading, once `zip_end_problem` finds none. Raises ZipEndError
    (a zipfile.BadZipFile) with the reason when it finds one; zipfile.BadZipFile or OSError as
    zipfile does."""
    problem = zip_end_problem(fh)
    if problem is not None:
        raise ZipEndError(problem)
    fh.seek(0)
    return zipfile.ZipFile(fh)
