"""One tournament must not block a rating system: find the events a run fails on, rate the rest.

A rating run computes every list of a system at once.  When that computation raises (a bug
met only by one odd event, a value no type was sized for), `isolate` finds the tournament(s)
whose games make it raise and runs again without them.  The failing events are then recorded
as skipped (``rating_skips``, reason 'rating_failed: <what went wrong>') and named in one line
each (`RateSummary.failed_events`); the other events are rated as if the failing ones had
never been ingested.

How a culprit is found: the run's tournaments are put in order (by date, then id) and the
shortest prefix whose games make the computation fail is found by bisection; its last
tournament is a culprit.  It is left out and the search starts again, until the computation
succeeds (at most `MAX_FAILED` culprits: more means the fault is not in the data).  A
failure that remains with every tournament left out is not a tournament's doing: the first
error is raised again.  Each probe is a full computation without writing; a healthy run
computes once, as before, so its results do not change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import duckdb
import polars as pl

from elopipe.runtime.errors import first_line

T = TypeVar("T")

#: culprits sought before giving up: a fault that many events trigger is in the code
MAX_FAILED = 20
REASON_PREFIX = "rating_failed: "


def isolate(
    run: Callable[[Mapping[int, str], bool], T],
    order: Callable[[], Sequence[int]],
) -> tuple[T, dict[int, str]]:
    """`run(excluded, write)` once with nothing excluded; if it raises, leave out the failing
    tournaments (see the module docstring) and return the run without them.

    `run(excluded, write)`: computes a system's lists without the tournaments of `excluded`
    ({tournament_id: reason}, recorded as skipped) and writes them only when `write`.
    `order()`: every tournament id, earliest first (asked for only once a run failed, so a
    healthy run costs no query).  Returns (the result of the last `run`,
    {tournament_id: reason} of the tournaments left out).  Raises the first error again when
    no tournament is to blame, or after `MAX_FAILED` culprits.
    """
    try:
        return run({}, True), {}
    except Exception as exc:
        first = exc
    excluded: dict[int, str] = {}
    error: Exception = first
    ids = order()
    while len(excluded) < MAX_FAILED:
        culprit = _first_culprit(run, [t for t in ids if t not in excluded], excluded)
        if culprit is None:
            raise first
        excluded[culprit] = REASON_PREFIX + first_line(error, "internal error", 200)
        try:
            return run(excluded, True), excluded
        except Exception as exc:
            error = exc
    raise first


def _first_culprit(
    run: Callable[[Mapping[int, str], bool], object], rest: list[int], excluded: Mapping[int, str]
) -> int | None:
    """The last tournament of the shortest prefix of `rest` whose games make `run` fail (the
    tournaments of `excluded` left out), or None when `run` fails without any of `rest`."""

    def fails(k: int) -> bool:
        left_out = dict(excluded) | {t: "probe" for t in rest[k:]}
        try:
            run(left_out, False)
        except Exception:
            return True
        return False

    if not rest or fails(0):
        return None
    lo, hi = 0, len(rest)  # fails(lo) is False; fails(hi) is taken as True (the full run failed)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid
    return rest[hi - 1]


def tournament_order(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Every event id of the store (a tournament's, or that of the event it is a part of:
    `elopipe.identity.events`), earliest first (end date, else start date; undated last), for `isolate`."""
    rows = con.execute(
        "SELECT coalesce(event_id, tournament_id) AS t FROM tournaments GROUP BY t"
        " ORDER BY max(coalesce(end_date, start_date)) NULLS LAST, t"
    ).fetchall()
    return [int(r[0]) for r in rows]


def failed_lines(con: duckdb.DuckDBPyConnection, system: str, failed: Mapping[int, str]) -> list[str]:
    """One line per tournament left out: its id, name and file, and what went wrong."""
    if not failed:
        return []
    names = dict(
        con.execute(
            "SELECT t.tournament_id, coalesce(t.name, '(no name)') || ' (' || coalesce(f.path, '?') || ')' "
            "FROM tournaments t LEFT JOIN source_files f USING (file_id) "
            "WHERE t.tournament_id IN (SELECT unnest(?::INTEGER[]))",
            [sorted(failed)],
        ).fetchall()
    )
    return [
        f"{system}: tournament {tid} {names.get(tid, '')!s} not rated: "
        f"{reason.removeprefix(REASON_PREFIX)}; the other events were rated"
        for tid, reason in sorted(failed.items())
    ]


def failed_skips(games: pl.DataFrame, failed: Mapping[int, str]) -> pl.DataFrame:
    """``rating_skips`` rows (tournament_id Int64, reason Utf8, n_games Int64) of the
    tournaments left out; n_games counts their distinct game_id in `games` (a frame with
    tournament_id and game_id columns)."""
    ids = pl.DataFrame(
        {"tournament_id": list(failed), "reason": list(failed.values())},
        schema={"tournament_id": pl.Int64, "reason": pl.Utf8},
    )
    counts = (
        games.filter(pl.col("tournament_id").is_in(list(failed)))
        .group_by("tournament_id")
        .agg(pl.col("game_id").n_unique().cast(pl.Int64).alias("n_games"))
        .with_columns(pl.col("tournament_id").cast(pl.Int64))
    )
    return ids.join(counts, on="tournament_id", how="left").with_columns(pl.col("n_games").fill_null(0))


def leave_out(rows: pl.DataFrame, excluded: Mapping[int, str] | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(`rows` without the tournaments of `excluded`, their ``rating_skips`` rows): what a
    runner does with the `exclude` that `isolate` gives it.  `rows` has tournament_id and
    game_id columns; the skips frame is empty (same columns) when nothing is excluded."""
    if not excluded:
        empty = pl.DataFrame(schema={"tournament_id": pl.Int64, "reason": pl.Utf8, "n_games": pl.Int64})
        return rows, empty
    return rows.filter(~pl.col("tournament_id").is_in(list(excluded))), failed_skips(rows, excluded)
