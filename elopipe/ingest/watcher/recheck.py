"""The files a watch filed away, watched for `recheck_seconds` in case their writer still held
them: one that changes goes back to the inbox, to be loaded again as a correction. They are
remembered in the inbox (`filed_log`), so a restart forgets none.

Whoever can write to the inbox can edit that memory, or swap processed/ or quarantine/ for a
link meanwhile: a file goes back only when it is the regular file elopipe filed (the inode
number it recorded, read with lstat), moved within the real folders of the inbox (opened with
O_NOFOLLOW, every name read relative to them), and the reason file beside it is removed only
when it is the one elopipe wrote (same inode, size and mtime)."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from elopipe.ingest.watcher.arrival import Signature
from elopipe.ingest.watcher.filed_log import Filed, FiledLog, ReasonId
from elopipe.ingest.watcher.filing import REASON_SUFFIX, InboxError, shown
from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE

RECHECK_SECONDS = 3600.0  # how long watch() keeps an eye on the files it filed away

log = logging.getLogger(__name__)


@dataclass
class FiledAway:
    """The files filed away from `inbox`, watched for `recheck_seconds` in case their writer still
    held them: a move keeps an open file, so a stalled copy can finish in processed/ or quarantine/.

    They are kept in `INBOX/.elopipe/filed-away.jsonl` (elopipe.ingest.watcher.filed_log) as
    they are filed, and read back when a watch starts: a restarted watch goes on watching the
    files an earlier one filed, and what it does with a changed file does not depend on a restart
    in between. Raises InboxError when that folder or file is a symbolic link.
    """

    inbox: Path
    recheck_seconds: float = RECHECK_SECONDS
    _files: dict[Path, Filed] = field(init=False)  # by target
    _log: FiledLog = field(init=False)

    def __post_init__(self) -> None:
        self._log = FiledLog(self.inbox)
        self._files = self._log.read()

    def add(self, target: Path, origin: Path, sig: Signature) -> None:
        """`origin` (in the inbox), read with signature `sig`, now lives at `target` (and, in
        quarantine/, the reason file elopipe just wrote beside it). Its inode number, and the
        reason file's, are recorded: what is moved back or removed later must be them."""
        try:
            ino = os.lstat(target).st_ino
        except OSError:  # moved away at once: nothing to watch
            return
        reason: ReasonId | None = None
        if target.parent.name == QUARANTINE:
            with contextlib.suppress(OSError):
                st = os.lstat(str(target) + REASON_SUFFIX)
                if stat.S_ISREG(st.st_mode):
                    reason = (st.st_ino, st.st_size, st.st_mtime_ns)
        filed = Filed(target, origin, sig, time.time_ns(), ino, reason)
        self._files[target] = filed
        self._log.filed(filed)

    def return_changed(self) -> int:
        """Move each watched file that changed since it was read back to its place in the inbox
        (its reason file, if elopipe wrote one in quarantine/, goes: the ledger keeps the reason),
        where it is taken again as a correction. A file whose inbox name is in use meanwhile waits
        for a later call. A file is watched until `recheck_seconds` after it was filed: one that
        changed later (its mtime says when, also for a change made while no watch ran) is no
        longer watched, as a watch running then had let it go; so is one whose name now holds
        anything but the regular file elopipe filed (a folder, a link, another file). Returns how
        many files went back. Raises InboxError when processed/ or quarantine/ is not a real
        folder (a symbolic link): nothing is moved from where it leads."""
        if not self._files:
            return 0
        now = time.time_ns()
        window = int(self.recheck_seconds * 1_000_000_000)
        moved = 0
        done: list[Path] = []
        with _folders(self.inbox) as (inbox_fd, folder_fds):
            for target, filed in list(self._files.items()):
                fd = folder_fds.get(target.parent.name)
                current = _lstat(target.name, fd)
                if current is None or not stat.S_ISREG(current.st_mode) or current.st_ino != filed.ino:
                    done.append(target)  # moved away by the user, or not the file elopipe filed
                    continue
                sig = (current.st_size, current.st_mtime_ns)
                # watched until the file changed (its mtime), or until now if it has not
                watched_until = now if sig == filed.sig else sig[1]
                if watched_until - filed.at_ns > window:
                    done.append(target)  # long settled (changed only after that)
                    continue
                # a name in use, by a link the user made there too, waits for a later call
                if sig == filed.sig or fd is None or not _move_back(fd, target.name, inbox_fd, filed):
                    continue
                if filed.reason is not None:
                    _remove_reason(fd, target.name + REASON_SUFFIX, filed.reason)
                done.append(target)
                moved += 1
                log.warning(
                    "%s changed in %s after it was loaded: moved back to the inbox, to be loaded again",
                    shown(filed.origin.name),
                    target.parent.name,
                )
        for target in done:
            del self._files[target]
        if done:
            self._log.forgotten(done, self._files.values())
        return moved


@contextmanager
def _folders(inbox: Path) -> Iterator[tuple[int, dict[str, int]]]:
    """The inbox and its processed/ and quarantine/ opened (a missing one left out). Raises
    InboxError when either is a symbolic link or not a folder: O_NOFOLLOW refuses the link, and
    every later name is read in the folder opened, whatever takes its name meanwhile."""
    inbox_fd = os.open(inbox, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fds: dict[str, int] = {}
    try:
        for name in (PROCESSED, QUARANTINE):
            try:
                fds[name] = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=inbox_fd)
            except FileNotFoundError:
                continue  # the user removed it: its files are gone
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                raise InboxError(
                    f"{inbox / name} is a symbolic link or not a folder; remove it (elopipe makes a real folder there)"
                ) from None
        yield inbox_fd, fds
    finally:
        for fd in fds.values():
            os.close(fd)
        os.close(inbox_fd)


def _lstat(name: str, dir_fd: int | None) -> os.stat_result | None:
    if dir_fd is None:
        return None
    try:
        return os.lstat(name, dir_fd=dir_fd)
    except OSError:
        return None


def _move_back(fd: int, name: str, inbox_fd: int, filed: Filed) -> bool:
    """Move `name` of the folder `fd` to the filed file's inbox name unless that name is in use
    (False); what lands there must be the regular file of inode `filed.ino`, else it goes back
    (a file swapped in between the look and the move). A hard link then an unlink, as filing
    does; a file system without hard links gets a rename after one more look."""
    origin = filed.origin.name
    try:
        os.link(name, origin, src_dir_fd=fd, dst_dir_fd=inbox_fd, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError:  # no hard links here (some network or FAT file systems)
        if _lstat(origin, inbox_fd) is not None:
            return False
        os.rename(name, origin, src_dir_fd=fd, dst_dir_fd=inbox_fd)
        if not _is_filed(_lstat(origin, inbox_fd), filed):
            os.rename(origin, name, src_dir_fd=inbox_fd, dst_dir_fd=fd)  # not ours: put back
            return False
        return True
    if not _is_filed(_lstat(origin, inbox_fd), filed):
        os.unlink(origin, dir_fd=inbox_fd)  # the link just made, to a file elopipe did not file
        return False
    os.unlink(name, dir_fd=fd)
    return True


def _is_filed(st: os.stat_result | None, filed: Filed) -> bool:
    return st is not None and stat.S_ISREG(st.st_mode) and st.st_ino == filed.ino


def _remove_reason(fd: int, name: str, reason: ReasonId) -> None:
    """Remove the reason file `name` of the folder `fd` when it is still the one elopipe wrote
    (a regular file of the inode, size and mtime recorded); a user's file is left."""
    st = _lstat(name, fd)
    if st is not None and stat.S_ISREG(st.st_mode) and (st.st_ino, st.st_size, st.st_mtime_ns) == reason:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=fd)
