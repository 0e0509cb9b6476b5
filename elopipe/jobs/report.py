"""The report job: a tournament's performance report (or every tournament's of a system) from
the store, read-only, into `OUT/reports/SYSTEM` (`elopipe.publish.reports`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elopipe.jobs.requests import ReportRequest
from elopipe.runtime.errors import ElopipeError
from elopipe.runtime.hints import command_hint

if TYPE_CHECKING:
    import polars as pl

    from elopipe.publish.rules_legend import AppliedRules


@dataclass(frozen=True)
class TournamentView:
    """One tournament's report as the terminal shows it: its `name`, the `header` fields
    (`elopipe.publish.report_header`), the FFE working (`ffe`: empty for the other systems), the
    performance table (`perf`), the lines of its Norms section and the FIDE rules it was rated
    under (`rules`, for the legend; None: not a FIDE system)."""

    name: str
    header: dict[str, Any]
    ffe: pl.DataFrame
    perf: pl.DataFrame
    norm_lines: list[str]
    rules: AppliedRules | None = None


class NothingRated(ElopipeError):
    """A tournament of which nothing is rated under the system: the reason (`str`), the
    tournament's `name` and its `participants` table when it has participants (else None)."""

    def __init__(self, text: str, name: str, participants: pl.DataFrame | None) -> None:
        super().__init__(text)
        self.name, self.participants = name, participants


class NothingToReport(ElopipeError):
    """`--all` on a system under which no tournament is rated."""


@dataclass
class Reported:
    """The tournaments reported (`ids`), the files written under `target`, and the files elopipe
    had not written that were under their names, kept under `.elopipe-kept/` first ((name, kept
    as), relative to the output folder: `elopipe.publish.manifest`)."""

    ids: list[int]
    target: Path
    written: list[Path] = field(default_factory=list)
    set_aside: list[tuple[str, str]] = field(default_factory=list)


def report(
    request: ReportRequest,
    on_note: Callable[[str], None],
    show: Callable[[TournamentView], None],
    progress: Callable[[int, int], None] | None = None,
) -> Reported:
    """Write the report of `request.tournament` (or of every tournament rated under
    `request.system` when None): `on_note` hears that the tournament asked for is a duplicate
    export or a part of an event held in several files (the event is reported); `show` gets a
    single tournament's report before its files are written, through the output folder's
    manifest (`manifest.protecting`: a user's file under their names is kept); `progress(done,
    total)` hears how far the reports are, as a publish's (`elopipe.publish.workers.Ticker`: at
    least every second while they are written, in reports). Raises
    LookupError for a tournament the store does not hold, `NothingRated` when nothing of it is
    rated under the system, `NothingToReport` when no tournament is."""
    from elopipe.identity.events import event_of
    from elopipe.publish.manifest import protecting
    from elopipe.publish.norms_report import norm_section, section_lines
    from elopipe.publish.outputs import REPORT_ROWS_CHUNK
    from elopipe.publish.report_header import report_header
    from elopipe.publish.report_rows import fetch_report_rows
    from elopipe.publish.reports import (
        canonical_event,
        ffe_frame,
        match_tournament,
        nothing_rated_reason,
        performance_frame,
        rated_tournaments,
        tournament_info,
        write_report,
    )
    from elopipe.publish.rules_legend import applied_rules_of
    from elopipe.publish.workers import Ticker
    from elopipe.store.connect import open_reader

    system, db = request.system, request.db
    con = open_reader(db)
    done = Reported([], request.out / "reports" / system)
    try:
        if request.tournament is None:
            done.ids = rated_tournaments(con, system)
        else:
            asked = match_tournament(con, request.tournament, on_note)
            canonical = canonical_event(con, asked) or asked
            done.ids = [event_of(con, canonical)]
            if canonical != asked:
                on_note(f"tournament {asked} is a duplicate export of tournament {canonical}: reporting {canonical}")
            if done.ids[0] != canonical:
                on_note(
                    f"tournament {canonical} is a part of event {done.ids[0]}, held in several files:"
                    " reporting the event"
                )
        if not done.ids:
            raise NothingToReport(
                f"nothing is rated under {system!r} in {db}: run `{command_hint(f'rate --system {system}', db)}` first"
            )
        if request.tournament is not None:  # before the folder is touched: nothing is written
            tid = done.ids[0]
            name = str(tournament_info(con, tid).get("name") or f"Tournament {tid}")
            why = nothing_rated_reason(con, tid, system, db)
            if why is not None:
                participants = performance_frame(con, tid, system) if why.participants else None
                raise NothingRated(why.text, name, participants)
            show(
                TournamentView(
                    name,
                    report_header(con, tid, system),
                    ffe_frame(con, tid, system),
                    performance_frame(con, tid, system),
                    section_lines(norm_section(con, tid, system)),
                    applied_rules_of(con, [tid], system).get(tid),
                )
            )
        rows = None
        with protecting(request.out) as manifest, Ticker(len(done.ids), progress) as ticker:
            for i, tid in enumerate(done.ids):
                if request.tournament is None and i % REPORT_ROWS_CHUNK == 0:  # every report: read set-wise
                    rows = fetch_report_rows(con, system, done.ids[i : i + REPORT_ROWS_CHUNK])
                done.written.extend(write_report(con, tid, system, done.target, rows))
                ticker.advance()
        done.set_aside = manifest.set_aside
    finally:
        con.close()
    return done
