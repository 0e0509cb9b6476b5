"""The jobs on players' identity and on scenarios: an officer's merge or split (one transaction,
saying whether the lists must be re-rated; `elopipe.identity.decisions`), likely duplicates
(`elopipe.identity.suspects`), and the what-if scenarios' overview and removal
(`elopipe.rating.scenarios`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from elopipe.jobs.requests import MergeRequest, ScenarioRequest, SplitRequest, SuspectsRequest

if TYPE_CHECKING:
    import duckdb
    import polars as pl

_T = TypeVar("_T")
OnWait = Callable[[str], None]


def _decide(
    db: Path, players: list[int], action: Callable[[duckdb.DuckDBPyConnection], _T], on_wait: OnWait | None
) -> tuple[_T, list[str]]:
    """Run a decision on `players` in one transaction; (its result, the lines saying whether the
    lists must be re-rated: the rated games of `players` that moved, per system). StoreMissingError
    when there is no store at `db` (none is created)."""
    from elopipe.identity import dedup
    from elopipe.identity.rerate import RatedSides
    from elopipe.store.connect import open_writer

    with open_writer(db, on_wait=on_wait, existing=True) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            sides = RatedSides(con, players)
            out = action(con)
            dedup.relink_all(con)  # player ids changed: which rows are one game may change too
            moved = sides.moved()
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
    lines = [m.message(db) for m in moved] or ["no re-rate needed: no rated game of these players moved"]
    return out, lines


def merge(request: MergeRequest, on_wait: OnWait | None = None) -> tuple[int, list[str]]:
    """Merge `request.merged_id` into `request.kept_id` (`decisions.merge_players`): (the
    decision's id, the re-rate lines). Raises what `merge_players` raises (IDs that differ)."""
    from elopipe.identity.decisions import merge_players

    r = request
    return _decide(
        r.db, [r.kept_id, r.merged_id], lambda con: merge_players(con, r.kept_id, r.merged_id, r.reason, r.by), on_wait
    )


def split(request: SplitRequest, on_wait: OnWait | None = None) -> tuple[int, list[str]]:
    """Move some entries of `request.player_id` to a new player (`decisions.split_player`):
    (the new player's id, the re-rate lines)."""
    from elopipe.identity.decisions import split_player

    r = request
    tids = list(r.tournaments) if r.tournaments else None
    return _decide(
        r.db, [r.player_id], lambda con: split_player(con, r.player_id, r.reason, r.name, tids, r.by), on_wait
    )


def suspects(request: SuspectsRequest) -> list[dict[str, Any]]:
    """Likely duplicate players and weak identity links, with the evidence (`identity.suspects`), read-only."""
    from elopipe.identity.suspects import suspects as find_suspects
    from elopipe.store.connect import open_reader

    con = open_reader(request.db)
    try:
        return find_suspects(con, request.min_confidence)
    finally:
        con.close()


def scenarios(request: ScenarioRequest) -> pl.DataFrame:
    """The store's scenarios (`request.name` None) or one (`elopipe.rating.scenarios.overview`), read-only."""
    from elopipe.rating.scenarios import overview
    from elopipe.store.connect import open_reader

    con = open_reader(request.db)
    try:
        return overview(con, request.name)
    finally:
        con.close()


def drop_scenario(request: ScenarioRequest, on_wait: OnWait | None = None) -> dict[str, int]:
    """Delete a scenario's rows in one transaction (`elopipe.rating.scenarios.drop`): rows per
    table. Raises `NoSuchScenario`, StoreMissingError when there is no store at `request.db` (none
    is created)."""
    from elopipe.rating import scenarios as stored
    from elopipe.store.connect import open_writer

    assert request.name is not None, "drop names a scenario"
    with open_writer(request.db, on_wait=on_wait, existing=True) as con:
        return stored.drop(con, request.name)
