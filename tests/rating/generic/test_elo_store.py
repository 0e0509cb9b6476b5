"""`--system elo` over a store built by direct inserts: seed 001 vectors, periods, reasons."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest

from elopipe.rating import store_io
from elopipe.rating.generic.elo import rate_period
from elopipe.rating.generic.run import rate_elo, run_elo
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.ffe_store import build_store, d


@pytest.fixture
def seed_store(tmp_path):
    """1750 beats 1810 on 3 March and draws on 4 March (a two-game match); a forfeit on 5 March."""
    ev = dict(tournament_id=1, name="Match", start=d("2024-03-03"), end=d("2024-03-05"),
              time_control="5400+30", entries={1: (1750, None, None), 2: (1810, None, None),
                                               3: (None, None, None)},
              games=[(1, 1, 2, "1-0", d("2024-03-03"), True),
                     (2, 2, 1, "1/2-1/2", d("2024-03-04"), True),
                     (3, 1, 3, "1-0", d("2024-03-05"), False)])  # fmt: skip
    return build_store(tmp_path / "e.duckdb", [(1, "A", 1980), (2, "B", 1980), (3, "C", 1990)], [ev])


def test_seed001_month_period_gives_1763_4(seed_store):
    with open_writer(seed_store) as con:
        summary, frames = run_elo(con, k=20, period="month")
        lst = store_io._pl(con, "SELECT player_id, rating, rating_exact, games, k, change "
                                "FROM rating_lists WHERE system = 'elo' ORDER BY player_id")  # fmt: skip
        ch = store_io._pl(con, "SELECT game_id, player_id, ro, rc, pd, score, counted, reason "
                               "FROM rating_changes WHERE system = 'elo' ORDER BY game_id, player_id")  # fmt: skip
    a = lst.filter(pl.col("player_id") == 1).row(0, named=True)
    assert a["rating_exact"] == Decimal("1763.4") and a["rating"] == 1763  # +13.4 (seed 001)
    assert (a["games"], a["k"], a["change"]) == (2, 20, 13)
    b = lst.filter(pl.col("player_id") == 2).row(0, named=True)
    assert b["rating_exact"] == Decimal("1796.6")
    first = ch.filter((pl.col("game_id") == 1) & (pl.col("player_id") == 1)).row(0, named=True)
    assert (first["ro"], first["rc"], first["pd"], first["counted"]) == (1750, 1810, Decimal("0.41"), True)
    forfeit = ch.filter(pl.col("game_id") == 3)
    assert forfeit["reason"].to_list() == ["forfeit", "forfeit"] and not forfeit["counted"].any()
    assert summary.not_counted == {"forfeit": 2}


def test_seed001_single_win_in_game_mode_gives_1761_7(seed_store):
    with open_writer(seed_store) as con:
        _s, frames = run_elo(con, k=20, period="game", write=False)
    lists = frames["rating_lists"].filter(pl.col("player_id") == 1).sort("list_date")
    assert lists["rating_exact"].to_list()[0] == pytest.approx(1761.7)  # after the win alone
    # the draw is then rated from 1761.7 vs 1798.3, not from the start of a period
    after_draw = rate_period(Decimal("1761.7"), [(Decimal("1798.3"), "D")], 20).new_rating
    assert Decimal(str(lists["rating_exact"].to_list()[1])) == after_draw


def test_tournament_period_and_k_schedule_through_registry(seed_store):
    with open_writer(seed_store) as con:
        s = rate(con, "elo", k="20,games<30:40", period="tournament")
        row = store_io._pl(con, "SELECT rating_exact, k FROM rating_lists "
                                "WHERE system = 'elo' AND player_id = 1").row(0)  # fmt: skip
    assert s.lists == 1 and s.games_counted == 4
    assert row == (Decimal("1776.8"), 40)  # 1750 + 40 x 0.6709 = +26.8


def test_unknown_option_is_a_value_error(seed_store):
    with open_writer(seed_store) as con, pytest.raises(ValueError):
        rate_elo(con, colour="white")


def _two_events(tmp_path, name, later):
    """Event 1 (March 2024): player 1 has no rating in the file, player 2 has 1800. Event 2
    (June 2024, with `later`): the file gives player 1 a rating of 2265."""
    ev1 = dict(tournament_id=1, name="Spring", start=d("2024-03-03"), end=d("2024-03-04"),
               time_control="5400+30", entries={1: (None, None, None), 2: (1800, None, None)},
               games=[(1, 1, 2, "1-0", d("2024-03-03"), True)])  # fmt: skip
    ev2 = dict(tournament_id=2, name="Summer", start=d("2024-06-03"), end=d("2024-06-04"),
               time_control="5400+30", entries={1: (2265, None, None), 2: (1800, None, None)},
               games=[(2, 2, 1, "1/2-1/2", d("2024-06-03"), True)])  # fmt: skip
    events = [ev1, ev2] if later else [ev1]
    return build_store(tmp_path / name, [(1, "A", 1980), (2, "B", 1980)], events)


def _lists(db):
    with open_writer(db) as con:
        run_elo(con, k=20, period="month")
        return store_io._pl(con, "SELECT list_date, player_id, rating_exact, flags FROM rating_lists "
                                 "WHERE system = 'elo' ORDER BY list_date, player_id")  # fmt: skip


def test_start_value_is_the_first_entry_even_without_rating_no_look_ahead(tmp_path):
    # a rating written in a later file (June) must not start the player on the March list
    alone = _lists(_two_events(tmp_path, "a.duckdb", later=False))
    both = _lists(_two_events(tmp_path, "b.duckdb", later=True))
    first = both.filter(pl.col("list_date") == alone["list_date"][0])
    assert first.equals(alone)  # the later file rewrites no earlier list
    a = first.filter(pl.col("player_id") == 1).row(0, named=True)
    assert (a["rating_exact"], a["flags"]) == (Decimal("1517.0"), "new")  # 1500 beats 1800: +20 x 0.849


def test_the_change_is_stored_with_its_decimal(seed_store):
    # seed 001: +13.4 over the month; `change` keeps the rounded 13 the FIDE-like columns read
    with open_writer(seed_store) as con:
        run_elo(con, k=20, period="month")
        row = store_io._pl(con, "SELECT rating_exact, change, change_exact FROM rating_lists "
                                "WHERE system = 'elo' AND player_id = 1").row(0)  # fmt: skip
    assert row == (Decimal("1763.4"), 13, Decimal("13.4"))


def _same_day_events(tmp_path, name, first_rated):
    """Two events that start the same day; player 1's file rating is written in one of them
    only (2265), the other gives none. `first_rated`: the rated one has the lower tournament id
    (as when its file was ingested first)."""
    rated = dict(name="Open", start=d("2024-03-03"), end=d("2024-03-04"), time_control="5400+30",
                 entries={1: (2265, None, None), 2: (1800, None, None)},
                 games=[(1, 1, 2, "1-0", d("2024-03-03"), True)])  # fmt: skip
    bare = dict(name="Rapidplay copy", start=d("2024-03-03"), end=d("2024-03-04"), time_control="5400+30",
                entries={1: (None, None, None), 3: (1900, None, None)},
                games=[(2, 3, 1, "1/2-1/2", d("2024-03-03"), True)])  # fmt: skip
    events = [rated, bare] if first_rated else [bare, rated]
    for tid, ev in enumerate(events, start=1):
        ev["tournament_id"] = tid
    return build_store(tmp_path / name, [(1, "A", 1980), (2, "B", 1980), (3, "C", 1980)], events)


def test_start_value_of_two_entries_on_one_day_does_not_follow_the_ingestion_order(tmp_path):
    # the first entry in time is two events of one day: which was stored first (its tournament
    # id) must not decide the player's start (Elo and Glicko-2 lists depended on the order)
    one = _lists(_same_day_events(tmp_path, "a.duckdb", first_rated=True))
    other = _lists(_same_day_events(tmp_path, "b.duckdb", first_rated=False))
    assert one.equals(other)
    a = one.filter(pl.col("player_id") == 1).row(0, named=True)
    assert a["flags"] != "new"  # started from the rating the first day gives, not the default
