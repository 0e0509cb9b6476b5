"""`watch()`: the drop folder's loop. It looks when an entry of the inbox is added, renamed or
removed, when a file seen can be taken, and at least every `interval` seconds."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from elopipe.ingest.watcher.arrival import DEFAULT_INCOMPLETE_WAIT, ArrivalTracker
from elopipe.ingest.watcher.batch import BatchRunner, WatchStats, run_batch_and_file
from elopipe.ingest.watcher.filing import inbox_folder
from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE
from elopipe.ingest.watcher.recheck import RECHECK_SECONDS, FiledAway
from elopipe.runtime.interrupt import stop_requested, wait_or_stop


def watch(
    inbox: Path,
    run_batch: BatchRunner,
    interval: float = 5.0,
    max_batches: int | None = None,
    on_idle: Callable[[], None] | None = None,
    incomplete_wait: float = DEFAULT_INCOMPLETE_WAIT,
    recheck_seconds: float = RECHECK_SECONDS,
    filed: FiledAway | None = None,
) -> WatchStats:
    """Poll `inbox` every `interval` seconds and run `run_batch` on each set of arrived files,
    until a stop is requested (see elopipe.runtime.interrupt) or `max_batches` batches ran.

    `run_batch` gets absolute paths and returns an outcome for each file it finished; it should
    check `stop_requested()` between files. Files arriving while a batch runs are picked up by
    a later batch (they need two stable polls after it). `incomplete_wait` and
    `recheck_seconds`: see the module docstring. `filed`: the files filed away by earlier runs,
    when the caller read them already (to report a bad `INBOX/.elopipe` before it says it
    watches). The caller holds the inbox's lock (elopipe.ingest.watcher.lock). Raises whatever `run_batch` raises (e.g.
    StoreBusyError, or InboxError before the first poll); files are moved only after their batch
    returned.
    """
    inbox = Path(inbox).resolve()
    inbox_folder(inbox, PROCESSED)
    inbox_folder(inbox, QUARANTINE)
    tracker = ArrivalTracker(inbox, incomplete_wait, settle=interval)
    if filed is None:
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
