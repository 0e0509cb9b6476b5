"""One batch of arrived files: run it, then file away each file it reports on (a file that
changed while it was read stays in the inbox)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from elopipe.ingest.watcher.arrival import Signature, signature
from elopipe.ingest.watcher.filing import file_away, shown
from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE, FileOutcome
from elopipe.ingest.watcher.recheck import FiledAway

BatchRunner = Callable[[list[Path]], Mapping[Path, FileOutcome]]

log = logging.getLogger(__name__)


@dataclass
class WatchStats:
    batches: int = 0
    processed: int = 0
    quarantined: int = 0
    left: int = 0  # files a stopped batch did not reach
    changed: int = 0  # files that changed while their batch read them: left in the inbox
    returned: int = 0  # filed-away files that changed afterwards: moved back into the inbox


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
    before = {p: (taken or {}).get(p) or signature(p) for p in files}
    outcomes = run_batch(files)
    stats.batches += 1
    processed: list[str] = []
    for path in files:
        outcome = outcomes.get(path)
        if outcome is None:
            stats.left += signature(path) is not None  # not one gone meanwhile
            continue
        now = signature(path)
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
    left = [shown(p.name) for p in files if p not in outcomes and os.path.lexists(p)]
    if left:
        log.info("left in the inbox for the next run: %s", _some(left))


def _some(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
