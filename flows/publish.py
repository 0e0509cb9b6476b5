"""`publish` flow: lists and reports (elopipe.publish.publish_outputs) for the lists that changed.

Which lists (elopipe.publish.plan.publish_changed): every changed one, or with `max_lists` the
most recent changed lists plus older changed ones this output folder already holds; the lists of
rating runs this folder has not taken (a `rate` on its own, a run killed before publishing); and
the lists an interrupted publish (a kill, a full disk) left unwritten, even when nothing changed;
and the lists a run stopped before publishing (a Ctrl-C, a SIGTERM) had changed: the stop records
them pending in the folder's ledger before the first list is written, so a run aborted in one
system's publish leaves the other systems' lists to the next run as well.
An output folder that has never received this store's lists for a system gets its latest list
even when nothing changed, so a new `--out` is never left empty. A file that cannot be written
ends that system's publish with one line naming the file and the reason; the flow goes on with
the other systems and returns the failures.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from elopipe.jobs import publish as jobs
from elopipe.jobs.requests import PublishListsRequest
from elopipe.publish import plan as publish_plan
from elopipe.publish.kept_lines import retired_line, set_aside_line
from elopipe.publish.plan import DEFAULT_MAX_LISTS, SystemPublish
from elopipe.runtime.interrupt import stop_requested
from elopipe.runtime.words import bar, plural
from flows._stages import stage_line, stage_progress, stage_start, stage_warning

__all__ = ["DEFAULT_MAX_LISTS", "NotPublished", "publish", "publish_system"]


@dataclass(frozen=True)
class NotPublished:
    """A system with nothing to publish: no list in the store, or none at a date asked for.
    `reason`: the store's words for it."""

    reason: str


@task(name="publish_system", task_run_name="publish {system}", cache_policy=NO_CACHE, persist_result=False)
def publish_system(
    db: str,
    system: str,
    out: str,
    changed: list[dt.date] | None,
    max_lists: int | None = DEFAULT_MAX_LISTS,
    own_run: int | None = None,
) -> SystemPublish | str | NotPublished:
    """Write `system`'s outputs into `out` (elopipe.publish.plan.publish_changed). NotPublished
    when the system has no list (e.g. fide-blitz on files without blitz events) or none at one of
    `changed`. A file that cannot be written is returned as one line (str), not raised."""
    from elopipe.publish.atomic import describe

    try:
        return jobs.publish_changed(
            db, system, out, changed, max_lists, own_run, progress=lambda done, total: _progress(system, done, total)
        )
    except LookupError as exc:
        return NotPublished(str(exc).strip("'\""))
    except OSError as exc:
        return describe(exc)


def _stopped_before(request: PublishListsRequest, systems: tuple[str, ...] | list[str]) -> str:
    """The stage line's note for a stop before `systems` were published: their changed lists are
    pending in the output folder (recorded before the first publish), and the next run writes
    them even though its rating changes nothing."""
    left = sum(len(publish_plan.pending_dates(Path(request.out), request.db, s)) for s in systems)
    return f"stopped before {systems[0]}" + (f" ({plural(left, 'list')} left for the next run)" if left else "")


def _say_suspects(db: str, published: dict[str, dt.date]) -> None:
    """Say of the latest list each system published (`published`) the line `elopipe publish`
    says of the list it wrote (`elopipe.publish.list_suspects`): pairs of players on it suspected
    to be one person. One read of the store's players for all the systems (`suspects`: 0.2-0.3
    CPU-s on a 3-month store); a run that published no list reads nothing."""
    from elopipe.publish.list_suspects import suspects_line

    for system, pairs in jobs.suspects_on_lists(db, published).items():
        stage_warning("publish", f"{system}: {suspects_line(published[system], pairs, db)}")


def _progress(system: str, done: int, total: int) -> None:
    stage_progress("publish", f"{system} {bar(done, total)} lists, reports and player pages")


@flow(name="publish", validate_parameters=False)
def publish(request: PublishListsRequest) -> tuple[list[Path], list[str]]:
    """Publish each system's changed lists (`request.changed`, from rate_lists; None: the latest
    list of each system) to `request.out`, with the lists the folder missed (see the module
    docstring); `request.max_lists` as in elopipe.publish.plan.select_dates (None: no limit);
    `request.rating_runs`: the rating run that produced each system's `changed`. A system with
    no list at all is reported and skipped, not an error; one whose changed lists are not in the
    store is named in a warning. A stop request (elopipe.runtime.interrupt) ends it between two
    systems. Returns (paths written, one line per system that failed)."""
    db_s, out_p = request.db, Path(request.out)
    changed, max_lists, rating_runs = request.changed, request.max_lists, request.rating_runs
    written: list[Path] = []
    notes: list[str] = []
    failures: list[str] = []
    published: dict[str, dt.date] = {}  # the latest list each system published: its suspects are said
    # Every system's changed lists are recorded pending before the first is written: a run
    # aborted in one system's publish (a second Ctrl-C, a kill) leaves the others' for the next
    # run too, whose rating changes nothing.
    for system in request.systems:
        publish_plan.defer(out_p, db_s, system, list((changed or {}).get(system, [])), max_lists)
    for i, system in enumerate(request.systems):
        if stop_requested():  # each list is written whole, its ledger entry after: a safe point
            notes.append(_stopped_before(request, request.systems[i:]))
            break
        stage_start("publish", system)
        dates = None if changed is None else list(changed.get(system, []))
        own_run = (rating_runs or {}).get(system)
        result = publish_system(db_s, system, os.fspath(out_p), dates, max_lists, own_run)
        if isinstance(result, NotPublished) and not dates:
            notes.append(f"{system}: no list in the store")
        elif isinstance(result, NotPublished):  # the rating said these lists changed
            notes.append(f"{system}: not published")
            stage_warning(
                "publish", f"{system}: the rating changed {plural(len(dates or []), 'list')}, but {result.reason}"
            )
        elif isinstance(result, str):
            left = len(publish_plan.pending_dates(out_p, db_s, system))
            failures.append(f"{system}: {result}; {plural(left, 'list')} left to write, the next run writes them")
            notes.append(f"{system}: failed")
            stage_warning("publish", failures[-1])
        elif result.unchanged:
            notes.append(f"{system}: unchanged")
            if result.gone is not None:
                stage_warning("publish", result.gone.line(out_p))
        else:
            written.extend(result.paths)
            if result.latest is not None:
                published[system] = result.latest
            if result.set_aside:
                stage_warning("publish", f"{system}: {set_aside_line(result.set_aside)}")
            if result.retired:
                stage_warning("publish", f"{system}: {retired_line(result.retired)}")
            if result.gone is not None:
                stage_warning("publish", result.gone.line(out_p))
            extra = (
                [f"{plural(result.held_back, 'older changed list')} kept in the store only"] if result.held_back else []
            )
            if result.resumed:
                extra.append(f"finished an interrupted publish: {plural(len(result.resumed), 'list')}")
            if result.kept:
                extra.append(f"{result.kept:,} unchanged")
            if result.missed:
                extra.append(f"{plural(len(result.missed), 'list')} of an earlier rating not yet published")
            written_n = len(result.paths) - result.kept
            notes.append(f"{system}: {plural(written_n, 'file')}" + (f" ({'; '.join(extra)})" if extra else ""))
    if published and not stop_requested():
        _say_suspects(db_s, published)
    stage_line("publish", f"{'; '.join(notes)} -> {out_p}")
    return written, failures
