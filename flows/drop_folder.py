"""`drop_folder` flow: one pass over a drop folder, for scheduled runs (`elopipe serve`).

Takes the files that are stable over `settle_seconds` (elopipe.ingest.watcher.arrival.collect_arrived),
runs `pipeline` on them, then moves each to processed/ or quarantine/. A file still being written, or
one that looks cut short and changed less than `incomplete_wait` seconds ago, is left for the
next scheduled run; so is one that changed while the batch read it (it is loaded again then, as a
correction). A file an earlier run (or `elopipe watch`) filed away that changed within the hour
after its move (a stalled copy finishing) goes back to the inbox first, and is taken again in this
run (elopipe.ingest.watcher.recheck: the files are kept in `INBOX/.elopipe/`). Each run holds the
inbox's lock (elopipe.ingest.watcher.lock), as `elopipe watch` does for its whole life: a run that
finds another process taking files from the inbox takes none, and says so.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import datetime as dt
from contextlib import ExitStack
from pathlib import Path

from prefect import flow

from elopipe.ingest.watcher.arrival import DEFAULT_INCOMPLETE_WAIT, collect_arrived
from elopipe.ingest.watcher.batch import WatchStats, run_batch_and_file
from elopipe.ingest.watcher.lock import InboxBusyError, inbox_lock
from elopipe.ingest.watcher.outcomes import FileOutcome, outcomes_by_path
from elopipe.ingest.watcher.recheck import FiledAway
from elopipe.jobs.requests import RunRequest
from elopipe.jobs.store import DEFAULT_DB
from elopipe.rating.systems import DEFAULT_SYSTEMS
from elopipe.read.sources import path_param
from elopipe.runtime.interrupt import graceful_stop
from flows._stages import stage_line, stage_notice, watcher_lines_as
from flows.pipeline import pipeline
from flows.prefect_env import quiet_prefect_console
from flows.publish import DEFAULT_MAX_LISTS


@flow(name="drop_folder", validate_parameters=False)
def drop_folder(
    inbox: str,
    db: str = DEFAULT_DB,
    systems: list[str] = list(DEFAULT_SYSTEMS),  # noqa: B006 - Prefect stores defaults; never mutated
    out: str = "out",
    through: dt.date | None = None,
    settle_seconds: float = 2.0,
    incomplete_wait: float = DEFAULT_INCOMPLETE_WAIT,
    max_lists: int | None = DEFAULT_MAX_LISTS,
) -> dict[str, int]:
    """Process what has arrived in `inbox`. Returns counts: arrived, processed, quarantined, left,
    changed (while read: left in the inbox), returned (filed away earlier and changed since: moved
    back to the inbox)."""
    inbox_p = Path(inbox).resolve()
    watcher_lines_as("drop_folder")
    # a flow run of `elopipe serve`: its terminal shows elopipe's lines; Prefect's own (a run
    # cancelled by a stop: "Crash detected", task states) are in the UI
    quiet_prefect_console(everything=True)
    held = ExitStack()
    try:
        held.enter_context(inbox_lock(inbox_p))
    except InboxBusyError as exc:  # a watch, or a run of another `serve`, takes the files
        stage_line("drop_folder", f"{exc}: this run takes no file")
        return dict.fromkeys(("arrived", "processed", "quarantined", "left", "changed", "returned"), 0)
    with held:
        counts = _one_pass(inbox_p, db, systems, out, through, settle_seconds, incomplete_wait, max_lists)
    stage_line("drop_folder", f"{inbox_p}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    return counts


def _one_pass(
    inbox_p: Path,
    db: str,
    systems: list[str],
    out: str,
    through: dt.date | None,
    settle_seconds: float,
    incomplete_wait: float,
    max_lists: int | None,
) -> dict[str, int]:
    """`drop_folder`'s work, the inbox's lock held."""
    filed = FiledAway(inbox_p)
    stats = WatchStats(returned=filed.return_changed())
    arrived, taken = collect_arrived(inbox_p, settle_seconds, incomplete_wait)
    if arrived:

        def run(files: list[Path]) -> dict[Path, FileOutcome]:
            request = RunRequest(
                tuple(path_param(f) for f in files), db, tuple(systems), out, through, max_lists=max_lists
            )
            result = pipeline(request)
            return outcomes_by_path(files, result.ingest.files, stopped=result.stopped)

        # `elopipe serve` runs this in a child process of the terminal's: a Ctrl-C reaches it too,
        # and stops it at the next safe point (files not reached stay in the inbox), not mid-write.
        with graceful_stop(on_first=lambda _msg: stage_notice("drop_folder", "stopping at the next safe point")):
            run_batch_and_file(inbox_p, arrived, run, stats, taken, filed)
    return {
        "arrived": len(arrived),
        "processed": stats.processed,
        "quarantined": stats.quarantined,
        "left": stats.left,
        "changed": stats.changed,
        "returned": stats.returned,
    }
