"""The drop folder: notice files that have finished arriving, run a batch, file them away.

Plain library, no Prefect: `elopipe watch` runs `watch()` with a batch function that calls the
`pipeline` flow, and the scheduled `drop_folder` flow uses `collect_arrived()` + `file_away()`.

- A file has *arrived* when its size and mtime are the same on two polls in a row at least
  `interval` seconds apart (a copy or download still in progress changes one of them). `watch()`
  looks at once when an entry of the inbox is added, renamed or removed (the folder's own
  modification time, read every `NOTICE_SECONDS`), and again as soon as a file it saw can have
  held still for `interval`: a file that lands is taken about `interval` seconds later, not up
  to twice that. Names ending in `TEMP_SUFFIXES` (`.part`, `.tmp`, `.crdownload`, `.partial`,
  `.download`, `.filepart`, `~`), and dot files, are never taken: browsers, uploaders and
  `rsync` write under those names and rename at the end. Only regular files directly in the
  inbox are looked at: a symbolic link or a FIFO is left where it is, and named once in a warning.
- A copy can stall for longer than two polls. A file that looks cut short (`looks_complete`: a
  PGN whose last game has no result marker, a TRF whose last line has no line break, a zip
  without its central directory) is taken only once it has stayed unchanged for
  `incomplete_wait` seconds (default 60, counted from its mtime), then with a warning.
- A file that changed while its batch read it (size or mtime differ from when it was taken)
  is not moved: it stays in the inbox and is taken again once it holds still, and loaded as a
  correction of the version read before (same path: see elopipe.ingest.loader).
- After a batch each file moves to `INBOX/processed/` (loaded, partial, or already in the store)
  or to `INBOX/quarantine/` with `<name>.reason.txt` beside it (rejected). A file the batch did
  not get to (stop requested) stays where it is for the next run.
- A writer may still hold a file when it is moved (a move keeps the open file): `watch()` keeps
  an eye on the files it filed away for `recheck_seconds` (default one hour), and moves one that
  changes back into the inbox with a warning, to be loaded again as a correction. The one-shot
  `drop_folder` flow checks only before the move.
- Restarting never loads a file twice: the ingest ledger (sha256 in `source_files`) skips it.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from elopipe.read.control_chars import escape_controls
from elopipe.read.sources import SYMLINK, not_regular, text_path
from elopipe.runtime.errors import ElopipeError
from elopipe.runtime.interrupt import stop_requested, wait_or_stop

# What uploaders and browsers write under until they rename the file at the end: rsync and
# curl's `.part`, `.tmp`, Chrome's `.crdownload`, Firefox's `.partial`, Safari's `.download`,
# WinSCP's `.filepart`; and an editor's backup `~`.
TEMP_SUFFIXES = (".part", ".tmp", ".crdownload", ".partial", ".download", ".filepart", "~")
PROCESSED = "processed"
QUARANTINE = "quarantine"
REASON_SUFFIX = ".reason.txt"
DEFAULT_INCOMPLETE_WAIT = 60.0  # seconds a file that looks cut short must hold still
RECHECK_SECONDS = 3600.0  # how long watch() keeps an eye on the files it filed away

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileOutcome:
    """What a batch did with one dropped file.

    status: 'loaded' | 'partial' | 'skipped' (already in the store) | 'rejected'.
    reason: one line, required for 'rejected', the errors summary for 'partial'.
    """

    status: str
    reason: str | None = None

    @property
    def goes_to(self) -> str:
        return QUARANTINE if self.status == "rejected" else PROCESSED


BatchRunner = Callable[[list[Path]], Mapping[Path, FileOutcome]]


def is_candidate(path: Path) -> bool:
    """A regular file (not a symbolic link) whose name is not a temporary or hidden one."""
    name = path.name
    if name.startswith("."):
        return False
    if name.lower().endswith(TEMP_SUFFIXES):
        return False
    return not_regular(path) is None and path.is_file()


Signature = tuple[int, int]  # (size in bytes, mtime in ns)


def _signature(path: Path) -> Signature | None:
    try:
        st = path.stat()
    except OSError:  # vanished between listing and stat
        return None
    return (st.st_size, st.st_mtime_ns)


TAIL_BYTES = 4096
# A PGN game's movetext ends with its result; a tag value or a comment ending in "1-0" is
# preceded by a quote or text, not by a space or a closing comment/variation.
_PGN_END = re.compile(rb"(?:^|[\s})])(?:1-0|0-1|1/2-1/2|\*)\Z")
_TRF_LINE = re.compile(rb"^\d{3} ", re.MULTILINE)  # a TRF record; comment lines may come first


def looks_complete(path: Path) -> bool:
    """False when `path` looks cut short, as a copy in progress leaves it; True otherwise.

    PGN (text starting with `[`): the last game's movetext must end in `1-0`, `0-1`, `1/2-1/2`
    or `*`. TRF (a `.trf` name, or a line starting with a three-digit code): the last line must
    end with a line break. Zip: its central directory (written last) must be there. Anything else
    (.gz, .bz2, unknown text, an empty file) is judged by its size and mtime alone: an empty file
    is rejected as such, and `watch()` brings it back if a writer fills it later.
    Only the first and last 4 KB are read; a file that cannot be read counts as complete (the
    ingest then records why).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # never block on a FIFO swapped in
    except OSError:
        return True
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return True
        if path.suffix.lower() == ".zip":
            return zipfile.is_zipfile(fh)
        head = fh.read(TAIL_BYTES)
        fh.seek(max(0, st.st_size - TAIL_BYTES))
        tail = fh.read()
    # NULs out: UTF-16 text reads as ASCII; a BOM and blank lines may precede the first tag
    head = head.replace(b"\0", b"").lstrip(b"\xef\xbb\xbf\xff\xfe \t\r\n")
    tail = tail.replace(b"\0", b"")
    if head.startswith(b"["):
        return _PGN_END.search(tail.rstrip()) is not None
    if path.suffix.lower() == ".trf" or _TRF_LINE.search(head):
        return tail.rstrip(b" \t\x1a").endswith((b"\n", b"\r"))  # spaces or a DOS EOF may follow
    return True


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
            sig = _signature(path)
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
            elif looks_complete(path):
                arrived.append(path)
            elif now - prev.since >= self.incomplete_wait:
                log.warning(
                    "%s looks incomplete (%s) but has not changed for %.0f s: taking it as it is",
                    shown(path.name),
                    _incomplete_why(path),
                    now - prev.since,
                )
                arrived.append(path)
            else:
                if not prev.waiting:
                    log.warning(
                        "%s looks incomplete (%s): waiting up to %.0f s for the rest",
                        shown(path.name),
                        _incomplete_why(path),
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


def _incomplete_why(path: Path) -> str:
    if path.suffix.lower() == ".zip":
        return "no zip directory at its end"
    return "its last game or line is not finished"


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


# A file name's limit on Linux and macOS file systems, in bytes
NAME_MAX = 255


def shown(name: str) -> str:
    """A file name for a one-line message: bytes that are not UTF-8 and control characters (a
    newline in a name would start a forged line) written \\xNN."""
    return escape_controls(text_path(name))


def _taken(path: Path) -> bool:
    """Whether a name is in use by anything, a symbolic link included, also one to nothing
    (`Path.exists` follows a link: a dangling one would be reused, and written through)."""
    return os.path.lexists(path) or os.path.lexists(str(path) + REASON_SUFFIX)


def unique_destination(folder: Path, name: str) -> Path:
    """`folder/name`, or `folder/<stem>.<UTC timestamp>[-n]<suffix>` if that name or its
    `.reason.txt` is in use already, by a file or a symbolic link even to nothing (the same name
    dropped twice with different contents must not overwrite the first; a user's link is never
    replaced nor written through), the stem shortened when the name and its `.reason.txt` would
    pass the file system's `NAME_MAX` bytes (a 246-byte name stopped `watch`)."""
    if len(os.fsencode(name + REASON_SUFFIX)) <= NAME_MAX:
        target = folder / name
        if not _taken(target):
            return target
    stem, suffix = os.path.splitext(name)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    n = 0
    while True:
        tail = f".{stamp}{'-' + str(n) if n else ''}{suffix}"
        room = NAME_MAX - len(os.fsencode(tail + REASON_SUFFIX))
        cut = stem
        while len(os.fsencode(cut)) > room:
            cut = cut[:-1]
        candidate = folder / f"{cut}{tail}"
        if not _taken(candidate):
            return candidate
        n += 1


class InboxError(ElopipeError, RuntimeError):
    """The inbox's processed/ or quarantine/ is not a real folder (a symbolic link, a file)."""

    exit_code = 2


def inbox_folder(inbox: Path, name: str) -> Path:
    """`inbox/name` (processed/ or quarantine/), created if missing. Raises InboxError if it is a
    symbolic link or not a folder: whoever can write to the inbox could otherwise have dropped
    files moved into any folder the watcher may write to."""
    folder = Path(inbox) / name
    if not folder.is_symlink():
        folder.mkdir(parents=True, exist_ok=True)
    if folder.is_symlink() or not folder.is_dir():
        raise InboxError(f"{folder} is a symbolic link or not a folder; remove it (elopipe makes a real folder there)")
    return folder


def file_away(inbox: Path, path: Path, outcome: FileOutcome) -> Path:
    """Move `path` to processed/ or quarantine/ (writing the reason file for the latter) under a
    name nothing uses (`unique_destination`): no file or symbolic link of the user's there is
    replaced or written through, also one made meanwhile (the reason file is created only when
    its name is free, never through a link; the file is moved by a hard link that fails on a
    name in use). Returns the new path. Raises InboxError (see `inbox_folder`)."""
    folder = inbox_folder(inbox, outcome.goes_to)
    while True:
        target = unique_destination(folder, path.name)
        reason_file = Path(str(target) + REASON_SUFFIX)
        if outcome.goes_to == QUARANTINE:
            reason = outcome.reason or "rejected (no reason given)"
            text = f"{shown(path.name)}: {reason}\nquarantined at {datetime.now(UTC).isoformat(timespec='seconds')}\n"
            try:
                _create(reason_file, text.encode("utf-8"))
            except FileExistsError:  # taken since it was looked at: another name
                continue
        if _move_to_free_name(path, target):
            return target
        if outcome.goes_to == QUARANTINE:
            reason_file.unlink(missing_ok=True)  # ours: made above with O_EXCL


def _create(path: Path, data: bytes) -> None:
    """Write `data` to a new file `path`; FileExistsError when the name is in use by anything,
    a symbolic link included (O_EXCL never follows one, O_NOFOLLOW says so twice)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _move_to_free_name(path: Path, target: Path) -> bool:
    """Move `path` to `target` unless that name is in use; False when it is. A hard link then an
    unlink: `os.replace` would replace what took the name since `unique_destination` looked. A
    file system without hard links gets `os.replace` after one more look."""
    try:
        os.link(path, target, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError:  # no hard links here (some network or FAT file systems)
        if os.path.lexists(target):
            return False
        os.replace(path, target)
        return True
    os.unlink(path)
    return True


@dataclass
class WatchStats:
    batches: int = 0
    processed: int = 0
    quarantined: int = 0
    left: int = 0  # files a stopped batch did not reach
    changed: int = 0  # files that changed while their batch read them: left in the inbox
    returned: int = 0  # filed-away files that changed afterwards: moved back into the inbox


@dataclass
class FiledAway:
    """The files a watcher moved, watched for `recheck_seconds` in case their writer still held
    them: a move keeps an open file, so a stalled copy can finish in processed/ or quarantine/."""

    inbox: Path
    recheck_seconds: float = RECHECK_SECONDS
    _files: dict[Path, tuple[Path, Signature, float]] = field(default_factory=dict)

    def add(self, target: Path, origin: Path, sig: Signature) -> None:
        """`origin` (in the inbox), read with signature `sig`, now lives at `target`."""
        self._files[target] = (origin, sig, time.monotonic())

    def return_changed(self) -> int:
        """Move each watched file that changed since it was read back to its place in the inbox
        (its reason file, if quarantined, goes: the ledger keeps the reason), where it is taken
        again as a correction. A file whose inbox name is in use meanwhile waits for a later
        call. Returns how many files went back."""
        now = time.monotonic()
        moved = 0
        for target, (origin, sig, at) in list(self._files.items()):
            current = _signature(target)
            if current is None or (current == sig and now - at > self.recheck_seconds):
                del self._files[target]  # moved away by the user, or long settled
                continue
            # a name in use, by a link the user made there too, waits for a later call
            if current == sig or os.path.lexists(origin) or not _move_to_free_name(target, origin):
                continue
            Path(str(target) + REASON_SUFFIX).unlink(missing_ok=True)
            del self._files[target]
            moved += 1
            log.warning(
                "%s changed in %s after it was loaded: moved back to the inbox, to be loaded again",
                shown(origin.name),
                target.parent.name,
            )
        return moved


def run_batch_and_file(
    inbox: Path,
    files: list[Path],
    run_batch: BatchRunner,
    stats: WatchStats,
    taken: Mapping[Path, Signature] | None = None,
    filed: FiledAway | None = None,
) -> None:
    """Run one batch and move each file it reports on; files it does not report stay put.

    `taken`: each file's (size, mtime) when it was judged arrived (default: now). A file whose
    signature differs after the batch was written to meanwhile: it stays in the inbox, to be
    taken again whole. `filed` records every move, for `FiledAway.return_changed`.
    """
    before = {p: (taken or {}).get(p) or _signature(p) for p in files}
    outcomes = run_batch(files)
    stats.batches += 1
    processed: list[str] = []
    for path in files:
        outcome = outcomes.get(path)
        if outcome is None:
            stats.left += 1
            continue
        now = _signature(path)
        if now is None:  # moved away by the user meanwhile
            continue
        if now != before[path]:
            stats.changed += 1
            log.warning(
                "%s changed while it was being loaded: it stays in the inbox and is loaded again "
                "(as a correction of what was read) once it holds still",
                shown(path.name),
            )
            continue
        target = file_away(inbox, path, outcome)
        if filed is not None:
            filed.add(target, path, now)
        if outcome.goes_to == QUARANTINE:
            stats.quarantined += 1
            log.warning("quarantined %s: %s", shown(path.name), outcome.reason)
        else:
            stats.processed += 1
            name = shown(path.name)
            processed.append(name if target.name == path.name else f"{name} as {shown(target.name)}")
    if processed:
        log.info("moved to %s: %s", shown(str(inbox / PROCESSED)), _some(processed))
    left = [shown(p.name) for p in files if p not in outcomes]
    if left:
        log.info("left in the inbox for the next run: %s", _some(left))


def _some(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def watch(
    inbox: Path,
    run_batch: BatchRunner,
    interval: float = 5.0,
    max_batches: int | None = None,
    on_idle: Callable[[], None] | None = None,
    incomplete_wait: float = DEFAULT_INCOMPLETE_WAIT,
    recheck_seconds: float = RECHECK_SECONDS,
) -> WatchStats:
    """Poll `inbox` every `interval` seconds and run `run_batch` on each set of arrived files,
    until a stop is requested (see elopipe.runtime.interrupt) or `max_batches` batches ran.

    `run_batch` gets absolute paths and returns an outcome for each file it finished; it should
    check `stop_requested()` between files. Files arriving while a batch runs are picked up by
    a later batch (they need two stable polls after it). `incomplete_wait` and
    `recheck_seconds`: see the module docstring. Raises whatever `run_batch` raises (e.g.
    StoreBusyError, or InboxError before the first poll); files are moved only after their batch
    returned.
    """
    inbox = Path(inbox).resolve()
    inbox_folder(inbox, PROCESSED)
    inbox_folder(inbox, QUARANTINE)
    tracker = ArrivalTracker(inbox, incomplete_wait, settle=interval)
    filed = FiledAway(inbox, recheck_seconds)
    stats = WatchStats()
    while not stop_requested():
        stats.returned += filed.return_changed()
        # the folder's time before the look: an entry added during the look or the batch wakes the next
        stamp, looked = folder_stamp(inbox), time.monotonic()
        arrived = tracker.poll()
        if arrived:
            run_batch_and_file(inbox, arrived, run_batch, stats, tracker.taken, filed)
            if max_batches is not None and stats.batches >= max_batches:
                break
        elif on_idle is not None:
            on_idle()
        if wait_for_news(inbox, stamp, looked + interval, tracker.due()):
            break
    return stats


# how often `watch()` reads the inbox folder's modification time between two looks
NOTICE_SECONDS = 0.05


def folder_stamp(inbox: Path) -> int | None:
    """The modification time of the folder `inbox` (ns; None: unreadable): it moves when an entry
    is added, renamed or removed."""
    try:
        return os.stat(inbox).st_mtime_ns
    except OSError:
        return None


def wait_for_news(inbox: Path, stamp: int | None, next_look: float, due: float | None) -> bool:
    """Wait until the next look of `watch()`: at `next_look` (its interval), when a file seen
    can be taken (`due`), or as soon as an entry of `inbox` is added, renamed or removed (its
    `folder_stamp` is no longer `stamp`), whichever comes first. A stat of one folder every
    `NOTICE_SECONDS` costs next to nothing. Returns True when a stop was requested."""
    until = next_look if due is None else min(next_look, due)
    while True:
        left = until - time.monotonic()
        if left <= 0:
            return stop_requested()
        if wait_or_stop(min(left, NOTICE_SECONDS)):
            return True
        if folder_stamp(inbox) != stamp:
            return False


class FileResultLike(Protocol):
    name: str  # the file's path, or 'archive!member'
    status: str
    reason: str | None


def outcomes_by_path(
    paths: Iterable[Path], results: Iterable[FileResultLike], stopped: bool = False
) -> dict[Path, FileOutcome]:
    """Fold per-source ingest results (elopipe.ingest.ledger.FileResult or anything with name, status,
    reason) into one outcome per dropped file.

    An archive yields several sources: it is rejected only when every member was rejected,
    partial when any member was partial or rejected, else loaded/skipped. A file skipped because
    the same bytes were rejected before is rejected again (back to quarantine, not processed).
    A dropped file with no result at all is left out (the batch stopped before it). With
    `stopped` (the batch's rating or publishing was cut short: a stop, a full disk), only the
    rejected files have an outcome: the others stay in the inbox, and the next run takes them
    again ('already in the store') and rates and publishes what this one left (moved to
    processed/, nothing would have brought their lists out).
    """
    # results name files as stored (`text_path`: a name that is not UTF-8 has \\xNN escapes)
    wanted = {text_path(os.path.realpath(p)): Path(p) for p in paths}
    grouped: dict[Path, list[tuple[str, str | None]]] = {}
    for r in results:
        base = r.name
        key = wanted.get(base) or wanted.get(text_path(os.path.realpath(base)))
        if key is None and "!" in base:  # archive member: match the archive's path
            key = next((wanted[w] for w in wanted if base.startswith(w + "!")), None)
        if key is None:
            continue
        status, reason = r.status, r.reason
        if status == "skipped" and reason and ("(rejected)" in reason or "unreadable" in reason):
            status = "rejected"
        grouped.setdefault(key, []).append((status, reason))
    out: dict[Path, FileOutcome] = {}
    for path, items in grouped.items():
        statuses = [s for s, _ in items]
        reasons = "; ".join(dict.fromkeys(r for _, r in items if r))
        if all(s == "rejected" for s in statuses):
            out[path] = FileOutcome("rejected", reasons or "rejected")
        elif any(s in ("partial", "rejected") for s in statuses):
            out[path] = FileOutcome("partial", reasons or None)
        elif all(s == "skipped" for s in statuses):
            out[path] = FileOutcome("skipped", reasons or "already in the store")
        else:
            out[path] = FileOutcome("loaded", None)
    if stopped:
        return {p: o for p, o in out.items() if o.goes_to == QUARANTINE}
    return out
