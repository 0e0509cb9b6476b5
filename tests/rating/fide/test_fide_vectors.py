"""Spec vectors 12.1–12.7 of fide-rating-rules.md, through the Polars engine where a game is
involved (official lists give Ro, Rc and K), and through the reference formulas otherwise."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from elopipe.rating.fide import b02
from tests.helpers.fide import Scenario, one_game, row

V2017_DAY = dt.date(2019, 5, 10)
V2022_DAY = dt.date(2023, 5, 10)
V2024_DAY = dt.date(2024, 5, 10)
V2024A_DAY = dt.date(2025, 11, 10)


def change(own, opp, res, k, day, **params) -> int:
    return one_game(own, opp, res, k, day, **params)["change_x100"]


# ---- 12.1 single games (K x (W - PD), hundredths of a point) -------------------------


@pytest.mark.parametrize("day", [V2017_DAY, V2022_DAY, V2024_DAY, V2024A_DAY])
def test_TV01_equal_ratings_win(day):
    assert change(2000, 2000, "W", 10, day) == 500


@pytest.mark.parametrize("own,expected", [(2003, 500), (2004, 490)])
def test_TV02_band_edge_3_4(own, expected):
    assert change(own, 2000, "W", 10, V2024_DAY) == expected


@pytest.mark.parametrize("own,expected", [(2010, 490), (2011, 480)])
def test_TV03_band_edge_10_11(own, expected):
    assert change(own, 2000, "W", 10, V2024_DAY) == expected


@pytest.mark.parametrize("own,expected", [(2206, 240), (2207, 230)])
def test_TV04_band_edge_206_207(own, expected):
    assert change(own, 2000, "W", 10, V2024_DAY) == expected


@pytest.mark.parametrize("own,expected", [(2391, 90), (2392, 80)])
def test_TV05_band_edge_391_392(own, expected):
    assert change(own, 2000, "W", 10, V2024_DAY) == expected


@pytest.mark.parametrize("opp,expected", [(2003, -500), (2004, -490)])
def test_TV06_lower_column(opp, expected):
    assert change(2000, opp, "L", 10, V2024_DAY) == expected


@pytest.mark.parametrize("own,expected", [(1656, -120), (1655, -110)])
def test_TV07_band_edge_344_345(own, expected):
    assert change(own, 2000, "L", 10, V2024_DAY) == expected


def test_TV08_win_k15():
    assert change(2092, 2000, "W", 15, V2024_DAY) == 555


def test_TV09_draw_k30():
    assert change(2000, 2092, "D", 30, V2024_DAY) == 390


@pytest.mark.parametrize("day", [V2017_DAY, V2024_DAY])
def test_TV10_higher_player_capped(day):
    assert change(2600, 2100, "W", 10, day) == 80


@pytest.mark.parametrize("day", [V2017_DAY, V2024_DAY])
def test_TV11_lower_player_capped(day):
    assert change(1500, 2000, "D", 20, day) == 840


def test_TV11_v2022_lower_side_uncapped_by_default_and_switch():
    assert change(1500, 2000, "D", 20, V2022_DAY) == 920
    assert change(1500, 2000, "D", 20, V2022_DAY, v2022_cap_lower=True) == 840


def test_TV12_2650_uses_raw_difference():
    assert change(2650, 2150, "W", 10, V2024A_DAY) == 40
    # before the amendment the same game is capped
    assert change(2650, 2150, "W", 10, V2024_DAY) == 80


def test_TV13_2700_beats_1964_gains_nothing():
    assert change(2700, 1964, "W", 10, V2024A_DAY) == 0


def test_TV14_2700_loses_to_1900():
    assert change(2700, 1900, "L", 10, V2024A_DAY) == -1000


def test_TV15_lower_player_still_capped_against_exempt_opponent():
    assert change(2200, 2700, "L", 20, V2024A_DAY) == -160


def test_TV15_asymmetric_cap_both_sides_of_one_game():
    s = Scenario()
    s.official(dt.date(2025, 11, 1), 1, 2700, k=10)
    s.official(dt.date(2025, 11, 1), 2, 2200, k=20)
    s.event(V2024A_DAY, V2024A_DAY, [(1, 2, "W")])
    ch = s.run().rating_changes
    assert row(ch, player_id=1)["d_used"] == 500
    assert row(ch, player_id=2)["d_used"] == -400


def test_TV16_sample_outputs():
    assert change(1300, 1800, "W", 30, V2024_DAY) == 2760
    assert change(2050, 1800, "D", 40, V2017_DAY) == -1240


# ---- 12.2 rounded one-game changes, K 40 -------------------------------------------


@pytest.mark.parametrize(
    "vid,own,opps,expected",
    [
        ("TV17", 1500, [1500], (20, -20, 0)),
        ("TV18", 1500, [1900, 2900], (37, -3, 17)),
        ("TV19", 1500, [1600], (26, -14, 6)),
        ("TV20", 2000, [1600, 1000], (3, -37, -17)),
        ("TV21", 2000, [1900], (14, -26, -6)),
    ],
)
def test_TV17_to_TV21_rounded_changes_k40(vid, own, opps, expected):
    for opp in opps:
        for res, want in zip("WLD", expected, strict=True):
            s = Scenario()
            s.official(dt.date(2024, 5, 1), 1, own, k=40)
            s.official(dt.date(2024, 5, 1), 2, opp, k=40)
            s.event(V2024_DAY, V2024_DAY, [(1, 2, res)])
            lst = s.run().rating_lists
            got = row(lst, player_id=1, list_date=dt.date(2024, 6, 1))
            assert got["change"] == want, (vid, opp, res)
            assert got["rating"] == own + want


# ---- 12.3 whole tournaments and periods -----------------------------------------------


def test_TV22_F_P01_2813_over_five_games_minus_3():
    s = Scenario()
    start = dt.date(2025, 11, 10)
    s.official(dt.date(2025, 11, 1), 1, 2813, k=10)
    opps = {2: 1787, 3: 2025, 4: 2310, 5: 2400, 6: 2505}
    for pid, r in opps.items():
        s.official(dt.date(2025, 11, 1), pid, r, k=20)
    s.event(start, start + dt.timedelta(days=4), [(1, 2, "W"), (1, 3, "W"), (1, 4, "W"), (1, 5, "W"), (1, 6, "D")])
    r = s.run()
    wpd = r.rating_changes.filter(pl.col("player_id") == 1).sort("opponent_id")["w_minus_pd"]
    assert [str(x) for x in wpd] == ["0.00", "0.00", "0.04", "0.07", "-0.36"]
    assert row(r.tournament_ratings, player_id=1)["change_x100"] == -250
    got = row(r.rating_lists, player_id=1, list_date=dt.date(2025, 12, 1))
    assert (got["change"], got["rating"]) == (-3, 2810)


def test_TV23_F_P02_three_events_rounded_once_per_period():
    """Per-tournament K x sums -6.10, +3.70, +7.80; the text rounds the period once:
    +5.40 -> +5 (FIDE's published list showed 2406, the one known per-tournament exception)."""
    s = Scenario()
    s.official(dt.date(2025, 10, 1), 1, 2395, k=10)
    for pid, r in {11: 1995, 12: 2205, 13: 2325, 14: 1995, 15: 1995}.items():
        s.official(dt.date(2025, 10, 1), pid, r, k=20)
    s.official(dt.date(2025, 11, 1), 1, 2400, k=10)
    for pid, r in {21: 2000, 22: 2000, 23: 2121, 24: 2813, 25: 2084, 31: 2400, 32: 2231}.items():
        s.official(dt.date(2025, 11, 1), pid, r, k=20)
    e1 = s.event(
        dt.date(2025, 10, 31),
        dt.date(2025, 11, 2),
        [(1, 11, "W"), (1, 12, "D"), (1, 13, "L"), (1, 14, "W"), (1, 15, "W")],
    )
    e2 = s.event(
        dt.date(2025, 11, 5),
        dt.date(2025, 11, 9),
        [(1, 21, "W"), (1, 22, "W"), (1, 23, "W"), (1, 24, "L"), (1, 25, "W")],
    )
    e3 = s.event(dt.date(2025, 11, 15), dt.date(2025, 11, 16), [(1, 31, "W"), (1, 32, "W")])
    r = s.run()
    tr = r.tournament_ratings
    assert row(tr, player_id=1, tournament_id=e1)["change_x100"] == -610
    assert row(tr, player_id=1, tournament_id=e1)["ro"] == 2395
    assert row(tr, player_id=1, tournament_id=e2)["change_x100"] == 370
    assert row(tr, player_id=1, tournament_id=e3)["change_x100"] == 780
    got = row(r.rating_lists, player_id=1, list_date=dt.date(2025, 12, 1))
    assert (got["change"], got["rating"]) == (5, 2405)
    # 2813 is seen capped ("2800*") by the 2400 player
    assert row(r.rating_changes, player_id=1, opponent_id=24)["d_used"] == -400


def test_TV24_F_P04_sum_minus_001_rounds_to_zero():
    s = Scenario()
    s.official(dt.date(2025, 11, 1), 1, 2053, k=20)  # FIDE's corrected Ro, as an explicit input
    opps = {2: (1675, "W"), 3: (2310, "L"), 4: (1653, "W"), 5: (1884, "W"), 6: (2218, "L")}
    for pid, (r, _) in opps.items():
        s.official(dt.date(2025, 11, 1), pid, r, k=20)
    s.event(dt.date(2025, 11, 10), dt.date(2025, 11, 14), [(1, p, res) for p, (_, res) in opps.items()])
    r = s.run()
    wpd = r.rating_changes.filter(pl.col("player_id") == 1).sort("opponent_id")["w_minus_pd"]
    assert [str(x) for x in wpd] == ["0.09", "-0.18", "0.08", "0.28", "-0.28"]
    assert row(r.tournament_ratings, player_id=1)["change_x100"] == -20
    got = row(r.rating_lists, player_id=1, list_date=dt.date(2025, 12, 1))
    assert (got["change"], got["rating"]) == (0, 2053)


def test_TV25_700_cap_39_games_k17_rounded_once():
    """39 games in 5 events, list K 20 -> K 17; the change is rounded once per period."""
    s = Scenario()
    s.official(dt.date(2026, 8, 1), 1, 2054, k=20)
    pid = 100
    sizes = [9, 9, 9, 9, 3]
    results = "WDLWW"
    for e, size in enumerate(sizes):
        games = []
        for i in range(size):
            pid += 1
            s.official(dt.date(2026, 8, 1), pid, 1900 + 13 * i + 7 * e, k=20)
            games.append((1, pid, results[(i + e) % 5]))
        s.event(dt.date(2026, 8, 2 + 5 * e), dt.date(2026, 8, 4 + 5 * e), games)
    r = s.run()
    got = row(r.rating_lists, player_id=1, list_date=dt.date(2026, 9, 1))
    assert got["games"] == 39 and got["k"] == 17
    total = r.tournament_ratings.filter(pl.col("player_id") == 1)["change_x100"].sum()
    assert got["change"] == b02.period_change(total // 17, 17)


def test_TV25_event_missing_closing_date_goes_to_next_list():
    """F-P05: an event ending 30 Aug 2026 misses the 1 Sep list (closing 29 Aug), is rated on
    the October list and uses the August list of its start."""
    s = Scenario()
    s.official(dt.date(2026, 8, 1), 1, 2054, k=20)
    s.official(dt.date(2026, 8, 1), 2, 2054, k=20)
    s.official(dt.date(2026, 9, 1), 1, 2100, k=20)
    s.event(dt.date(2026, 8, 21), dt.date(2026, 8, 30), [(1, 2, "W")])
    r = s.run()
    got = row(r.rating_changes, player_id=1)
    assert got["list_date"] == dt.date(2026, 10, 1)
    assert got["ro"] == 2054  # the August list, not September's 2100


def _tv26(**params) -> int:
    s = Scenario()
    s.official(dt.date(2023, 5, 1), 1, 2000, k=20)
    opps = [(1063, "W"), (1299, "W"), (1413, "W"), (1872, "D"), (1851, "L"), (1427, "W"), (1682, "W")]
    for i, (r, _) in enumerate(opps):
        s.official(dt.date(2023, 5, 1), 10 + i, r, k=20)
    s.event(dt.date(2023, 5, 10), dt.date(2023, 5, 16), [(1, 10 + i, res) for i, (_, res) in enumerate(opps)])
    return row(s.run(**params).tournament_ratings, player_id=1)["change_x100"]


def test_TV26_v2022_one_upgrade_per_event():
    assert _tv26() == -1220


@pytest.mark.parametrize("rules", ["V2017", "V2024"])
def test_TV26_every_game_capped_under_v2017_and_v2024(rules):
    assert _tv26(rules=rules) == -840


# ---- 12.4 K and the 700 cap -------------------------------------------------------------


@pytest.mark.parametrize(
    "k,n,expected",
    [(40, 17, 40), (40, 18, 38), (40, 20, 35), (20, 35, 20), (20, 36, 19), (20, 39, 17), (10, 70, 10), (10, 71, 9)],
)
def test_K_table_12_4(k, n, expected):
    assert b02.cap_k(k, n) == expected


@pytest.mark.parametrize(
    "kw,expected",
    [
        ({"ever_2400": True, "ever_2300": True, "junior": True, "total_games": 5}, 10),
        ({"ever_2400": False, "ever_2300": False, "junior": True, "total_games": 100}, 40),
        ({"ever_2400": False, "ever_2300": True, "junior": True, "total_games": 100}, 20),
        ({"ever_2400": False, "ever_2300": False, "junior": False, "total_games": 29}, 40),
        ({"ever_2400": False, "ever_2300": False, "junior": False, "total_games": 30}, 20),
        ({"ever_2400": False, "ever_2300": False, "junior": False, "total_games": None}, 20),
    ],
)
def test_K_rule_order(kw, expected):
    assert b02.k_factor(**kw) == expected


def test_K_in_engine_junior_and_unknown_history():
    """Bootstrapped players (history unknown) get K 20, juniors K 40, ≥ 2400 K 10."""
    s = Scenario()
    s.player(1, birth_year=2010)
    s.player(2, birth_year=1980)
    s.player(3, birth_year=2010)
    s.event(
        dt.date(2024, 5, 10), dt.date(2024, 5, 12), [(1, 2, "D"), (3, 2, "D")], file_ratings={1: 1800, 2: 1900, 3: 2450}
    )
    s.event(dt.date(2024, 6, 10), dt.date(2024, 6, 12), [(1, 2, "D"), (3, 2, "D")])
    lst = s.run().rating_lists
    july = dt.date(2024, 7, 1)
    assert row(lst, player_id=1, list_date=july)["k"] == 40
    assert row(lst, player_id=2, list_date=july)["k"] == 20
    assert row(lst, player_id=3, list_date=july)["k"] == 10


def _k_of_junior_candidate(day: dt.date, birth_year: int, birth_date: dt.date | None) -> int:
    """K on the list after an event on `day` of a player born in `birth_year` (40 games played)."""
    s = Scenario()
    s.official(day.replace(day=1), 1, 1800, k=None, birth_year=birth_year)
    s.official(day.replace(day=1), 2, 1800, k=20)
    # history of many games: not a new player
    s.con.execute("UPDATE official_lists SET games = 40")
    s.event(day, day, [(1, 2, "W")])
    if birth_date is not None:
        s.con.execute("UPDATE players SET birth_date = ? WHERE player_id = 1", [birth_date])
    lst = s.run().rating_lists
    nxt = (day.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
    return row(lst, player_id=1, list_date=nxt)["k"]


@pytest.mark.parametrize(
    "day,birth_date,expected",
    [
        # V2022+: until the end of the year of the 18th birthday, whatever the birth date
        (dt.date(2023, 5, 10), None, 40),
        (dt.date(2023, 5, 10), dt.date(2005, 1, 15), 40),
        # V2017 with only a birth year: year-based, as the lists show (spec §4.2 [R])
        (dt.date(2019, 5, 10), None, 40),
        # V2017 with a birth date: "until their 18th birthday", read at the start of the
        # period (the 1 May 2019 list)
        (dt.date(2019, 5, 10), dt.date(2001, 4, 30), 20),
        (dt.date(2019, 5, 10), dt.date(2001, 5, 1), 20),
        (dt.date(2019, 5, 10), dt.date(2001, 5, 2), 40),
        (dt.date(2019, 5, 10), dt.date(2001, 12, 31), 40),
    ],
)
def test_K_junior_wording_v2017_birthday_v2022_year_end(day, birth_date, expected):
    """List year − birth year = 18 (FIDE B.02 8.3.3, spec §4.1–4.2)."""
    assert _k_of_junior_candidate(day, day.year - 18, birth_date) == expected


def test_is_junior_reference():
    d = dt.date(2019, 5, 1)
    assert b02.is_junior(d, 2001)
    assert not b02.is_junior(d, 2000)
    assert b02.is_junior(d, 2001, dt.date(2001, 5, 2), rule="birthday")
    assert not b02.is_junior(d, 2001, dt.date(2001, 5, 1), rule="birthday")
    # the birth date only matters to the V2017 wording
    assert b02.is_junior(d, 2001, dt.date(2001, 1, 1), rule="year_end")
    # born on 29 February: 18th birthday on 28 February of a common year
    assert b02.eighteenth_birthday(dt.date(2000, 2, 29)) == dt.date(2018, 2, 28)
    assert not b02.is_junior(dt.date(2018, 2, 28), 2000, dt.date(2000, 2, 29), rule="birthday")


# ---- 12.5 initial ratings -------------------------------------------------------------

OLD = b02.RULES["V2022"]
NEW = b02.RULES["V2024"]


@pytest.mark.parametrize(
    "vid,opps,w_x100,old,new",
    [
        ("TV27", [2000] * 5, 300, 2020, 1993),
        ("TV28", [2000] * 5, 200, 1928, 1893),
        ("TV29", [2000] * 5, 250, 2000, 1943),
        ("TV30", [2100] * 5, 500, 2200, 2200),
        ("TV31", [2400] * 5, 300, 2420, 2200),
        ("TV32", [1600] * 5, 100, 1360, 1499),
        ("TV33", [1657] * 5, 300, 1677, 1748),
        ("TV34", [1800] * 7, 400, 1820, 1843),
        ("TV35", [1902, 1877, 1884, 2012, 1832], 300, 1921, 1922),
        ("TV36", [1600, 1700, 1800, 1500, 1400, 1650], 450, 1668, 1797),
    ],
)
def test_TV27_to_TV36_initial_ratings(vid, opps, w_x100, old, new):
    assert b02.initial_rating(opps, w_x100, OLD) == old, vid
    assert b02.initial_rating(opps, w_x100, NEW) == new, vid


def _newcomer(day: dt.date, opps: list[int], results: str, **params):
    s = Scenario()
    for i, r in enumerate(opps):
        s.official(day.replace(day=1), 10 + i, r, k=20)
    s.event(day, day + dt.timedelta(days=4), [(1, 10 + i, res) for i, res in enumerate(results)])
    return s


def test_TV27_newcomer_published_v2024_and_v2022_in_engine():
    for day, expected in ((V2024_DAY, 1993), (V2022_DAY, 2020)):
        s = _newcomer(day, [2000] * 5, "WWWLL")
        lst = s.run().rating_lists.filter(pl.col("player_id") == 1)
        got = lst.row(0, named=True)
        assert got["rating"] == expected and "new" in got["flags"], day


def test_TV35_published_first_rating_1922():
    s = _newcomer(dt.date(2025, 11, 5), [1902, 1877, 1884, 2012, 1832], "WWWLL")
    got = row(s.run().rating_lists, player_id=1, list_date=dt.date(2025, 12, 1))
    assert got["rating"] == 1922


def test_TV37_zero_first_event_disregarded_TV38_later_zero_counts_below_floor():
    s = Scenario()
    for i in range(5):
        s.official(dt.date(2024, 5, 1), 10 + i, 1500, k=20)
    s.event(dt.date(2024, 5, 5), dt.date(2024, 5, 6), [(1, 10 + i, "L") for i in range(5)])
    s.event(dt.date(2024, 6, 5), dt.date(2024, 6, 6), [(1, 10, "L"), (1, 11, "D")])
    s.event(dt.date(2024, 7, 5), dt.date(2024, 7, 6), [(1, 10 + i, "L") for i in range(5)])
    lst = s.run().rating_lists.filter(pl.col("player_id") == 1).sort("list_date")
    # first event disregarded: nothing pooled, so no row on the June list
    assert lst.filter(pl.col("list_date") == dt.date(2024, 6, 1)).height == 0
    july, aug = (row(lst, list_date=dt.date(2024, m, 1)) for m in (7, 8))
    assert july["rating"] is None and july["total_games"] == 2  # 2 games: not enough
    # 7 games, 0.5 points, against 1500s: the later zero event counts; V2024 Ru 1294 is
    # below 1400 -> not published (TV-38)
    assert aug["rating"] is None and aug["total_games"] == 7
    assert b02.initial_rating([1500] * 7, 50, NEW) == 1294
    assert b02.initial_rating([1500] * 5, 0, NEW) == 1277  # TV-38 as printed in the spec


# ---- 12.6 performance ------------------------------------------------------------------


@pytest.mark.parametrize(
    "vid,opps,w_x100,expected",
    [
        ("TV39", [1500], 100, 2300),
        ("TV39", [1500], 0, 700),
        ("TV39", [1500], 50, 1500),
        ("TV40", [1500, 1500], 100, 1500),
        ("TV40", [1500, 1700], 100, 1600),
        ("TV41", [1500, 1500], 150, 1693),
        ("TV41", [1500, 1500, 1500], 200, 1625),
        ("TV42", [2200, 2100, 2000], 250, 2373),
        ("TV44", [2550, 2500, 2480, 2450, 2420, 2400, 2390, 2350, 2200], 700, 2636),
        ("TV44", [2550, 2500, 2480, 2450, 2420, 2400, 2390, 2350, 2200], 650, 2582),
    ],
)
def test_TV39_to_TV44_performance(vid, opps, w_x100, expected):
    assert b02.performance(opps, w_x100) == expected, vid


def test_tournament_rp_in_engine_seed_1402_75_percent():
    """Seed 002 (PL): opponents 1150 W, 1490 L, 1260 W, 1420 W, 1510 W, 1580 D -> Rc 1402,
    p 0.75, Rp 1595."""
    s = Scenario()
    opps = [(1150, "W"), (1490, "L"), (1260, "W"), (1420, "W"), (1510, "W"), (1580, "D")]
    s.official(dt.date(2024, 5, 1), 1, 1500, k=20)
    for i, (r, _) in enumerate(opps):
        s.official(dt.date(2024, 5, 1), 10 + i, r, k=20)
    s.event(V2024_DAY, V2024_DAY, [(1, 10 + i, res) for i, (_, res) in enumerate(opps)])
    got = row(s.run().tournament_ratings, player_id=1)
    assert (got["ra"], got["rp"]) == (1402, 1595)


def test_seed_2600_beats_2700_gives_2606():
    s = Scenario()
    s.official(dt.date(2024, 5, 1), 1, 2600, k=10)
    s.official(dt.date(2024, 5, 1), 2, 2700, k=10)
    s.event(V2024_DAY, V2024_DAY, [(1, 2, "W")])
    lst = s.run().rating_lists
    assert row(lst, player_id=1, list_date=dt.date(2024, 6, 1))["rating"] == 2606
    assert row(lst, player_id=2, list_date=dt.date(2024, 6, 1))["rating"] == 2694


# ---- 12.7 compression of 1 March 2024 ---------------------------------------------------


@pytest.mark.parametrize(
    "before,after",
    [
        (1000, 1400),
        (1500, 1700),
        (1600, 1760),
        (1900, 1940),
        (1950, 1970),
        (1001, 1401),
        (1999, 1999),
        (2000, 2000),
        (2500, 2500),
    ],
)
def test_compression_2024_formula(before, after):
    assert b02.compress_2024(before) == after


def test_compression_on_march_2024_list_for_inactive_players():
    s = Scenario()
    s.official(dt.date(2024, 1, 1), 1, 1500, k=20)
    s.official(dt.date(2024, 1, 1), 2, 1000, k=20)
    s.official(dt.date(2024, 1, 1), 3, 2100, k=20)
    s.official(dt.date(2024, 1, 1), 4, 2100, k=20)
    s.event(dt.date(2024, 1, 10), dt.date(2024, 1, 12), [(3, 4, "D")])
    s.event(dt.date(2024, 3, 10), dt.date(2024, 3, 12), [(3, 4, "D")])
    lst = s.run().rating_lists
    feb, mar = dt.date(2024, 2, 1), dt.date(2024, 3, 1)
    assert row(lst, player_id=1, list_date=feb)["rating"] == 1500
    assert row(lst, player_id=1, list_date=mar)["rating"] == 1700
    assert row(lst, player_id=2, list_date=mar)["rating"] == 1400
    assert "adj2024:+200" in row(lst, player_id=1, list_date=mar)["flags"].split(",")
    assert row(lst, player_id=3, list_date=mar)["rating"] == 2100


def test_adjustment_2024_is_explained_on_the_list_row():
    # 1551 with no game in the period: 1551 + 0.4 x 449 = 1730.6 -> 1731; `change` stays the
    # K-based change (0) and the flag carries the points the adjustment added
    s = Scenario()
    s.official(dt.date(2024, 1, 1), 1, 1551, k=20)
    s.official(dt.date(2024, 1, 1), 2, 1600, k=20)
    s.official(dt.date(2024, 1, 1), 3, 1600, k=20)
    s.event(dt.date(2024, 2, 10), dt.date(2024, 2, 12), [(2, 3, "W")])
    lst = s.run().rating_lists
    mar = dt.date(2024, 3, 1)
    idle = row(lst, player_id=1, list_date=mar)
    assert (idle["rating"], idle["games"], idle["change"]) == (1731, 0, 0)
    assert idle["flags"].split(",") == ["adj2024:+180"]
    won = row(lst, player_id=2, list_date=mar)
    # 1600 + 10 = 1610, then + 0.4 x 390 = 156
    assert (won["rating"], won["change"], won["flags"]) == (1766, 10, "adj2024:+156")
    assert row(lst, player_id=3, list_date=mar)["flags"] == "adj2024:+164"


def test_a_birth_date_or_year_after_the_list_makes_no_junior():
    d = dt.date(2012, 10, 1)
    assert not b02.is_junior(d, 2013)
    assert not b02.is_junior(d, 2013, dt.date(2013, 1, 1), rule="birthday")
    assert not b02.is_junior(d, 1995, dt.date(2013, 1, 1), rule="birthday")
    assert not b02.is_junior(dt.date(2018, 7, 1), 2018, dt.date(2018, 9, 1), rule="birthday")
