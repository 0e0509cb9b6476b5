"""Build small FIDE scenarios in an in-memory store and run the Polars engine on them."""

from __future__ import annotations

import datetime as dt
import itertools

import duckdb
import polars as pl

from elopipe.rating.fide.engine import run_periods, to_contract
from elopipe.rating.fide.params import EngineResult, FideParams
from elopipe.rating.fide.prepare import prepare
from elopipe.rating.fide.run import load_inputs
from elopipe.rating.periods import get_scheme
from elopipe.store.schema import ensure_schema

SCORES = {"W": ("1-0", 1.0, 0.0), "D": ("1/2-1/2", 0.5, 0.5), "L": ("0-1", 0.0, 1.0)}


class Scenario:
    """Players are ints (player_id); games are (white, black, 'W'|'D'|'L' for white)."""

    def __init__(self) -> None:
        self.con = duckdb.connect()
        ensure_schema(self.con)
        self._gid = itertools.count(1)
        self._tid = itertools.count(1)
        self._players: set[int] = set()

    def player(self, pid: int, birth_year: int | None = None, fide_id: int | None = None) -> None:
        if pid in self._players:
            if birth_year is not None:
                self.con.execute("UPDATE players SET birth_year = ? WHERE player_id = ?", [birth_year, pid])
            return
        self._players.add(pid)
        self.con.execute(
            "INSERT INTO players (player_id, name, name_key, birth_year, fide_id) VALUES (?, ?, ?, ?, ?)",
            [pid, f"Player {pid}", f"player {pid}", birth_year, fide_id],
        )

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
        self.con.execute(
            "INSERT INTO official_lists (system, list_date, player_id, rating, k, birth_year) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [system, list_date, pid, rating, k, birth_year],
        )

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
        self.con.execute(
            "INSERT INTO tournaments (tournament_id, file_id, source_format, name, start_date, "
            "end_date, time_control, rate_class) VALUES (?, ?, 'trf', ?, ?, ?, ?, ?)",
            [tid, tid, f"Event {tid}", start, end, time_control, rate_class],
        )
        file_ratings = file_ratings or {}
        seen: set[int] = set()
        for w, b, res in games:
            for p in (w, b):
                self.player(p)
                if p not in seen:
                    seen.add(p)
                    self.con.execute(
                        "INSERT INTO tournament_players (tournament_id, player_id, "
                        "rating_in_file, file_id) VALUES (?, ?, ?, ?)",
                        [tid, p, file_ratings.get(p), tid],
                    )
            result, ws, bs = SCORES[res]
            self.con.execute(
                "INSERT INTO games (game_id, tournament_id, file_id, result, white_score, "
                "black_score, played, white_id, black_id, game_date) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [next(self._gid), tid, tid, result, ws, bs, played, w, b, game_date or start],
            )
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
