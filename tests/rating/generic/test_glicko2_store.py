"""`--system glicko2` over a store built by direct inserts: monthly lists, RD, volatility."""

from __future__ import annotations

import polars as pl

from elopipe.rating import store_io
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.ffe_store import build_store, d


def test_glicko2_lists_store_rd_and_volatility_and_age_idle_players(tmp_path):
    jan = dict(tournament_id=1, name="Jan", start=d("2024-01-10"), end=d("2024-01-11"),
               time_control="5400+30",
               entries={1: (1800, None, None), 2: (1700, None, None), 3: (None, None, None)},
               games=[(1, 1, 2, "1-0", d("2024-01-10"), True), (2, 3, 2, "0-1", d("2024-01-11"), True)])  # fmt: skip
    jun = dict(tournament_id=2, name="Jun", start=d("2024-06-10"), end=d("2024-06-10"),
               time_control="5400+30", entries={1: (1800, None, None), 3: (None, None, None)},
               games=[(3, 1, 3, "1/2-1/2", d("2024-06-10"), True)])  # fmt: skip
    db = build_store(tmp_path / "g.duckdb", [(1, "A", 1980), (2, "B", 1980), (3, "C", 1990)], [jan, jun])
    with open_writer(db) as con:
        s = rate(con, "glicko2")
        lst = store_io._pl(con, "SELECT list_date, player_id, rating, rating_exact, rd, volatility, games "
                                "FROM rating_lists WHERE system = 'glicko2' ORDER BY player_id, list_date")  # fmt: skip
    assert s.lists == 2 and s.first_list == d("2024-02-01") and s.last_list == d("2024-07-01")
    p2 = lst.filter(pl.col("player_id") == 2)
    assert p2["games"].to_list() == [2, 0]
    assert p2["rd"][1] > p2["rd"][0]  # idle from February to June: RD grew (5 periods)
    assert p2["rating"][1] == p2["rating"][0] and p2["volatility"][1] == p2["volatility"][0]
    p3 = lst.filter(pl.col("player_id") == 3).row(0, named=True)
    assert p3["rd"] < 350 and p3["rating"] < 1500  # a newcomer (1500/350) who lost
    assert lst["rd"].max() <= 350 and lst["volatility"].min() > 0
    p1 = lst.filter(pl.col("player_id") == 1).row(0, named=True)
    assert p1["rating"] > 1800 and p1["rd"] < 200  # started from the file rating, RD 200
