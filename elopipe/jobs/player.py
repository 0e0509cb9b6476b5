"""The player job: a player's rating history (against another side when asked), read-only, and
his page with its chart under `OUT/players/SYSTEM` (`elopipe.publish.history`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from elopipe.jobs.requests import PlayerRequest
from elopipe.runtime.errors import ElopipeError
from elopipe.runtime.hints import command_hint

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from elopipe.publish.history_compare import PlayerComparison


class SystemNotHeld(ElopipeError):
    """A system (or scenario) of which the store holds no list: a usage error."""

    exit_code = 2


def check_held(con: duckdb.DuckDBPyConnection, system: str, db: str | os.PathLike[str] | None = None) -> None:
    """Raise `SystemNotHeld`, naming the systems the store holds, when it holds no list of `system`
    (the `rate` it suggests names `--db` for a store `db` that is not the default)."""
    held = [r[0] for r in con.execute("SELECT DISTINCT system FROM rating_lists ORDER BY system").fetchall()]
    if system not in held:
        has = (
            f"systems it has: {', '.join(held)}"
            if held
            else f"it holds no list yet: run `{command_hint('rate', db)}` first"
        )
        raise SystemNotHeld(f"the store has no list for {system!r}; {has}")


@dataclass(frozen=True)
class PlayerView:
    """A player's history as the terminal shows it: his `name`; `history`, his lists under the
    system (`history.history_frame`), or `comparison` against another side; the `tournaments`
    he played (`history.tournaments_frame`)."""

    name: str
    history: pl.DataFrame | None
    comparison: PlayerComparison | None
    tournaments: pl.DataFrame


@dataclass(frozen=True)
class PlayerPage:
    """The files of the player's page and chart (`paths`), and the files elopipe had not written
    that were under their names, kept under `.elopipe-kept/` first ((name, kept as), relative to
    the output folder: `elopipe.publish.manifest`)."""

    paths: list[Path]
    set_aside: list[tuple[str, str]]


def player(request: PlayerRequest, show: Callable[[PlayerView], None]) -> PlayerPage:
    """Find the player `request.ref`, hand his history to `show`, then write his page and chart
    through the output folder's manifest (`manifest.protecting`: a user's file under their names
    is kept, never overwritten). Raises `SystemNotHeld`, and LookupError for a player the store
    does not hold (or a side of `--compare` it does not)."""
    from elopipe.publish.history import (
        find_player,
        history_frame,
        player_info,
        tournaments_frame,
        write_player_page,
    )
    from elopipe.publish.history_compare import player_comparison
    from elopipe.publish.manifest import protecting
    from elopipe.store.connect import open_reader

    system = request.system
    con = open_reader(request.db)
    try:
        check_held(con, system, request.db)
        pid = find_player(con, request.ref)
        info = player_info(con, pid)
        cmp = None if request.compare is None else player_comparison(con, pid, system, request.compare)
        hist = history_frame(con, pid, system, all_months=request.all_months) if cmp is None else None
        show(PlayerView(str(info["name"]), hist, cmp, tournaments_frame(con, pid)))
        with protecting(request.out) as manifest:
            paths = write_player_page(
                con,
                pid,
                system,
                request.out / "players" / system,
                chart_format=request.chart,
                all_months=request.all_months,
                compare=cmp,
            )
        return PlayerPage(paths, manifest.set_aside)
    finally:
        con.close()
