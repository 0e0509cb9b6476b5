"""What a batch did with each dropped file, and where that sends it: processed/ or quarantine/."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from elopipe.read.sources import GONE, text_path

PROCESSED = "processed"
QUARANTINE = "quarantine"


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
    A dropped file with no result at all is left out (the batch stopped before it), as is one
    gone before it was read (elopipe.read.sources.GONE: another process moved it). With
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
        if status == "skipped" and reason == GONE:  # another process took it: not read, not ours to file
            continue
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
