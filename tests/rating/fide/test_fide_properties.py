"""Property tests (hypothesis) of the FIDE tables, rounding and engine, plus periods and
time-control classification."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elopipe.rating.fide import b02
from elopipe.rating.fide.reference import rate_period_python
from elopipe.rating.periods import get_scheme, per_event_calendar
from elopipe.rating.rounding import div_round, round_decimal, round_x100, round_x100_expr
from elopipe.rating.tables import dp, dp_expr, dp_table, pd_table, pd_x100, pd_x100_expr
from elopipe.read.rate_of_play import classify_pgn, classify_text, pgn_minutes, text_minutes
from tests.helpers.fide import Scenario, row

# ---- tables -------------------------------------------------------------------------------


def test_tables_loaded_from_package_data():
    assert dp_table().height == 101 and pd_table().height == 51
    assert dp(100) == 800 and dp(0) == -800 and dp(75) == 193
    assert pd_x100(735) == 99 and pd_x100(736) == 100 and pd_x100(-736) == 0


@given(st.integers(-2000, 2000))
def test_pd_mirror_and_monotone(d):
    assert pd_x100(d) + pd_x100(-d) == 100 or d == 0
    assert pd_x100(d) <= pd_x100(d + 1)


@given(st.integers(0, 99))
def test_dp_monotone_and_antisymmetric(p):
    assert dp(p) < dp(p + 1)
    assert dp(100 - p) == -dp(p)


# no deadline: a test asserts results, never time (two Polars frames per example took 253 ms on a loaded machine)
@settings(deadline=None)
@given(st.lists(st.integers(-1500, 1500), min_size=1, max_size=50))
def test_polars_lookups_equal_scalar(ds):
    df = pl.DataFrame({"d": ds})
    got = df.select(pd_x100_expr(pl.col("d"))).to_series().to_list()
    assert got == [pd_x100(d) for d in ds]
    ps = [abs(d) % 101 for d in ds]
    got_dp = pl.DataFrame({"p": ps}).select(dp_expr(pl.col("p"))).to_series().to_list()
    assert got_dp == [dp(p) for p in ps]


# ---- rounding -----------------------------------------------------------------------------


@given(st.integers(0, 10_000))
def test_half_rounds_away_from_zero(k):
    assert round_x100(100 * k + 50) == k + 1
    assert round_x100(-(100 * k + 50)) == -(k + 1)
    assert round_decimal(Decimal(k) + Decimal("0.5")) == k + 1
    assert round_decimal(-(Decimal(k) + Decimal("0.5"))) == -(k + 1)


@given(st.integers(-100_000, 100_000))
def test_rounding_matches_decimal_and_polars(x):
    expected = round_decimal(Decimal(x) / 100)
    assert round_x100(x) == expected
    assert pl.DataFrame({"x": [x]}).select(round_x100_expr(pl.col("x"))).item() == expected


@given(st.integers(-(10**6), 10**6), st.integers(1, 1000))
def test_div_round(num, den):
    assert div_round(num, den) == round_decimal(Decimal(num) / Decimal(den))


def test_python_round_is_not_used_for_halves():
    assert round(2.5) == 2  # banker's rounding, which the rules forbid
    assert round_x100(250) == 3 and round_x100(-250) == -3


# ---- one game, both sides ----------------------------------------------------------------


@given(
    st.integers(1400, 2850),
    st.integers(1400, 2850),
    st.sampled_from([0, 50, 100]),
    st.sampled_from([10, 20, 40]),
    st.sampled_from(["V2017", "V2024"]),
)
def test_symmetric_game_equal_k_opposite_changes(a, b, score, k, version):
    rules = b02.RULES[version]
    ca = b02.game_change_x100(a, b, score, k, rules)
    cb = b02.game_change_x100(b, a, 100 - score, k, rules)
    assert ca == -cb


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1400, 2600),
    st.integers(1400, 2600),
    st.sampled_from(["W", "D", "L"]),
)
def test_symmetric_game_in_engine(a, b, res):
    s = Scenario()
    s.official(dt.date(2024, 5, 1), 1, a, k=20)
    s.official(dt.date(2024, 5, 1), 2, b, k=20)
    s.event(dt.date(2024, 5, 10), dt.date(2024, 5, 10), [(1, 2, res)])
    tr = s.run().tournament_ratings
    assert row(tr, player_id=1)["change_x100"] == -row(tr, player_id=2)["change_x100"]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_engine_equals_per_game_reference_on_random_months(data):
    """The Polars engine and the straightforward per-game loop agree on a random month."""
    n_players = data.draw(st.integers(2, 12))
    ratings = {p: data.draw(st.integers(1400, 2800)) for p in range(1, n_players + 1)}
    ks = {p: data.draw(st.sampled_from([10, 20, 40])) for p in ratings}
    n_games = data.draw(st.integers(1, 40))
    games = []
    for _ in range(n_games):
        w = data.draw(st.integers(1, n_players))
        b = data.draw(st.integers(1, n_players).filter(lambda x, w=w: x != w))
        games.append((w, b, data.draw(st.sampled_from(["W", "D", "L"]))))
    start = dt.date(2025, 11, 3)
    s = Scenario()
    for p, r in ratings.items():
        s.official(dt.date(2025, 11, 1), p, r, k=ks[p])
    s.event(start, start + dt.timedelta(days=3), games)
    lst = s.run().rating_lists.filter(pl.col("list_date") == dt.date(2025, 12, 1))
    score = {"W": 100, "D": 50, "L": 0}
    ref = rate_period_python(((w, b, score[r], start) for w, b, r in games), ratings, ks)
    got = {
        p: (n, k, c, r)
        for p, n, k, c, r in lst.filter(pl.col("games") > 0)
        .select("player_id", "games", "k", "change", "rating")
        .iter_rows()
    }
    assert got == ref


# ---- periods -----------------------------------------------------------------------------


def test_fide_periods_closing_date_and_list_in_force():
    f = get_scheme("fide")
    assert f.closing_date(dt.date(2026, 9, 1)) == dt.date(2026, 8, 29)
    assert f.rated_on(dt.date(2026, 8, 29)) == dt.date(2026, 9, 1)
    assert f.rated_on(dt.date(2026, 8, 30)) == dt.date(2026, 10, 1)  # F-P05
    assert f.rated_on(dt.date(2025, 11, 2)) == dt.date(2025, 12, 1)  # F-P02
    assert f.in_force(dt.date(2025, 10, 31)) == dt.date(2025, 10, 1)
    # bi-monthly lists (odd months) before August 2012
    assert f.in_force(dt.date(2011, 6, 15)) == dt.date(2011, 5, 1)
    assert f.rated_on(dt.date(2011, 5, 15)) == dt.date(2011, 7, 1)
    assert f.lists_between(dt.date(2012, 5, 1), dt.date(2012, 10, 1)) == [
        dt.date(2012, 5, 1),
        dt.date(2012, 7, 1),
        dt.date(2012, 8, 1),
        dt.date(2012, 9, 1),
        dt.date(2012, 10, 1),
    ]


@pytest.mark.parametrize(
    "event_end, list_date",
    [
        (dt.date(2008, 9, 14), dt.date(2008, 10, 1)),  # quarterly lists before July 2009
        (dt.date(2008, 12, 28), dt.date(2009, 1, 1)),
        (dt.date(2009, 4, 2), dt.date(2009, 7, 1)),  # the April list's closing date was 29 March
        (dt.date(2009, 7, 20), dt.date(2009, 9, 1)),  # bi-monthly, odd months
        (dt.date(2010, 2, 10), dt.date(2010, 3, 1)),
        (dt.date(2010, 2, 25), dt.date(2010, 5, 1)),  # the bi-monthly lists closed 7 days before
        (dt.date(2012, 6, 25), dt.date(2012, 8, 1)),  # the last of them: 1 July 2012, closing 24 June
        (dt.date(2012, 7, 12), dt.date(2012, 8, 1)),  # monthly from August 2012
        (dt.date(2014, 9, 14), dt.date(2014, 10, 1)),
    ],
)
def test_the_fide_list_an_event_of_each_era_lands_on(event_end, list_date):
    f = get_scheme("fide")
    assert f.rated_on(event_end) == list_date
    assert f.lists_between(dt.date(2008, 1, 1), dt.date(2009, 12, 1)) == [
        dt.date(2008, 1, 1), dt.date(2008, 4, 1), dt.date(2008, 7, 1), dt.date(2008, 10, 1),
        dt.date(2009, 1, 1), dt.date(2009, 4, 1), dt.date(2009, 7, 1), dt.date(2009, 9, 1), dt.date(2009, 11, 1),
    ]  # fmt: skip


def test_ffe_and_per_event_periods():
    ffe = get_scheme("ffe")
    assert ffe.rated_on(dt.date(2025, 12, 31)) == dt.date(2026, 1, 1)
    assert ffe.rated_on(dt.date(2026, 1, 1)) == dt.date(2026, 5, 1)
    assert ffe.period_bounds(dt.date(2026, 9, 1)) == (dt.date(2026, 5, 1), dt.date(2026, 8, 31))
    assert per_event_calendar([dt.date(2024, 1, 3), dt.date(2024, 1, 3), None]) == [dt.date(2024, 1, 4)]
    with pytest.raises(ValueError):
        get_scheme("weekly")


@given(st.dates(dt.date(2009, 7, 1), dt.date(2030, 12, 31)))
def test_assign_matches_scalar(d):
    f = get_scheme("fide")
    df = pl.DataFrame({"start_date": [d], "end_date": [d + dt.timedelta(days=4)]})
    out = f.assign(df).row(0, named=True)
    assert out["list_date"] == f.rated_on(d + dt.timedelta(days=4))
    assert out["in_force"] == f.in_force(d)
    assert f.closing_date(out["list_date"]) >= d + dt.timedelta(days=4)
    assert out["in_force"] <= d < out["list_date"]


# ---- time controls -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "tc,cls",
    [
        ("40/7200:3600", "standard"),
        ("5400+30", "standard"),
        ("1200+10", "rapid"),
        ("600", "blitz"),
        ("180+2", "blitz"),
        ("60+1", "bullet"),
        ("1/259200", "correspondence"),
        ("?", None),
        (None, None),
        # a base under 15 is minutes (no clock starts with 1-14 s): '3+2' was bullet, on no list
        ("3+2", "blitz"),
        ("5+3", "blitz"),
        ("15+10", "rapid"),  # 15 s and 10 s a move: lichess's shortest base, seconds as written
        # free text in the tag (pgn-faults 19: the FIDE World Cup 2025 PGN)
        (": 90 minutes for the first 40 moves, followed by 30 minutes with 30 seconds per move", "standard"),
    ],
)
def test_pgn_time_control(tc, cls):
    assert classify_pgn(tc) == cls


@pytest.mark.parametrize(
    "text,minutes",
    [
        ("90 minutes + 30 seconds per move", 120),
        ("1:30 + 10 from move 1", 100),
        ("100'x40+15'+30\"", 145),
        ("40/120, 60", 180),
        ("15 minutes plus 10 sec per move", 25),
        ("40/6000+30:900+30", 145),
        ("moves/time, increment", None),
    ],
)
def test_trf_122_time_control_text(text, minutes):
    assert text_minutes(text) == minutes


def test_base_plus_60_increments_over_60_moves():
    # 50 min + 10 s: 50 + 10 = 60 minutes -> standard; 45 + 10 s: 55 -> rapid
    assert pgn_minutes("3000+10") == 60 and classify_pgn("3000+10") == "standard"
    assert classify_pgn("2700+10") == "rapid"
    assert classify_text("10 min") == "blitz" and classify_text("11 min") == "rapid"


def test_unknown_time_control_counts_as_standard_and_is_flagged_or_configured():
    s = Scenario()
    s.official(dt.date(2024, 5, 1), 1, 2000, k=20)
    s.official(dt.date(2024, 5, 1), 2, 2000, k=20)
    s.event(dt.date(2024, 5, 10), dt.date(2024, 5, 10), [(1, 2, "W")])
    s.event(dt.date(2024, 5, 11), dt.date(2024, 5, 11), [(1, 2, "W")], time_control="15+10")
    r = s.run()
    assert r.rating_changes.height == 2  # the rapid event is not in the standard list
    assert r.rating_changes["tc_assumed"].all()
    assert r.skips["reason"].to_list() == ["rate_class:rapid"]
    rapid = s.run(system="fide-rapid")
    assert rapid.rating_changes.height == 2 and not rapid.rating_changes["tc_assumed"].any()
    assert s.run(unknown_tc="rapid").rating_changes.height == 0
