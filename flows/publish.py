"""`publish` flow: lists and reports (elopipe.publish.publish_outputs) for the lists that changed.

Which lists: every changed one, or with `max_lists` the most recent changed lists plus older
changed ones this output folder already holds (elopipe.publish_plan). An output folder that has never received this
store's lists for a system gets its latest list even when nothing changed, so a new `--out` is
never left empty.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import datetime as dt
import os
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from elopipe import publish_plan
from elopipe.publish_plan import DEFAULT_MAX_LISTS
from elopipe.store import DEFAULT_DB, open_writer
from flows._stages import stage_line

__all__ = ["DEFAULT_MAX_LISTS", "publish", "publish_system"]


@task(name="publish_system", task_run_name="publish {system}", cache_policy=NO_CACHE, persist_result=False)
def publish_system(db: str, system: str, out: str, list_dates: list[dt.date] | None) -> list[Path] | None:
    """Write `system`'s outputs for `list_dates` (None: the latest list) into `out`. None when the
    system has no list at all (e.g. fide-blitz on files without blitz events): not a failure."""
    from elopipe.publish.outputs import publish_outputs

    # A writer connection, not a reader: inside `pipeline` this process already holds the
    # store's lock, and DuckDB refuses a read-only connection next to a read-write one.
    with open_writer(db) as con:
        try:
            return publish_outputs(con, system, out, list_dates=list_dates)
        except LookupError:
            return None


@flow(name="publish", validate_parameters=False)
def publish(
    db: str | os.PathLike[str] = DEFAULT_DB,
    systems: list[str] | tuple[str, ...] = ("fide",),
    out: str | os.PathLike[str] = "out",
    changed: dict[str, list[dt.date]] | None = None,
    max_lists: int | None = DEFAULT_MAX_LISTS,
) -> list[Path]:
    """Publish each system's changed lists (`changed`, from rate_lists; None: the latest list of
    each system) to `out`; `max_lists` as in elopipe.publish_plan.select_dates (None: no limit).
    A system with no list at all is reported and skipped, not an error."""
    db_s, out_p = os.fspath(db), Path(out)
    written: list[Path] = []
    notes = []
    for system in systems:
        dates = None if changed is None else list(changed.get(system, []))
        if dates is not None and not dates:
            if publish_plan.has_published(out_p, db_s, system):
                notes.append(f"{system}: unchanged")
                continue
            dates = None  # a fresh output folder gets the latest list
        held_back = 0
        if dates is not None:
            dates, held_back = publish_plan.select_dates(
                dates, publish_plan.published_dates(out_p, db_s, system), max_lists
            )
        paths = publish_system(db_s, system, os.fspath(out_p), dates)
        if paths is None:
            notes.append(f"{system}: no list")
            continue
        publish_plan.remember(out_p, db_s, system, dates or publish_plan.dates_in_paths(paths, system))
        written.extend(paths)
        kept = f" ({held_back} older changed lists kept in the store only)" if held_back else ""
        notes.append(f"{system}: {len(paths)} files{kept}")
    stage_line("publish", f"{'; '.join(notes)} -> {out_p}")
    return written
