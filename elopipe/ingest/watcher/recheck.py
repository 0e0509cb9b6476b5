"""The files a watch filed away, watched for `recheck_seconds` in case their writer still held
them: one that changes goes back to the inbox, to be loaded again as a correction."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from elopipe.ingest.watcher.arrival import Signature, signature
from elopipe.ingest.watcher.filing import REASON_SUFFIX, move_to_free_name, shown

RECHECK_SECONDS = 3600.0  # how long watch() keeps an eye on the files it filed away

log = logging.getLogger(__name__)


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
            current = signature(target)
            if current is None or (current == sig and now - at > self.recheck_seconds):
                del self._files[target]  # moved away by the user, or long settled
                continue
            # a name in use, by a link the user made there too, waits for a later call
            if current == sig or os.path.lexists(origin) or not move_to_free_name(target, origin):
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
