"""The files a watch filed away, watched for `recheck_seconds` in case their writer still held
them: one that changes goes back to the inbox, to be loaded again as a correction. They are
remembered in the inbox (`filed_log`), so a restart forgets none."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from elopipe.ingest.watcher.arrival import Signature, signature
from elopipe.ingest.watcher.filed_log import Filed, FiledLog
from elopipe.ingest.watcher.filing import REASON_SUFFIX, move_to_free_name, shown

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
        """`origin` (in the inbox), read with signature `sig`, now lives at `target`."""
        filed = Filed(target, origin, sig, time.time_ns())
        self._files[target] = filed
        self._log.filed(filed)

    def return_changed(self) -> int:
        """Move each watched file that changed since it was read back to its place in the inbox
        (its reason file, if quarantined, goes: the ledger keeps the reason), where it is taken
        again as a correction. A file whose inbox name is in use meanwhile waits for a later
        call. A file is watched until `recheck_seconds` after it was filed: one that changed
        later (its mtime says when, also for a change made while no watch ran) is no longer
        watched, as a watch running then had let it go. Returns how many files went back."""
        now = time.time_ns()
        window = int(self.recheck_seconds * 1_000_000_000)
        moved = 0
        done: list[Path] = []
        for target, filed in list(self._files.items()):
            current = signature(target)
            # watched until the file changed (its mtime), or until now if it has not
            watched_until = now if current == filed.sig or current is None else current[1]
            if current is None or watched_until - filed.at_ns > window:
                done.append(target)  # moved away by the user, or long settled (changed only after that)
                continue
            # a name in use, by a link the user made there too, waits for a later call
            if current == filed.sig or os.path.lexists(filed.origin) or not move_to_free_name(target, filed.origin):
                continue
            Path(str(target) + REASON_SUFFIX).unlink(missing_ok=True)
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
