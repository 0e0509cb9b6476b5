"""Build small FIDE scenarios in an in-memory store and run the Polars engine on them."""

from __future__ import annotations

import datetime as dt
import itertools

import polars as pl

from elopipe.rating.fide.engine import run_periods, to_contract
from elopipe.rating.fide.params import EngineResult, FideParams
from elopipe.rating.fide.prepare import prepare
from elopipe.rating.fide.run import load_inputs
from elopipe.rating.periods import get_scheme
from tests.helpers.schema_store import schema_connect
from tests.helpers.store_build import add_rows

SCORES = {"W": ("1-0", 1.0, 0.0), "D": ("1/2-1/2", 0.5, 0.5), "L": ("0-1", 0.0, 1.0)}


class Scenario:
    """Players are ints (player_id); games are (white, black, 'W'|'D'|'L' for white)."""

    def __init__(self) -> None:
        self.con = schema_connect()
        self._gid = itertools.count(1)
        self._tid = itertools.count(1)
        self._players: set[int] = set()

    def player(self, pid: int, birth_year: int | None = None, fide_id: int | None = None) -> None:
        if pid in self._players:
            if birth_year is not None:
                self.con.execute("UPDATE players SET birth_year = ? WHERE player_id = ?", [birth_year, pid])
            return
        self._players.add(pid)
        add_rows(
            self.con,
            players=[{"player_id": pid, "name": f"Player {pid}", "name_key": f"player {pid}",
                      "birth_year": birth_year, "fide_id": fide_id}],
        )  # fmt: skip

    def official(
        self,
        list_date: dt.date,
        pid: int,
        rating: int | None,
        k: int | None = None,
        birth_year: int | None = None,
        system: str = "fide",
    ) -> None:
        self.player(pid)
        add_rows(
            self.con,
            official_lists=[{"system": system, "list_date": list_date, "player_id": pid, "rating": rating, "k": k,
                             "birth_year": birth_year}],
        )  # fmt: skip

    def event(
        self,
        start: dt.date | None,
        end: dt.date | None,
        games: list[tuple[int, int, str]],
        file_ratings: dict[int, int] | None = None,
        time_control: str | None = None,
        rate_class: str | None = None,
        played: bool = True,
        game_date: dt.date | None = None,
    ) -> int:
        tid = next(self._tid)
        file_ratings = file_ratings or {}
        entries: dict[int, dict] = {}
        rows = []
        for w, b, res in games:
            for p in (w, b):
                self.player(p)
                entries.setdefault(
                    p, {"tournament_id": tid, "player_id": p, "rating_in_file": file_ratings.get(p), "file_id": tid}
                )
            result, ws, bs = SCORES[res]
            rows.append({"game_id": next(self._gid), "tournament_id": tid, "file_id": tid, "result": result,
                         "white_score": ws, "black_score": bs, "played": played, "white_id": w, "black_id": b,
                         "game_date": game_date or start})  # fmt: skip
        add_rows(
            self.con,
            tournaments=[{"tournament_id": tid, "file_id": tid, "source_format": "trf", "name": f"Event {tid}",
                          "start_date": start, "end_date": end, "time_control": time_control,
                          "rate_class": rate_class}],
            tournament_players=list(entries.values()),
            games=rows,
        )  # fmt: skip
        return tid

    def run(self, system: str = "fide", through: dt.date | None = None, **params) -> EngineResult:
        fp = FideParams(system=system, **params)
        prep = prepare(load_inputs(self.con, system), fp, get_scheme("fide"))
        return to_contract(run_periods(prep, fp, through=through))


def row(df: pl.DataFrame, **where) -> dict:
    """The single row of `df` matching `where` (AssertionError otherwise)."""
    q = df
    for k, v in where.items():
        q = q.filter(pl.col(k) == v)
    assert q.height == 1, f"expected one row for {where}, got {q.height}:\n{q}"
    return q.row(0, named=True)


def one_game(
    own: int,
    opp: int,
    res: str,
    k: int,
    start: dt.date,
    **params,
) -> dict:
    """Player 1 (rating `own`, K `k` on the official list) plays player 2 once; returns the
    player-1 row of tournament_ratings."""
    s = Scenario()
    in_force = start.replace(day=1)
    s.official(in_force, 1, own, k=k)
    s.official(in_force, 2, opp, k=20)
    s.event(start, start + dt.timedelta(days=1), [(1, 2, res)])
    r = s.run(**params)
    return row(r.tournament_ratings, player_id=1)
