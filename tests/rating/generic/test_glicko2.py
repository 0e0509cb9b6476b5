"""Glicko-2 through the `glicko2` package, with the two workarounds of elopipe.rating.generic.glicko."""

from __future__ import annotations

import datetime as dt
import math

import glicko2
import polars as pl
import pytest

from elopipe.rating.generic.glicko import GlickoParams, GlickoState, idle, rate_periods, update

SCALE = 173.7178


def reference_volatility(r, rd, vol, games, tau=0.5):
    """Glickman's step 5 (Illinois algorithm), written from the paper for the check."""
    mu, phi = (r - 1500) / SCALE, rd / SCALE
    g = lambda p: 1 / math.sqrt(1 + 3 * p * p / math.pi**2)  # noqa: E731
    e = lambda m, p: 1 / (1 + math.exp(-g(p) * (mu - m)))  # noqa: E731
    ops = [((o - 1500) / SCALE, ord_ / SCALE, s) for o, ord_, s in games]
    v = 1 / sum(g(p) ** 2 * e(m, p) * (1 - e(m, p)) for m, p, _ in ops)
    delta = v * sum(g(p) * (s - e(m, p)) for m, p, s in ops)
    a = math.log(vol**2)

    def f(x):
        ex = math.exp(x)
        return ex * (delta**2 - phi**2 - v - ex) / (2 * (phi**2 + v + ex) ** 2) - (x - a) / tau**2

    big_a = a
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    fa, fb = f(big_a), f(big_b)
    while abs(big_b - big_a) > 1e-6:
        c = big_a + (big_a - big_b) * fa / (fb - fa)
        fc = f(c)
        if fc * fb <= 0:
            big_a, fa = big_b, fb
        else:
            fa /= 2
        big_b, fb = c, fc
    return math.exp(big_a / 2)


def test_glickman_paper_example():
    """glicko2.pdf: 1500/200/0.06 vs 1400/30 W, 1550/100 L, 1700/300 L -> 1464.06, 151.52."""
    out = update(GlickoState(1500, 200, 0.06), [(1400, 30, 1), (1550, 100, 0), (1700, 300, 0)])
    assert out.rating == pytest.approx(1464.06, abs=0.01)
    assert out.rd == pytest.approx(151.52, abs=0.01)
    assert out.volatility == pytest.approx(0.05999, abs=1e-5)


def test_library_volatility_defect_is_worked_around():
    """The library's f(x) uses mu^2 instead of phi^2: visible for a player far from 1500."""
    games = [(1300, 50, 0.0)] * 29
    expected = reference_volatility(2200, 50, 0.06, games)
    lib = glicko2.Player(2200, 50, 0.06)
    lib.update_player([g[0] for g in games], [g[1] for g in games], [g[2] for g in games])
    assert abs(lib.vol - expected) > 0.01  # the raw library is off
    ours = update(GlickoState(2200, 50, 0.06), games)
    assert ours.volatility == pytest.approx(expected, rel=1e-4)


def test_idle_player_rd_grows_each_period():
    s = GlickoState(1800, 60, 0.06)
    one, six = idle(s, 1), idle(s, 6)
    assert s.rd < one.rd < six.rd
    # step 6: phi* = sqrt(phi^2 + sigma^2), once per period
    assert one.rd == pytest.approx(math.sqrt((60 / SCALE) ** 2 + 0.06**2) * SCALE, rel=1e-9)
    assert six.rd == pytest.approx(math.sqrt((60 / SCALE) ** 2 + 6 * 0.06**2) * SCALE, rel=1e-9)
    assert six.rating == s.rating and six.volatility == s.volatility


def test_idle_rd_is_capped_at_new_player_rd():
    """The library lets RD pass 350 (did_not_compete has no cap); we stop at rd_max."""
    lib = glicko2.Player(1500, 340, 0.06)
    for _ in range(500):
        lib.did_not_compete()
    assert lib.getRd() > 350
    assert idle(GlickoState(1500, 340, 0.06), 500).rd == 350


def test_rate_periods_ages_idle_players_between_lists():
    lists = [dt.date(2024, 2, 1), dt.date(2024, 3, 1), dt.date(2024, 8, 1)]
    g = pl.DataFrame(
        {
            "list_date": [lists[0]] * 2 + [lists[2]] * 2,
            "player_id": [1, 2, 1, 3],
            "opponent_id": [2, 1, 3, 1],
            "score": [1.0, 0.0, 0.5, 0.5],
        },
        schema_overrides={"list_date": pl.Date},
    )
    start = pl.DataFrame(
        {"player_id": [1, 2], "rating": [1800.0, 1700.0], "rd": [80.0, 80.0],
         "volatility": [0.06, 0.06]}
    )  # fmt: skip
    out = rate_periods(g, start, lists, steps=[1, 1, 5])
    p2 = out.filter(pl.col("player_id") == 2).sort("list_date")
    rds = p2["rd"].to_list()
    assert len(rds) == 3 and rds[0] < rds[1] < rds[2]  # idle in March and the 5 months after
    assert p2["rating"].n_unique() == 1 and p2["games"].to_list() == [1, 0, 0]
    assert rds[2] == pytest.approx(idle(GlickoState(0, rds[1], p2["volatility"][1]), 5).rd)
    p3 = out.filter(pl.col("player_id") == 3)
    assert p3.height == 1 and p3["rd"].item() < 350  # a newcomer starts at 1500/350


def test_default_params():
    p = GlickoParams()
    assert (p.initial_rating, p.initial_rd, p.initial_volatility, p.tau) == (1500, 350, 0.06, 0.5)
