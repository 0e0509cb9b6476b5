"""What a rating run reports back (`elopipe.rating.run.rate`): one `RateSummary`, whatever the engine
(`elopipe.rating.systems.RateFn`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from dataclasses import dataclass, field

import polars as pl

from elopipe.runtime.words import plural


@dataclass
class RateSummary:
    """Counts of one `rate` run.

    lists: lists computed (in memory); first_list/last_list: their range;
    first_changed: earliest list rewritten in the store (None: nothing changed, nothing
    written); lists_written: lists stored by this run; changed_lists: their dates (FIDE: a
    list whose inputs changed but whose rows came out identical is not rewritten; None: not
    tracked, every list from first_changed on was rewritten); players_rated: players with a
    rating on the last list; new_ratings: first ratings published over all lists;
    games_counted: game sides counted for a rated player (each game counts up to twice);
    not_counted: game sides not counted, by reason; events_skipped: events left out, by
    reason (e.g. 'no_dates', 'rate_class:rapid'); unknown_tc_games: rated games whose rate of
    play nothing said (no time control, name, site or rounds per day: `--unknown-tc` assumed,
    flagged); assumed_events: their events, (name, games), the largest first; discrepancies:
    file rating ≠ list in force;
    failed_events: one line per tournament whose rating failed and was left out
    (`elopipe.rating.faults`), the other events being rated; kept_lists: a preview's
    (``through``) stored lists dated after it, kept as they were, not recomputed; ro_far: the
    players whose Ro in an event is `RO_MARK_POINTS` or more from the rating the event's file
    gives them, ro_far_entries: those (event, player) rows, ro_far_worst: the largest of them
    (`RoFar`, largest first; FIDE systems); ro_from: the run's Ro policy
    (`elopipe.rating.fide.params.RO_FROM_POLICIES`; None: a system without one);
    removed_runs: the runs of a scenario that a stopped run left, removed before this one
    (`elopipe.rating.scenarios.remove_unfinished`); resumed_from: the first period a FIDE run
    computed, resuming from the checkpoint before it (`elopipe.rating.fide.resume`; None: it did
    not resume); full_reason: why a FIDE run computed every period instead (None: it resumed, or
    the engine did not run); removed_lists: the stored lists this run removed, no game being
    rated on them any more (a correction moved or removed their events' games); loop_cycles: FFE,
    the players whose first-rating compatibility loop (spec A.6) cycled between sets
    (``ffe_details.cycled``); from_last_run: the engine did not run, its inputs and results being
    as its last full run left them, whose counts these are (`elopipe.rating.inputs.unchanged`;
    False: the engine ran, and a run that wrote nothing found every list as stored).
    """

    system: str
    run_id: int | None = None
    lists: int = 0
    first_list: dt.date | None = None
    last_list: dt.date | None = None
    first_changed: dt.date | None = None
    lists_written: int = 0
    changed_lists: list[dt.date] | None = None
    players_rated: int = 0
    new_ratings: int = 0
    games_counted: int = 0
    not_counted: dict[str, int] = field(default_factory=dict)
    events_skipped: dict[str, int] = field(default_factory=dict)
    unknown_tc_games: int = 0
    assumed_events: list[tuple[str, int]] = field(default_factory=list)
    discrepancies: int = 0
    seconds: float = 0.0
    failed_events: list[str] = field(default_factory=list)
    kept_lists: list[dt.date] = field(default_factory=list)
    removed_lists: list[dt.date] = field(default_factory=list)
    ro_far: int = 0
    ro_far_entries: int = 0
    ro_far_worst: list[RoFar] = field(default_factory=list)
    ro_from: str | None = None
    removed_runs: list[int] = field(default_factory=list)
    resumed_from: dt.date | None = None
    full_reason: str | None = None
    loop_cycles: int = 0
    from_last_run: bool = False

    def removed_line(self) -> str | None:
        """'fide: 1 list removed, no game is rated on it any more (2023-05-01)': the stored lists
        this run removed (`removed_lists`: lists are stored data, their removal is said); None
        when it removed none."""
        gone = self.removed_lists
        if not gone:
            return None
        dates = ", ".join(str(d) for d in gone[:5]) + (f", ... ({len(gone)})" if len(gone) > 5 else "")
        it = "it" if len(gone) == 1 else "them"
        return f"{self.system}: {plural(len(gone), 'list')} removed, no game is rated on {it} any more ({dates})"

    def keep_listed(self, listed: Collection[dt.date]) -> None:
        """Count only the lists that list a player (`listed`: their dates, computed or kept): the
        FIDE engine also computes the lists of the periods before anyone is rated (a first event
        whose players all stay unrated, as the U-19 All Ireland 2010 of the shared TRF), which
        the store holds no row of; `rate` and `run` said `173 lists (2010-05-01 ..` of a store
        holding 167 from 2011-05-01. lists, first_list, last_list, changed_lists, lists_written
        and first_changed are narrowed to them (the last list computed stays the last list)."""
        if self.first_list is None or self.last_list is None:
            return
        lo, hi = self.first_list, self.last_list
        dates = sorted(d for d in listed if lo <= d <= hi)
        self.lists = len(dates)
        self.first_list = dates[0] if dates else None
        self.last_list = dates[-1] if dates else None
        if self.changed_lists is not None:
            keep = set(listed)
            self.changed_lists = [d for d in self.changed_lists if d in keep]
            self.lists_written = len(self.changed_lists)
            changed = self.changed_lists or self.removed_lists
            self.first_changed = min(changed) if changed else None


# A Ro this far from the rating the organiser's file gives is marked in reports and counted by
# `rate`: the store's list in force (B.02 7.1.3) has drifted from FIDE's, or the file is wrong
RO_MARK_POINTS = 50


def sql_assumed(system: str) -> str:
    """The `elopipe sql` command that lists the events of `system` (a system or `system@scenario`:
    letters, digits, '-', '_' and '@', nothing to quote) whose rated games took the assumed rate
    of play, as `assumed_events` counts them: event, name, games, the most games first."""
    return (
        'sql "SELECT tournament_id, t.name, count(DISTINCT game_id) AS games FROM rating_changes'
        f" JOIN tournaments t USING (tournament_id) WHERE system = '{system}' AND tc_assumed"
        ' GROUP BY ALL ORDER BY games DESC, t.name, tournament_id"'
    )


def assumed_events(changes: pl.DataFrame, tournaments: pl.DataFrame) -> list[tuple[str, int]]:
    """(name, games) of the events whose rated games took the assumed rate of play
    (``tc_assumed``: nothing said it), the most games first, then by name: `RateSummary.assumed_events`
    of every engine (FIDE's and the full runs', `full_run.count`), which `rate` and `run` name.
    `changes`: rating_changes rows (tournament_id, game_id, tc_assumed); `tournaments`:
    (tournament_id, name) of at least those events."""
    assumed = (
        changes.filter(pl.col("tc_assumed").fill_null(False))
        .group_by(pl.col("tournament_id").cast(pl.Int64))
        .agg(pl.col("game_id").n_unique().alias("n"))
        .join(tournaments.select(pl.col("tournament_id").cast(pl.Int64), "name"), on="tournament_id", how="left")
        # an event without a name is told apart by its id, which the query of `sql_assumed` shows
        .with_columns(
            pl.when(pl.col("name").is_null() | (pl.col("name").str.strip_chars() == ""))
            .then(pl.format("(no name, event {})", "tournament_id"))
            .otherwise(pl.col("name"))
            .alias("name")
        )
        .sort(["n", "name", "tournament_id"], descending=[True, False, False])
    )
    return [(str(n), int(k)) for n, k in assumed.select("name", "n").iter_rows()]


@dataclass(frozen=True)
class RoFar:
    """One event entry whose Ro is `RO_MARK_POINTS` or more from the file's rating: the player's
    name, the event's, Ro and where it came from (`elopipe.rating.fide.ro.RO_SOURCES`), the
    file's rating; `diff` = Ro − file rating, rating points."""

    name: str
    event: str
    ro: int
    source: str
    file_rating: int

    @property
    def diff(self) -> int:
        return self.ro - self.file_rating


def ro_far(summary: RateSummary, tr: pl.DataFrame, players: pl.DataFrame, events: pl.DataFrame, worst: int = 5) -> None:
    """Fill `summary`'s ro_far counts from a run's `tr` (tournament_ratings rows: tournament_id,
    player_id, ro, ro_source, file_rating), naming the `worst` largest by `players` (player_id,
    name) and `events` (tournament_id, name); ties by event then player id."""
    far = tr.filter((pl.col("ro") - pl.col("file_rating")).abs() >= RO_MARK_POINTS)
    summary.ro_far = far.get_column("player_id").n_unique()
    summary.ro_far_entries = far.height
    top = (
        far.with_columns((pl.col("ro") - pl.col("file_rating")).abs().alias("__d"))
        .sort(["__d", "tournament_id", "player_id"], descending=[True, False, False])
        .head(worst)
        .join(players.select("player_id", pl.col("name").alias("player")), on="player_id", how="left")
        .join(events.select("tournament_id", pl.col("name").alias("event")), on="tournament_id", how="left")
        .sort(["__d", "tournament_id", "player_id"], descending=[True, False, False])
    )
    summary.ro_far_worst = [
        RoFar(
            r["player"] or f"player {r['player_id']}",
            r["event"] or f"event {r['tournament_id']}",
            r["ro"],
            r["ro_source"] or "",
            r["file_rating"],
        )  # fmt: skip
        for r in top.iter_rows(named=True)
    ]
