"""What the engines that recompute and rewrite every list share (FFE, Elo, Glicko-2): the events
left out, the run's counts in a `RateSummary`, the write of the store contract
(`elopipe.rating.result_tables.write_results`) and the registry entry's frame around a run (the
events a run fails on are left out, `elopipe.rating.faults`)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from typing import Any

import duckdb
import polars as pl

from elopipe.rating import faults, result_tables, store_io
from elopipe.rating.game_rows import scope_skips
from elopipe.rating.summary import RateSummary, assumed_events

#: A driver's run: (tournaments left out {tournament_id: reason}, write) -> (summary, frames written)
Run = Callable[[Mapping[int, str], bool], tuple[RateSummary, dict[str, pl.DataFrame]]]


def leave_out(
    rows: pl.DataFrame, summary: RateSummary, exclude: Mapping[int, str] | None, through: dt.date | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows, skips): the game rows of `load_game_rows` up to the list of `through` (None: all;
    a row with no list date stays, its event is skipped) without the tournaments of `exclude`,
    and the events skipped (out of scope, `game_rows.scope_skips`, or left out: tournament_id,
    reason). Counts the skipped events by reason into ``summary.events_skipped``."""
    if through is not None:
        rows = rows.filter(pl.col("list_date").is_null() | (pl.col("list_date") <= through))
    rows, failed = faults.leave_out(rows, exclude)
    skips = pl.concat([scope_skips(rows), failed])
    summary.events_skipped = dict(skips.group_by("reason").agg(pl.col("tournament_id").n_unique()).iter_rows())
    return rows, skips


def count(
    con: duckdb.DuckDBPyConnection,
    summary: RateSummary,
    frames: dict[str, pl.DataFrame],
    list_dates: list[dt.date],
    rated_only: bool = False,
) -> None:
    """Fill `summary`'s counts from the run's `frames` ('rating_lists', 'rating_changes') and
    its `list_dates` (sorted): every list is computed and rewritten, so the first changed list is
    the first one. players_rated: the players on the last list (`rated_only`: those with a
    rating there; FFE lists carry unrated rows); unknown_tc_games: counted games whose rate of
    play was assumed (``tc_assumed``), and assumed_events their events by name, as a FIDE run
    names them (`summary.assumed_events`; the names read from the store behind `con`)."""
    summary.lists = len(list_dates)
    summary.first_list = list_dates[0] if list_dates else None
    summary.last_list = list_dates[-1] if list_dates else None
    summary.first_changed = summary.first_list
    summary.lists_written = summary.lists
    changes = frames["rating_changes"]
    if changes.height:
        summary.games_counted = changes.filter(pl.col("counted")).height
        summary.not_counted = dict(changes.filter(~pl.col("counted")).group_by("reason").len().iter_rows())
        assumed = changes.filter(pl.col("tc_assumed").fill_null(False)).select("tournament_id", "game_id", "tc_assumed")
        summary.unknown_tc_games = assumed.get_column("game_id").n_unique()
        if assumed.height:  # the names of those events only: a few rows, not the store's tournaments
            names = store_io.query(
                con,
                "SELECT tournament_id::BIGINT AS tournament_id, name FROM tournaments WHERE tournament_id IN"
                " (SELECT unnest(?::BIGINT[]))",
                [assumed.get_column("tournament_id").unique().to_list()],
            )
            summary.assumed_events = assumed_events(assumed, names)
    lists = frames["rating_lists"]
    last = lists.filter(pl.col("list_date") == summary.last_list) if lists.height else lists
    if rated_only and last.height:
        last = last.filter(pl.col("rating").is_not_null())
    summary.players_rated = last.height


def write(
    con: duckdb.DuckDBPyConnection,
    summary: RateSummary,
    frames: dict[str, pl.DataFrame],
    skips: pl.DataFrame,
    params: dict[str, Any],
    through: dt.date | None,
) -> None:
    """Store the run of ``summary.system``: its ``rating_runs`` row with `params`, the `frames`
    (the lists after `through` kept), the `skips`; sets ``summary.run_id`` and
    ``summary.removed_lists`` (stored lists up to `through` that the run no longer computes). Needs a
    writer."""
    run_id = result_tables.start_run(con, summary.system, params=params)
    # every list is rewritten: one stored before and not computed now is removed, and said
    hi = through or dt.date.max
    before = con.execute(
        "SELECT DISTINCT list_date FROM rating_lists WHERE system = ? AND list_date <= ?", [summary.system, hi]
    ).fetchall()
    lists = frames.get("rating_lists")
    now = set(lists.get_column("list_date").unique().to_list()) if lists is not None and lists.height else set()
    summary.removed_lists = sorted(d for (d,) in before if d not in now)
    result_tables.write_results(con, summary.system, None, frames, run_id=run_id, through=through)
    result_tables.save_skips(con, summary.system, skips, run_id)
    result_tables.finish_run(con, run_id, first_list=summary.first_list, last_list=summary.last_list)
    summary.run_id = run_id


def rate(con: duckdb.DuckDBPyConnection, system: str, run: Run) -> RateSummary:
    """`run` as a registry entry: the tournaments it fails on are left out (`faults.isolate`)
    and named in ``failed_events``; ``seconds`` is the wall time of the whole."""
    started = time.monotonic()
    (summary, _frames), failed = faults.isolate(run, lambda: faults.tournament_order(con))
    summary.seconds = time.monotonic() - started
    summary.failed_events = faults.failed_lines(con, system, failed)
    return summary
