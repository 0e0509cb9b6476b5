"""Checks of the views the small hand-made store (tests.helpers.publish_store) feeds."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.helpers.publish_store import FEB, JAN, D, build_store


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return build_store(tmp_path / "store.duckdb")


def test_v_rating_list_is_the_latest_list_ranked(store: Path) -> None:
    con = duckdb.connect(str(store), read_only=True)
    rows = con.execute("SELECT rank, name, rating, fide_flag FROM v_rating_list ORDER BY rank").fetchall()
    assert rows == [
        (1, "Alpha, Anna", 2096, "w"),
        (2, "Bravo, Bruno", 1854, ""),
        (3, "Golf, Gus", 1600, ""),
        (4, "Charlie, Chloé", 1554, "w"),
    ]
    jan_inactive = con.execute(
        "SELECT fide_flag FROM v_rating_lists WHERE list_date = DATE '2024-01-01' AND player_id = 6"
    ).fetchone()
    assert jan_inactive == ("wi",)


def test_v_tournament_performance_rounds_half_away_from_zero(store: Path) -> None:
    con = duckdb.connect(str(store), read_only=True)
    rows = con.execute(
        "SELECT player_id, k_w_we, change_rounded, pooled_games FROM v_tournament_performance ORDER BY player_id"
    ).fetchall()
    assert rows == [
        (1, D("-3.60"), -4, None),
        (2, D("-46.40"), -46, None),
        (3, D("53.60"), 54, None),
        (4, None, None, 2),
    ]
    # -2.50 is published as -3 (FIDE F-P01): the rounding of the view on a tie.
    tie = con.execute(
        "SELECT CAST(sign(x) * ((abs(x) + 50) // 100) AS INTEGER) FROM (SELECT -250::BIGINT x)"
    ).fetchone()
    assert tie == (-3,)


def test_v_change_explained_traces_every_round_to_file_and_line(store: Path) -> None:
    con = duckdb.connect(str(store), read_only=True)
    rows = con.execute(
        "SELECT round, kind, opponent, counted, reason, unplayed_code, file_path, line"
        " FROM v_change_explained WHERE player_id = 4 ORDER BY round"
    ).fetchall()
    # D has no rating_changes rows: its games appear from `games`, its bye from unplayed_rounds.
    # Every row points to D's own 001 record (line 8), not to White's, where the game is stored.
    assert rows == [
        (1, "game", "Charlie, Chloé", False, "not_rated", None, "/data/trf/spring_open.trf", 8),
        (2, "game", "Bravo, Bruno", False, "not_rated", None, "/data/trf/spring_open.trf", 8),
        (3, "game", "Alpha, Anna", False, "forfeit", "+", "/data/trf/spring_open.trf", 8),
        (4, "unplayed", None, False, "bye", "H", "/data/trf/spring_open.trf", 8),
    ]
    a = con.execute(
        "SELECT round, d_raw, d_used, capped, pd, w_minus_pd, k_w_minus_pd, counted, reason"
        " FROM v_change_explained WHERE player_id = 1 ORDER BY round"
    ).fetchall()
    assert a == [
        (1, 200, 200, False, D("0.76"), D("0.24"), D("4.80"), True, None),
        (2, 600, 400, True, D("0.92"), D("-0.42"), D("-8.40"), True, None),
        (3, None, None, False, None, None, None, False, "forfeit"),
    ]


def test_v_player_history_lists_tournaments_rated(store: Path) -> None:
    con = duckdb.connect(str(store), read_only=True)
    rows = con.execute(
        "SELECT list_date, rating, change, tournaments FROM v_player_history WHERE player_id = 1 ORDER BY list_date"
    ).fetchall()
    assert rows == [(JAN, 2100, 0, None), (FEB, 2096, -4, ["Spring Open 2024"])]
