"""The drop folder: notice files that have finished arriving, run a batch, file them away.

Plain library, no Prefect: `elopipe watch` runs `watch()` with a batch function that calls the
`pipeline` flow, and the scheduled `drop_folder` flow uses `collect_arrived()` + `file_away()`.

- A file has *arrived* when its size and mtime are the same on two polls in a row (a copy or
  download still in progress changes one of them). Names ending in `.part`, `.tmp`,
  `.crdownload`, and dot files, are never taken: browsers and `rsync` write under those names
  and rename at the end. Only regular files directly in the inbox are looked at.
- After a batch each file moves to `INBOX/processed/` (loaded, partial, or already in the store)
  or to `INBOX/quarantine/` with `<name>.reason.txt` beside it (rejected). A file the batch did
  not get to (stop requested) stays where it is for the next run.
- Restarting never loads a file twice: the ingest ledger (sha256 in `source_files`) skips it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from elopipe.interrupt import stop_requested, wait_or_stop

TEMP_SUFFIXES = (".part", ".tmp", ".crdownload")
PROCESSED = "processed"
QUARANTINE = "quarantine"
REASON_SUFFIX = ".reason.txt"

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
    """A regular file whose name is not a temporary or hidden one."""
    name = path.name
    if name.startswith("."):
        return False
    if name.lower().endswith(TEMP_SUFFIXES):
        return False
    return path.is_file()


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:  # vanished between listing and stat
        return None
    return (st.st_size, st.st_mtime_ns)


@dataclass
class ArrivalTracker:
    """Remembers each candidate's (size, mtime) from the previous poll."""

    inbox: Path
    _seen: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def poll(self) -> list[Path]:
        """List the inbox once; return the files unchanged since the previous poll, sorted.

        A returned file is forgotten, so it is returned once; if it is still in the inbox later
        (a stopped batch left it) it needs two more stable polls, which it will have.
        """
        current: dict[Path, tuple[int, int]] = {}
        try:
            entries = list(os.scandir(self.inbox))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            path = Path(entry.path)
            if not is_candidate(path):
                continue
            sig = _signature(path)
            if sig is not None:
                current[path] = sig
        arrived = sorted(p for p, sig in current.items() if self._seen.get(p) == sig)
        self._seen = {p: sig for p, sig in current.items() if p not in arrived}
        return arrived


def collect_arrived(inbox: Path, settle_seconds: float = 2.0) -> list[Path]:
    """Two polls `settle_seconds` apart; the files stable across both (for one-shot runs)."""
    tracker = ArrivalTracker(Path(inbox))
    tracker.poll()
    if settle_seconds > 0:
        time.sleep(settle_seconds)
    return tracker.poll()


def unique_destination(folder: Path, name: str) -> Path:
    """`folder/name`, or `folder/<stem>.<UTC timestamp>[-n]<suffix>` if that exists already
    (the same name dropped twice with different contents must not overwrite the first)."""
    target = folder / name
    if not target.exists() and not (folder / (name + REASON_SUFFIX)).exists():
        return target
    stem, suffix = os.path.splitext(name)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    n = 0
    while True:
        candidate = folder / f"{stem}.{stamp}{'-' + str(n) if n else ''}{suffix}"
        if not candidate.exists():
            return candidate
        n += 1


def file_away(inbox: Path, path: Path, outcome: FileOutcome) -> Path:
    """Move `path` to processed/ or quarantine/ (writing the reason file for the latter).
    Returns the new path."""
    folder = Path(inbox) / outcome.goes_to
    folder.mkdir(parents=True, exist_ok=True)
    target = unique_destination(folder, path.name)
    if outcome.goes_to == QUARANTINE:
        reason = outcome.reason or "rejected (no reason given)"
        Path(str(target) + REASON_SUFFIX).write_text(
            f"{path.name}: {reason}\nquarantined at {datetime.now(UTC).isoformat(timespec='seconds')}\n",
            encoding="utf-8",
        )
    os.replace(path, target)
    return target


@dataclass
class WatchStats:
    batches: int = 0
    processed: int = 0
    quarantined: int = 0
    left: int = 0  # files a stopped batch did not reach


def run_batch_and_file(inbox: Path, files: list[Path], run_batch: BatchRunner, stats: WatchStats) -> None:
    """Run one batch and move each file it reports on; files it does not report stay put."""
    outcomes = run_batch(files)
    stats.batches += 1
    for path in files:
        outcome = outcomes.get(path)
        if outcome is None:
            stats.left += 1
            continue
        if not path.exists():  # moved away by the user meanwhile
            continue
        target = file_away(inbox, path, outcome)
        if outcome.goes_to == QUARANTINE:
            stats.quarantined += 1
            log.warning("quarantined %s: %s", path.name, outcome.reason)
        else:
            stats.processed += 1
        log.debug("%s -> %s", path.name, target)


def watch(
    inbox: Path,
    run_batch: BatchRunner,
    interval: float = 5.0,
    max_batches: int | None = None,
    on_idle: Callable[[], None] | None = None,
) -> WatchStats:
    """Poll `inbox` every `interval` seconds and run `run_batch` on each set of arrived files,
    until a stop is requested (see elopipe.interrupt) or `max_batches` batches ran.

    `run_batch` gets absolute paths and returns an outcome for each file it finished; it should
    check `stop_requested()` between files. Files arriving while a batch runs are picked up by
    a later batch (they need two stable polls after it). Raises whatever `run_batch` raises
    (e.g. StoreBusyError); files are moved only after their batch returned.
    """
    inbox = Path(inbox).resolve()
    (inbox / PROCESSED).mkdir(parents=True, exist_ok=True)
    (inbox / QUARANTINE).mkdir(parents=True, exist_ok=True)
    tracker = ArrivalTracker(inbox)
    stats = WatchStats()
    while not stop_requested():
        arrived = tracker.poll()
        if arrived:
            run_batch_and_file(inbox, arrived, run_batch, stats)
            if max_batches is not None and stats.batches >= max_batches:
                break
        elif on_idle is not None:
            on_idle()
        if wait_or_stop(interval):
            break
    return stats


class FileResultLike(Protocol):
    name: str  # the file's path, or 'archive!member'
    status: str
    reason: str | None


def outcomes_by_path(paths: Iterable[Path], results: Iterable[FileResultLike]) -> dict[Path, FileOutcome]:
    """Fold per-source ingest results (elopipe.loader.FileResult or anything with name, status,
    reason) into one outcome per dropped file.

    An archive yields several sources: it is rejected only when every member was rejected,
    partial when any member was partial or rejected, else loaded/skipped. A file skipped because
    the same bytes were rejected before is rejected again (back to quarantine, not processed).
    A dropped file with no result at all is left out (the batch stopped before it).
    """
    wanted = {os.path.realpath(p): Path(p) for p in paths}
    grouped: dict[Path, list[tuple[str, str | None]]] = {}
    for r in results:
        base = r.name
        key = wanted.get(os.path.realpath(base))
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
    return out
