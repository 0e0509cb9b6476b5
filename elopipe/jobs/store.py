"""What the callers of the jobs know of the store without opening it: its default file, the
checks of a `--db` before anything starts, the write lock a long job holds for its whole run, and
the store's errors, to tell a busy, full or interrupted store from other failures
(`elopipe.store.connect`)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from elopipe.store.connect import (
    DEFAULT_DB,
    StoreBusyError,
    StoreFullError,
    StoreMissingError,
    StorePathError,
    check_store,
    check_store_path,
    disk_full_message,
    is_disk_full,
    is_interrupt,
    open_reader,
    write_lock,
)

__all__ = [
    "DEFAULT_DB",
    "StoreBusyError",
    "StoreFullError",
    "StoreMissingError",
    "StorePathError",
    "check_store",
    "check_store_path",
    "disk_full_message",
    "is_disk_full",
    "is_interrupt",
    "wait_for_writer",
    "write_lock",
]


def wait_for_writer(db: str | os.PathLike[str], wait: float, on_wait: Callable[[str], None]) -> None:
    """Return once `db` can be opened read-only, or after `wait` seconds (the job then reports
    the busy store). A missing store is left to the job to report. `on_wait` is told once, when
    another process is writing (`sql --wait`, `publish --wait`)."""
    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            open_reader(db).close()
            return
        except StoreBusyError:
            if time.monotonic() >= deadline:
                return
            if not told:
                on_wait(f"another process is writing {db}: waiting up to {wait:g} s ...")
                told = True
            time.sleep(0.5)
        except Exception as exc:  # missing, not a store: the query says so
            if is_interrupt(exc):  # a Ctrl-C that came while DuckDB opened the file
                raise KeyboardInterrupt from None
            return
