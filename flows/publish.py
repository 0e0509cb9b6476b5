"""`publish` flow: lists and reports (elopipe.publish.publish_outputs) for the lists that changed.

Which lists: every changed one, or with `max_lists` the most recent changed lists plus older
changed ones this output folder already holds (elopipe.publish_plan). An output folder that has never received this
store's lists for a system gets its latest list even when nothing changed, so a new `--out` is
never left empty. Lists an interrupted publish left unwritten (a kill, a full disk) are written
too, even when nothing changed (elopipe.publish_plan.publish_recorded). A file that cannot be
written ends that system's publish with one line naming the file and the reason; the flow goes
on with the other systems and returns the failures.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from elopipe import publish_plan
from elopipe.publish_plan import DEFAULT_MAX_LISTS
from elopipe.store import DEFAULT_DB, open_writer
from flows._stages import stage_line, stage_warning

__all__ = ["DEFAULT_MAX_LISTS", "PublishResult", "publish", "publish_system"]


@dataclass
class PublishResult:
    """What one system's publish did: `paths` written, `resumed` pending lists finished that had
    not changed, `failure` one line when it stopped on a file it could not write."""

    paths: list[Path] = field(default_factory=list)
    resumed: list[dt.date] = field(default_factory=list)
    failure: str | None = None


@task(name="publish_system", task_run_name="publish {system}", cache_policy=NO_CACHE, persist_result=False)
def publish_system(db: str, system: str, out: str, list_dates: list[dt.date] | None) -> PublishResult | None:
    """Write `system`'s outputs for `list_dates` (None: the latest list) and any list left pending
    into `out`. None when the system has no list at all (e.g. fide-blitz on files without blitz
    events): not a failure. A write error is returned in `failure`, not raised."""
    from elopipe.publish.atomic import describe

    # A writer connection, not a reader: inside `pipeline` this process already holds the
    # store's lock, and DuckDB refuses a read-only connection next to a read-write one.
    with open_writer(db) as con:
        try:
            paths, resumed = publish_plan.publish_recorded(con, db, system, Path(out), list_dates)
        except LookupError:
            return None
        except OSError as exc:
            return PublishResult(failure=describe(exc))
    return PublishResult(paths, resumed)


@flow(name="publish", validate_parameters=False)
def publish(
    db: str | os.PathLike[str] = DEFAULT_DB,
    systems: list[str] | tuple[str, ...] = ("fide",),
    out: str | os.PathLike[str] = "out",
    changed: dict[str, list[dt.date]] | None = None,
    max_lists: int | None = DEFAULT_MAX_LISTS,
) -> tuple[list[Path], list[str]]:
    """Publish each system's changed lists (`changed`, from rate_lists; None: the latest list of
    each system) to `out`, and the lists an interrupted publish left pending; `max_lists` as in
    elopipe.publish_plan.select_dates (None: no limit). A system with no list at all is
    reported and skipped, not an error. Returns (paths written, one line per failed system)."""
    db_s, out_p = os.fspath(db), Path(out)
    written: list[Path] = []
    notes: list[str] = []
    failures: list[str] = []
    for system in systems:
        dates = None if changed is None else list(changed.get(system, []))
        pending = publish_plan.pending_dates(out_p, db_s, system)
        if dates is not None and not dates and not pending:
            if publish_plan.has_published(out_p, db_s, system):
                notes.append(f"{system}: unchanged")
                continue
            dates = None  # a fresh output folder gets the latest list
        held_back = 0
        if dates is not None:
            dates, held_back = publish_plan.select_dates(
                dates, publish_plan.published_dates(out_p, db_s, system), max_lists
            )
        result = publish_system(db_s, system, os.fspath(out_p), dates)
        if result is None:
            notes.append(f"{system}: no list")
            continue
        written.extend(result.paths)
        if result.failure:
            left = len(publish_plan.pending_dates(out_p, db_s, system))
            failures.append(f"{system}: {result.failure}; {left} lists left to write, the next run writes them")
            stage_warning("publish", failures[-1])
            continue
        kept = f" ({held_back} older changed lists kept in the store only)" if held_back else ""
        resumed = f" (finished an interrupted publish: {len(result.resumed)} lists)" if result.resumed else ""
        notes.append(f"{system}: {len(result.paths)} files{kept}{resumed}")
    stage_line("publish", f"{'; '.join(notes) or 'stopped'} -> {out_p}")
    return written, failures
