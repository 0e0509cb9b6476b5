"""A FIDE run resumed from the checkpoint before the first period its new data touches (issue 27).

`plan` digests what each period's events give the engine (`checkpoint.inputs_by_period`, in
DuckDB, without reading a game into Python) and compares the digests with those the last run
kept (``rating_checkpoints``). The first period whose digest differs, or the period after the
last list when the new data comes later, is where the run starts: `run` reads the games and
entries of the events of that period and the later ones only, the engine's state before it
(`checkpoint.load`) and the lists still in force, computes the lists from there
(`engine.run_periods`), writes the lists whose rows changed (`run.store_changes`: the earlier
lists, events left out and rates of play stay), keeps the new checkpoints and counts the
summary from the store.

Whenever the checkpoint cannot be trusted the run computes every period (`plan.reason` says
why, ``RateSummary.full_reason``): no checkpoint (a store rated by an older version, after a
preview or a run that left events out), new data in the first period, a period missing, a stored
list whose rows are not those the checkpoint saw (a hand edit), no rated game from the start on,
or a failure of the resumed computation. Every list it writes is the list a computation from the
first period gives: the periods before the start have the same inputs, so the same state.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl

from elopipe.rating import event_inputs, store_io
from elopipe.rating.fide import checkpoint
from elopipe.rating.fide.params import FideParams
from elopipe.rating.periods import get_scheme
from elopipe.rating.summary import RO_MARK_POINTS, RateSummary, assumed_events, ro_far


@dataclass
class Plan:
    """Where a run starts. tournaments: `store_io.load_tournaments`; periods: each event's period
    (tournament_id, list_date; null: none); inputs, empty: `checkpoint.inputs_by_period` (None
    when no checkpoint is kept: `digest` after the run, when the engine's frames are freed); start:
    the first period to compute (None: every period, `reason` says why); lists: the kept list
    dates, in order; players: `store_io.load_players` as the digests read them (None: not yet),
    for a resumed run's engine (read once, not twice: issue 27); edited: the stored results are
    not those the last run left, so every list is compared (`compare_from`)."""

    tournaments: pl.DataFrame
    periods: pl.DataFrame
    inputs: dict[dt.date, str] | None = None
    empty: str = ""
    start: dt.date | None = None
    reason: str = ""
    lists: list[dt.date] = dataclasses.field(default_factory=list)
    players: pl.DataFrame | None = None
    shared: str | None = None
    edited: bool = False

    def compare_from(self, stored: dict[dt.date, str]) -> dt.date | None:
        """The first list whose rows a run must compare with the stored ones whatever the period
        digests say: the first stored (`stored`: the period digests kept) when the stored results
        are not those the last run left (`edited`: a hand edit, a deleted row), else None (the
        first period whose digest changed)."""
        return min(stored) if self.edited and stored else None

    def digest(self, con: duckdb.DuckDBPyConnection, system: str, fp: FideParams) -> tuple[dict[dt.date, str], str]:
        """`inputs` and `empty`, digested now if they were not yet (`shared` with them)."""
        if self.inputs is None:
            if self.players is None:
                self.players = store_io.load_players(con)
            self.inputs, self.empty, self.shared = checkpoint.inputs_by_period(
                con, system, fp.as_dict(), self.periods, self.players
            )
        return self.inputs, self.empty


def plan(con: duckdb.DuckDBPyConnection, system: str, fp: FideParams) -> Plan:
    """Digest each period's inputs and find where the run can start (`Plan`)."""
    scheme = get_scheme("fide")
    # the events' game dates as `rate` read them with their digests (one pass over the games), if it did
    tours = store_io.load_tournaments(con, event_inputs.reused(con))
    periods = scheme.assign(
        tours.select("tournament_id", "eff_start", "eff_end", "date_source", "n_games"),
        end_col="eff_end",
        start_col="eff_start",
    ).select("tournament_id", "list_date")
    p = Plan(tours, periods)
    kept = checkpoint.stored(con, system)
    lists = sorted(d for d, (_, h) in kept.items() if h is not None)
    p.lists = lists
    if not lists:
        p.reason = "no checkpoint of the engine's state is kept (first run, a preview, or events left out)"
        return p
    by_period, empty = p.digest(con, system, fp)
    if lists != scheme.lists_between(lists[0], lists[-1]):
        p.reason = "the kept checkpoints miss a period"
        return p
    changed = {d for d, (i, _) in kept.items() if i != by_period.get(d, empty)}
    changed |= {d for d in by_period if d not in kept}
    if not changed:
        p.reason = "no period's inputs changed, but the stored results did"
        p.edited = True
        return p
    start = min(min(changed), scheme.next_list(lists[-1] + dt.timedelta(days=1)))
    if start <= lists[0]:
        shared = _shared_changed(checkpoint.stored_shared(con, system), p.shared)
        p.reason = _first_period_reason(changed, lists, shared)
        return p
    before = [d for d in lists if d < start]
    if checkpoint.list_hashes(con, system, before) != {d: kept[d][1] for d in before}:
        p.reason = "a stored list was changed since it was computed"
        p.edited = True
        return p
    p.start = start
    return p


#: what every period reads, part by part (`checkpoint.shared_parts`), in the words `rate` says
SHARED_WORDS = {
    "options": "the options (the rules, a parameter, --ro-from, --no-moves or --unknown-tc)",
    "lists": "an imported official list (for rapid or blitz, the standard lists)",
    "code": "elopipe's rating code (another version)",
    "dates": "a stored date crossed the latest date a file may carry (the machine's date moved on)",
    "undated": "an event without dates (every period reads its rows)",
}
#: every period's inputs changed, and what changed is not known (checkpoints of an older version)
EVERY_PERIOD = (
    "every period's inputs changed (the options, an imported official list, the players' facts or"
    " elopipe's rating code)"
)
_OWN = "games, events, players or identity decisions"


def _shared_changed(kept: dict[str, str] | None, now: str | None) -> list[str] | None:
    """The parts of what every period reads (`SHARED_WORDS`) that changed since the checkpoints
    were kept: [] none, None unknown (no part kept: a store rated by an older version)."""
    if kept is None or now is None:
        return None
    parts: dict[str, str] = json.loads(now)
    return [k for k in SHARED_WORDS if parts.get(k) != kept.get(k)]


def _first_period_reason(changed: set[dt.date], lists: list[dt.date], shared: list[str] | None = None) -> str:
    """Why a run computes from the first period (`lists[0]`) when the inputs of the periods `changed`
    changed: what every period reads (`shared`: its parts that changed, None: unknown), every
    period's own inputs, a period before the first list, or the first's: named, so that the user
    who imported a list, merged players or corrected a file learns which."""
    if shared:
        return "every period's inputs changed: " + "; ".join(SHARED_WORDS[k] for k in shared)
    if changed >= set(lists):
        if shared is None and len(lists) > 1:
            return EVERY_PERIOD
        if len(lists) > 1:
            return f"the inputs of every period changed: their {_OWN}"
    if min(changed) < lists[0]:
        # a merge or a split moves games of periods before the first list too: not only new files
        return (
            f"the inputs of a period before the first list ({lists[0]:%Y-%m}) changed, the period of"
            f" {min(changed):%Y-%m}: new games, a corrected file or an identity decision"
        )
    first = f"the inputs of the first period ({lists[0]:%Y-%m}) changed: its {_OWN}"
    if shared is None and len(lists) == 1:
        # one list, checkpoints of an older version: what every period reads may have changed too
        return f"{first}, or what every period reads (the options, an imported official list or elopipe's rating code)"
    return first


def summary_from_store(
    con: duckdb.DuckDBPyConnection,
    system: str,
    list_dates: list[dt.date],
    players: pl.DataFrame,
    tournaments: pl.DataFrame,
) -> RateSummary:
    """The counts of `run.rate_fide`'s summary from `system`'s stored results (every list, the
    earlier ones kept and the later ones just written): what a run from the first period counts.
    `list_dates`: every list; `players`, `tournaments`: the store's (`store_io`), for the names."""
    s = RateSummary(system=system)
    s.lists = len(list_dates)
    if list_dates:
        s.first_list, s.last_list = list_dates[0], list_dates[-1]
    q = "SELECT {} FROM {} WHERE system = ?"

    def one(what: str, table: str, *extra: Any) -> Any:
        return con.execute(q.format(what, table) + (" AND list_date = ?" if extra else ""), [system, *extra]).fetchall()

    if list_dates:
        s.players_rated = int(one("count(rating)", "rating_lists", s.last_list)[0][0])
    s.new_ratings = int(one(r"count(*) FILTER (WHERE regexp_matches(flags, '\bnew\b'))", "rating_lists")[0][0])
    # two queries: a DISTINCT under a FILTER hashes every row's game (0.10 CPU-s on 3 months, not 0.01)
    s.games_counted = int(one("count(*) FILTER (WHERE counted)", "rating_changes")[0][0])
    s.unknown_tc_games = int(con.execute(q.format("count(DISTINCT game_id)", "rating_changes") + " AND tc_assumed",
                                         [system]).fetchall()[0][0])  # fmt: skip
    rows = con.execute(q.format("reason, count(*)", "rating_changes") + " AND NOT counted GROUP BY 1 ORDER BY 1",
                       [system]).fetchall()  # fmt: skip
    s.not_counted = {r: int(n) for r, n in rows}
    rows = con.execute(
        q.format("reason, count(DISTINCT tournament_id)", "rating_skips") + " GROUP BY 1 ORDER BY 1", [system]
    ).fetchall()
    s.events_skipped = {r: int(n) for r, n in rows}
    s.discrepancies = int(one("count(*)", "rating_discrepancies")[0][0])
    far = store_io.query(
        con,
        "SELECT tournament_id::BIGINT AS tournament_id, player_id::BIGINT AS player_id, ro::BIGINT AS ro,"
        " ro_source, file_rating::BIGINT AS file_rating FROM tournament_ratings WHERE system = ?"
        f" AND abs(ro - file_rating) >= {RO_MARK_POINTS}",
        [system],
    )
    ro_far(s, far, players, tournaments)
    assumed = store_io.query(
        con,
        "SELECT tournament_id::BIGINT AS tournament_id, game_id::BIGINT AS game_id, tc_assumed"
        " FROM rating_changes WHERE system = ? AND tc_assumed",
        [system],
    )
    s.assumed_events = assumed_events(assumed, tournaments)
    return s
