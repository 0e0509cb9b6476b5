"""When a dropped file has arrived: its size and mtime held still over two polls, and it looks
complete (or held still for `incomplete_wait`). Temporary and hidden names, symbolic links,
FIFOs and folders are never taken."""

from __future__ import annotations

import logging
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from elopipe.ingest.watcher.filing import shown
from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE
from elopipe.read.sources import SYMLINK, not_regular
from elopipe.read.unfinished import unfinished
from elopipe.read.zips import zip_end_problem

# What uploaders and browsers write under until they rename the file at the end: rsync and
# curl's `.part`, `.tmp`, Chrome's `.crdownload`, Firefox's `.partial`, Safari's `.download`,
# WinSCP's `.filepart`; and an editor's backup `~`.
TEMP_SUFFIXES = (".part", ".tmp", ".crdownload", ".partial", ".download", ".filepart", "~")
DEFAULT_INCOMPLETE_WAIT = 60.0  # seconds a file that looks cut short must hold still

log = logging.getLogger(__name__)


def is_candidate(path: Path) -> bool:
    """A regular file (not a symbolic link) whose name is not a temporary or hidden one."""
    name = path.name
    if name.startswith("."):
        return False
    if name.lower().endswith(TEMP_SUFFIXES):
        return False
    return not_regular(path) is None and path.is_file()


Signature = tuple[int, int]  # (size in bytes, mtime in ns)


def signature(path: Path) -> Signature | None:
    """`path`'s (size in bytes, mtime in ns); None when it is gone (vanished between listing and stat)."""
    try:
        st = path.stat()
    except OSError:  # vanished between listing and stat
        return None
    return (st.st_size, st.st_mtime_ns)


TAIL_BYTES = 4096
_TRF_LINE = re.compile(rb"^\d{3} ", re.MULTILINE)  # a TRF record; comment lines may come first


def looks_complete(path: Path) -> bool:
    """False when `path` looks cut short, as a copy in progress leaves it; True otherwise
    (`incomplete_why` says why)."""
    return incomplete_why(path) is None


_UNFINISHED = "its last game or line is not finished"


def incomplete_why(path: Path) -> str | None:
    """Why `path` looks cut short, as a copy in progress leaves it, in one line; None when it
    looks complete.

    PGN (text starting with `[`): the last game's movetext must end in `1-0`, `0-1`, `1/2-1/2`
    or `*`. TRF (a `.trf` name, or a line starting with a three-digit code): the last line must
    end with a line break. Zip: its end record (written last) must end the file, and the archive
    start at the file's first byte (`zip_end_problem`, the check the ingest makes): a zip cut
    short whose last 64 KiB hold a zip stored inside it is still arriving. Anything else (.gz,
    .bz2, unknown text, an empty file) is judged by its size and mtime alone: an empty file is
    rejected as such, and `watch()` brings it back if a writer fills it later.
    Only the first and last 4 KB are read (of a zip, its last 64 KiB); a file that cannot be read
    counts as complete (the ingest then records why).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # never block on a FIFO swapped in
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if path.suffix.lower() == ".zip":
            return zip_end_problem(fh)
        head = fh.read(TAIL_BYTES)
        fh.seek(max(0, st.st_size - TAIL_BYTES))
        tail = fh.read()
    # NULs out: UTF-16 text reads as ASCII; a BOM and blank lines may precede the first tag
    head = head.replace(b"\0", b"").lstrip(b"\xef\xbb\xbf\xff\xfe \t\r\n")
    tail = tail.replace(b"\0", b"")
    if head.startswith(b"["):
        return _UNFINISHED if unfinished(tail, "pgn") else None
    if path.suffix.lower() == ".trf" or _TRF_LINE.search(head):
        return _UNFINISHED if unfinished(tail, "trf") else None
    return None


@dataclass
class _Seen:
    sig: Signature
    since: float  # time.monotonic() from which the file has held this signature
    looked: float  # time.monotonic() of the first poll that saw this signature
    waiting: bool = False  # the user was told it looks incomplete


@dataclass
class ArrivalTracker:
    """Remembers each candidate's (size, mtime) from the previous poll.

    `incomplete_wait`: seconds a file that `looks_complete()` rejects must hold still before it
    is taken anyway (with a warning). `settle`: the least time between the two polls that must
    see the same signature (0: any two polls in a row; `watch()` polls more often than its
    interval, and gives it). `taken` holds the signature each file returned by the last poll
    had, to tell later whether it changed (see `run_batch_and_file`).
    """

    inbox: Path
    incomplete_wait: float = DEFAULT_INCOMPLETE_WAIT
    settle: float = 0.0
    taken: dict[Path, Signature] = field(default_factory=dict)
    _seen: dict[Path, _Seen] = field(default_factory=dict)
    _refused: set[Path] = field(default_factory=set)

    def _refuse(self, path: Path) -> None:
        """Say once that a symbolic link, a FIFO or a folder in the inbox is left alone: a link
        would read whatever file it points to into the store; a folder's files are not the
        inbox's (nothing dropped is passed over in silence)."""
        why = not_regular(path)
        if why is None and path.name not in (PROCESSED, QUARANTINE) and path.is_dir():
            why = "a folder: watch takes the files at the top of the inbox (move them up, or `elopipe ingest` it)"
        if why is None or path.name.startswith(".") or path in self._refused:
            return
        self._refused.add(path)
        log.warning("skipped %s: %s%s", path, why, ", not followed in the inbox" if why == SYMLINK else "")

    def poll(self) -> list[Path]:
        """List the inbox once; return the files unchanged since the previous poll (and complete,
        or still for `incomplete_wait`), sorted.

        A returned file is forgotten, so it is returned once; if it is still in the inbox later
        (a stopped batch left it, or it changed while read) it needs two more stable polls.
        """
        now, wall = time.monotonic(), time.time()
        current: dict[Path, Signature] = {}
        try:
            entries = list(os.scandir(self.inbox))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            path = Path(entry.path)
            if not is_candidate(path):
                self._refuse(path)
                continue
            sig = signature(path)
            if sig is not None:
                current[path] = sig
        arrived: list[Path] = []
        seen: dict[Path, _Seen] = {}
        for path, sig in current.items():
            prev = self._seen.get(path)
            if prev is None or prev.sig != sig:
                # unchanged since its mtime, as far as we know (a future mtime counts as now)
                seen[path] = _Seen(sig, now - min(max(0.0, wall - sig[1] / 1e9), self.incomplete_wait), now)
            elif now - prev.looked < self.settle:
                seen[path] = prev  # seen too recently to tell that it holds still
            elif (why := incomplete_why(path)) is None:
                arrived.append(path)
            elif now - prev.since >= self.incomplete_wait:
                log.warning(
                    "%s looks incomplete (%s) but has not changed for %.0f s: taking it as it is",
                    shown(path.name),
                    why,
                    now - prev.since,
                )
                arrived.append(path)
            else:
                if not prev.waiting:
                    log.warning(
                        "%s looks incomplete (%s): waiting up to %.0f s for the rest",
                        shown(path.name),
                        why,
                        self.incomplete_wait,
                    )
                    prev.waiting = True
                seen[path] = prev
        self._seen = seen
        self.taken = {p: current[p] for p in arrived}
        return sorted(arrived)

    def due(self) -> float | None:
        """The `time.monotonic()` at which a file seen but not taken has held its signature for
        `settle` seconds since it was first seen (None: no such file): a poll then can take it."""
        waits = [s.looked + self.settle for s in self._seen.values() if not s.waiting]
        return min(waits) if waits else None


def collect_arrived(
    inbox: Path, settle_seconds: float = 2.0, incomplete_wait: float = DEFAULT_INCOMPLETE_WAIT
) -> tuple[list[Path], dict[Path, Signature]]:
    """Two polls `settle_seconds` apart (for one-shot runs): the files stable across both, and
    the signature each had when taken (for `run_batch_and_file`). A file that looks incomplete
    is left for a later run until its mtime is `incomplete_wait` seconds old."""
    tracker = ArrivalTracker(Path(inbox), incomplete_wait)
    tracker.poll()
    if settle_seconds > 0:
        time.sleep(settle_seconds)
    return tracker.poll(), tracker.taken
