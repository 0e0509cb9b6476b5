"""One process at a time takes files from a drop folder: `INBOX/.elopipe/watch.lock`, a file of
elopipe's own, locked (`fcntl.flock`, exclusive) for the whole life of `elopipe watch` and for
each run of the `drop_folder` flow. Two watches on one inbox both took the same files: the second
found them moved by the first and recorded them as rejected ('No such file or directory'), or,
with another store, loaded them twice. The lock goes with the process (also a killed one): no
stale lock is ever left to remove by hand. The file holds the pid of the holder, to name it."""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from elopipe.ingest.watcher.filed_log import ELOPIPE_FOLDER
from elopipe.ingest.watcher.filing import InboxError, inbox_folder

LOCK_FILE = "watch.lock"


class InboxBusyError(InboxError):
    """Another process (`pid`, None when it did not say) takes files from the inbox."""

    exit_code = 2

    def __init__(self, inbox: Path, pid: int | None) -> None:
        self.inbox, self.pid = inbox, pid
        by = f" (pid {pid})" if pid is not None else ""
        super().__init__(f"{inbox} is watched by another process{by}")


@contextmanager
def inbox_lock(inbox: Path) -> Iterator[None]:
    """Hold the inbox's lock while the block runs. Raises InboxBusyError at once when another
    process holds it; InboxError when `.elopipe` or the lock file is not elopipe's (a symbolic
    link, a file in place of the folder): elopipe writes through no link."""
    path = inbox_folder(inbox, ELOPIPE_FOLDER) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as exc:  # a symbolic link (ELOOP), no permission
        raise InboxError(f"{path}: {exc.strerror}; remove it (elopipe writes a file of its own there)") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InboxError(f"{path} is not a regular file; remove it (elopipe writes a file of its own there)")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InboxBusyError(inbox, _holder(fd)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race the next taker)


def _holder(fd: int) -> int | None:
    """The pid the holder wrote, if it did (it writes just after it took the lock)."""
    text = os.pread(fd, 32, 0).strip()
    return int(text) if text.isdigit() else None
