"""`rate_lists` flow: recompute the rating periods new data touched, and every later one.

A thin wrapper over the rating job (`elopipe.jobs.rate`, over `elopipe.rating.run.rate`, which
decides from per-period input digests which periods changed); this flow runs it per system, one
task each, on one writer connection.
"""

from __future__ import annotations

import flows._env  # noqa: F401  (Prefect's environment, before Prefect is imported)

# isort: split
import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from elopipe.jobs import rate as jobs
from elopipe.jobs.requests import RateListsRequest, RateRequest
from elopipe.runtime.interrupt import stop_requested
from flows._stages import stage_line, stage_start, stage_warning

if TYPE_CHECKING:
    from elopipe.rating.summary import RateSummary


@dataclass
class RateFlowSummary:
    """Per system: its `RateSummary` (None: the store held no game to rate) and the list dates
    whose content changed."""

    summaries: dict[str, RateSummary | None] = field(default_factory=dict)
    changed: dict[str, list[dt.date]] = field(default_factory=dict)

    def line(self) -> str:
        parts = []
        for system, dates in self.changed.items():
            if not dates:
                parts.append(f"{system}: no list changed")
            elif len(dates) == 1:
                parts.append(f"{system}: list {dates[0]} changed")
            else:
                parts.append(f"{system}: {len(dates)} lists changed ({min(dates)} .. {max(dates)})")
        return "; ".join(parts) or "no rating system requested"


@task(name="rate", task_run_name="rate {request.system}", cache_policy=NO_CACHE, persist_result=False)
def rate_system(request: RateRequest) -> tuple[RateSummary | None, list[dt.date]]:
    """The rating job (`elopipe.jobs.rate.rate_system`) for one system; its RateSummary and the
    list dates it rewrote."""
    outcome = jobs.rate_system(request)
    return outcome.summary, outcome.changed


@flow(name="rate_lists", validate_parameters=False)
def rate_lists(request: RateListsRequest) -> RateFlowSummary:
    """Rate every system in `request.systems` (e.g. 'fide', 'ffe') up to the list of
    `request.through` (None: all data), under the run's policies (`elopipe.jobs.rate.system_request`).
    A stop request (elopipe.runtime.interrupt) ends it between two systems: the systems not
    reached are not in the summary. Raises whatever the engine raises for an unknown system
    (ValueError/KeyError)."""
    from elopipe.rating.param_checks import unknown_tc_policy

    out = RateFlowSummary()
    for system in request.systems:
        if stop_requested():  # each system's rating is its own transaction: a safe point between two
            break
        stage_start("rate", system)
        summary, out.changed[system] = rate_system(jobs.system_request(request, system))
        out.summaries[system] = summary
        if summary is None:
            continue
        if gone := summary.removed_line():  # lists are stored data: their removal is said
            stage_line("rate", gone)
        for failed in summary.failed_events:
            stage_warning("rate", failed)  # a tournament left unrated: the other events were rated
        if far := ro_far_line(system, summary, request.db):
            stage_warning("rate", far)
        if assumed := assumed_line(system, summary, unknown_tc_policy(request.unknown_tc), request.db):
            stage_warning("rate", assumed)
    stage_line("rate", out.line())
    return out


def ro_far_line(system: str, summary: RateSummary, db: str | None = None) -> str | None:
    """One warning when players' Ro lies far from their file's rating (`RateSummary.ro_far`), naming
    the largest gap and what fixes it (the command with `--db` for a store `db` that is not the
    default); None when there is none."""
    from elopipe.rating.summary import RO_MARK_POINTS
    from elopipe.runtime.hints import command_hint

    players, worst = summary.ro_far, summary.ro_far_worst
    if not players or not worst:
        return None
    w = worst[0]
    return (
        f"{system}: the Ro of {players} player{'s' if players != 1 else ''} is {RO_MARK_POINTS} or more points from"
        f" the file's rating (largest: {w.name}, {w.event}: Ro {w.ro}, file {w.file_rating}); import the official"
        f" lists in force (`{command_hint('lists import FILE --system fide', db)}`) or rate with --ro-from file"
    )


def assumed_line(system: str, summary: RateSummary, rate_class: str, db: str | None = None) -> str | None:
    """One warning when events went to the `rate_class` list (`--unknown-tc`) because nothing in
    their files says their rate of play (`RateSummary.assumed_events`), naming the largest, what
    fixes it and the query that lists them all; None when there is none."""
    from elopipe.rating.summary import sql_assumed
    from elopipe.runtime.hints import command_hint

    events = summary.assumed_events
    if not events:
        return None
    name, games = events[0]
    many = len(events) != 1
    return (
        f"{system}: {len(events)} event{'s' if many else ''} ({summary.unknown_tc_games} games) went to the"
        f" {rate_class} list as nothing in {'their' if many else 'its'} files says the rate of play (largest:"
        f" {name}, {games} games); give a rapid or blitz event its time control (PGN TimeControl, TRF 122),"
        f" or set --unknown-tc (ELOPIPE_UNKNOWN_TC); `{command_hint(sql_assumed(summary.system), db)}` lists them"
    )
