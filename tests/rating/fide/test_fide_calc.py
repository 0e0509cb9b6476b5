"""`fide_period`, the FIDE calculator of `elopipe elo --fide`, against the spec's test vectors
(../shared/specs/fide-rating-rules.md §12) and the seed's worked example."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from elopipe.rating.fide.calc import fide_period

W, D, L = Decimal(1), Decimal("0.5"), Decimal(0)
V2017_DAY = dt.date(2018, 6, 1)
V2024_DAY = dt.date(2024, 6, 1)
V2024A_DAY = dt.date(2025, 11, 1)  # V2024 as amended: no cap for a player rated 2650 or more


def test_seed_example_by_the_table() -> None:
    # 1750 against 1810, a win: +11.7 by the logistic formula (seed 001), +11.6 by table 8.1.2
    res = fide_period(1750, [(1810, W)], on=V2024_DAY, k=20)
    assert (res.games[0].d_raw, res.games[0].pd_x100) == (-60, 42)
    assert res.change_x100 == 1160
    assert (res.change, res.new_rating, res.k, res.k_source) == (12, 1762, 20, "given")


# (id, own, opponent, score, K, date, K x (W - PD) in hundredths): §12.1
SINGLE_GAMES = [
    ("TV-01", 2000, 2000, W, 10, V2024_DAY, 500),
    ("TV-02a", 2003, 2000, W, 10, V2024_DAY, 500),
    ("TV-02b", 2004, 2000, W, 10, V2024_DAY, 490),
    ("TV-03a", 2010, 2000, W, 10, V2024_DAY, 490),
    ("TV-03b", 2011, 2000, W, 10, V2024_DAY, 480),
    ("TV-04a", 2206, 2000, W, 10, V2024_DAY, 240),
    ("TV-04b", 2207, 2000, W, 10, V2024_DAY, 230),
    ("TV-05a", 2391, 2000, W, 10, V2024_DAY, 90),
    ("TV-05b", 2392, 2000, W, 10, V2024_DAY, 80),
    ("TV-06a", 2000, 2003, L, 10, V2024_DAY, -500),
    ("TV-06b", 2000, 2004, L, 10, V2024_DAY, -490),
    ("TV-07a", 1656, 2000, L, 10, V2024_DAY, -120),
    ("TV-07b", 1655, 2000, L, 10, V2024_DAY, -110),
    ("TV-08", 2092, 2000, W, 15, V2024_DAY, 555),
    ("TV-09", 2000, 2092, D, 30, V2024_DAY, 390),
    ("TV-10", 2600, 2100, W, 10, V2017_DAY, 80),
    ("TV-11 V2017", 1500, 2000, D, 20, V2017_DAY, 840),
    ("TV-11 V2024", 1500, 2000, D, 20, V2024_DAY, 840),
    ("TV-12", 2650, 2150, W, 10, V2024A_DAY, 40),
    ("TV-13", 2700, 1964, W, 10, V2024A_DAY, 0),
    ("TV-14", 2700, 1900, L, 10, V2024A_DAY, -1000),
    ("TV-15", 2200, 2700, L, 20, V2024A_DAY, -160),
    ("TV-16a", 1300, 1800, W, 30, V2017_DAY, 2760),
    ("TV-16b", 2050, 1800, D, 40, V2017_DAY, -1240),
]


@pytest.mark.parametrize(("own", "opp", "score", "k", "on", "expected"), [v[1:] for v in SINGLE_GAMES],
                         ids=[v[0] for v in SINGLE_GAMES])  # fmt: skip
def test_single_game_vectors(own: int, opp: int, score: Decimal, k: int, on: dt.date, expected: int) -> None:
    # a player rated 2400 or more gets K 10 from the rules, which these vectors use too
    res = fide_period(own, [(opp, score)], on=on, k=k)
    assert res.k == k
    assert res.change_x100 == expected


def test_v2022_lower_player_uncapped() -> None:
    # TV-11 under V2022 practice: the lower side is not capped (D = -500 -> PD .04): +9.2
    res = fide_period(1500, [(2000, D)], on=dt.date(2023, 1, 1), k=20)
    assert res.rules == "V2022"
    assert res.change_x100 == 920


# §12.2, K 40: own, opponent, (win, loss, draw) rounded changes
ROUNDED = [
    ("TV-17", 1500, 1500, (20, -20, 0)),
    ("TV-18", 1500, 1900, (37, -3, 17)),
    ("TV-18 capped", 1500, 2900, (37, -3, 17)),
    ("TV-19", 1500, 1600, (26, -14, 6)),
    ("TV-20", 2000, 1600, (3, -37, -17)),
    ("TV-20 capped", 2000, 1000, (3, -37, -17)),
    ("TV-21", 2000, 1900, (14, -26, -6)),
]


@pytest.mark.parametrize(("own", "opp", "changes"), [v[1:] for v in ROUNDED], ids=[v[0] for v in ROUNDED])
def test_rounded_one_game_vectors(own: int, opp: int, changes: tuple[int, int, int]) -> None:
    got = tuple(fide_period(own, [(opp, s)], on=V2017_DAY, k=40).change for s in (W, L, D))
    assert got == changes


def test_tv22_player_over_2650_uses_the_raw_difference() -> None:
    res = fide_period(2813, [(1787, W), (2025, W), (2310, W), (2400, W), (2505, D)], on=V2024A_DAY)
    assert [g.w_minus_pd_x100 for g in res.games] == [0, 0, 4, 7, -36]
    assert (res.k, res.k_source) == (10, "rules")
    assert (res.change_x100, res.change, res.new_rating) == (-250, -3, 2810)


def test_tv24_rounds_to_zero() -> None:
    res = fide_period(2053, [(1675, W), (2310, L), (1653, W), (1884, W), (2218, L)], on=V2024_DAY, k=20)
    assert [g.w_minus_pd_x100 for g in res.games] == [9, -18, 8, 28, -28]
    assert (res.change_x100, res.change, res.new_rating) == (-20, 0, 2053)


TV26 = [(1063, W), (1299, W), (1413, W), (1872, D), (1851, L), (1427, W), (1682, W)]


def test_tv26_v2022_upgrades_one_game_only() -> None:
    res = fide_period(2000, TV26, on=dt.date(2022, 5, 1), k=20)
    assert [g.d_used for g in res.games][:3] == [400, 701, 587]
    assert res.change_x100 == -1220


def test_tv26_v2017_and_v2024_cap_every_game() -> None:
    for on, rules in ((V2017_DAY, None), (dt.date(2022, 5, 1), "V2024"), (dt.date(2022, 5, 1), "V2017")):
        assert fide_period(2000, TV26, on=on, rules=rules, k=20).change_x100 == -840


@pytest.mark.parametrize(("k", "n", "used"), [(40, 17, 40), (40, 18, 38), (40, 20, 35), (20, 35, 20), (20, 36, 19),
                                              (20, 39, 17), (10, 70, 10), (10, 71, 9)])  # fmt: skip
def test_700_cap(k: int, n: int, used: int) -> None:
    # §12.4; a player rated 2400 or more has K 10 by the rules
    own = 2450 if k == 10 else 2000
    res = fide_period(own, [(own, D)] * n, on=V2024_DAY, k=k)
    assert (res.k_before_cap, res.k) == (k, used)


def test_k_from_the_players_data() -> None:
    # B.02 8.3.3: fewer than 30 games -> 40; a junior never 2300 -> 40; else 20; 2400 reached -> 10
    assert fide_period(1800, [(1800, W)], on=V2024_DAY, k=15, total_games=12).k == 40
    assert fide_period(1800, [(1800, W)], on=V2024_DAY, k=15, total_games=100).k == 20
    assert fide_period(1800, [(1800, W)], on=V2024_DAY, k=15, birth_year=2010).k == 40
    assert fide_period(2350, [(1800, W)], on=V2024_DAY, k=15, birth_year=2010, ever_2400=True).k == 10
    given = fide_period(1800, [(1800, W)], on=V2024_DAY, k=15)
    assert (given.k, given.k_source) == (15, "given")
    # the 2011 rules: K 30 under 30 games, 15 below 2400
    assert fide_period(1800, [(1800, W)], on=dt.date(2012, 1, 1), total_games=5).k == 30
    assert fide_period(1800, [(1800, W)], on=dt.date(2012, 1, 1), total_games=50).k == 15


def test_errors_are_sentences() -> None:
    with pytest.raises(ValueError, match="unknown FIDE rules version V2030; known: V2017, V2022, V2024"):
        fide_period(1800, [(1800, W)], on=V2024_DAY, rules="V2030")
    with pytest.raises(ValueError, match="at least one game"):
        fide_period(1800, [], on=V2024_DAY)
