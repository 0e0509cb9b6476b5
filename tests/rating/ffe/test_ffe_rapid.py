"""FFE national rapid, E02 2018 (spec ffe-rating-rules.md Part B.2): vectors R1-R6 of F.2."""

from __future__ import annotations

import polars as pl
import pytest

from elopipe.rating.ffe.classic import rate_period
from elopipe.rating.ffe.player_outcome import rate_player
from elopipe.rating.ffe.rapid import RAPID, credit_standard_rating, is_rapid_time_control

RAPID_LOGISTIC = RAPID.with_options(z_mode="logistic")


def games(spec: str) -> list[tuple[int, str]]:
    return [(int(tok[1:]), tok[0]) for tok in spec.split()]


def test_r1_brake_seven_below_threshold():
    out = rate_player(1400, games("W1500 W1450 D1600 L1550 W1300"), rules=RAPID)
    assert out.x == 1480 and out.z == 149 and out.perf == 1629 and out.method == "up_brake"
    assert out.r_new == 1560  # (5 x 1629 + 2 x 1400) / 7 = 1563.57
    lo = rate_player(1400, games("W1500 W1450 D1600 L1550 W1300"), rules=RAPID_LOGISTIC)
    assert lo.r_new == 1560


def test_r2_seven_games_no_brake():
    out = rate_player(1400, games("W1500 W1450 D1600 L1550 W1300 D1400 L1500"), rules=RAPID)
    assert out.n == 7 and out.z == 51 and out.method == "up_full"
    assert out.r_new == 1520


def test_r3_floor_800():
    out = rate_player(1200, games("L1250 L1250 L1250"), rules=RAPID)
    assert out.z == -470 and out.perf == 800  # raw 780
    assert out.r_new == 1080  # (3 x 800 + 7 x 1200) / 10


def test_r4_compatibility_320():
    out = rate_player(1500, games("W1170 W1180 L1830 L1500"), rules=RAPID)
    assert (out.n, out.n_incompatible) == (2, 2)  # W1170 330 below, L1830 330 above: out
    assert out.perf == 1340 and out.r_new == 1460


def test_r4_young_and_adult_have_the_same_brake():
    g = games("W1500 W1450 D1600 L1550 W1300")
    assert rate_player(1400, g, rules=RAPID, young=True).r_new == 1560


def test_r5_standard_rating_credited_as_rapid_depends_on_mode():
    """Opponent 2 has no rapid rating but a standard Elo 1600: counted at 1600 (E02)."""
    ratings = pl.DataFrame(
        {"player_id": [1, 2, 3], "rapid": [1300, None, 1350], "standard": [1500, 1600, None]},
        schema_overrides={"rapid": pl.Int64, "standard": pl.Int64},
    ).with_columns(
        credit_standard_rating(pl.col("rapid"), pl.col("standard")).alias("r_old"),
        pl.lit(False).alias("young"),
        pl.lit(None, pl.Int64).alias("archive_pn"),
        pl.lit(None, pl.Int64).alias("archive_n"),
    )
    g = pl.DataFrame(
        {"player_id": [1, 1], "opponent_id": [2, 3], "score2": [1, 2]},
    )
    _g, table = rate_period(RAPID, g, ratings)
    row = table.filter(pl.col("player_id") == 1).row(0, named=True)
    assert row["x"] == 1475 and row["perf"] == 1668
    assert row["r_new"] == 1410  # 1405.14
    _g, lo = rate_period(RAPID_LOGISTIC, g, ratings)
    assert lo.filter(pl.col("player_id") == 1)["r_new"].item() == 1400  # 1404.53
    assert lo.filter(pl.col("player_id") == 1)["perf"].item() == pytest.approx(1665.85, abs=0.01)


def test_r6_first_rapid_rating_seven_games():
    out = rate_player(None, games("W1200 D1300 W1100 L1250 W1150 L1350 D1200"), rules=RAPID)
    assert out.n == 7 and out.method == "first"
    assert out.r_new == 1270


def test_six_games_are_archived_in_rapid():
    out = rate_player(None, games("W1200 D1300 W1100 L1250 W1150 L1350"), rules=RAPID)
    assert out.method == "archived" and out.archive_n == 6


@pytest.mark.parametrize(
    ("tc", "rapid"),
    [
        ("900+10", True),  # 15 + 10 = 25 minutes
        ("600", False),  # exactly 10 minutes: blitz (E02 says more than 10)
        ("3600", False),  # exactly 60 minutes: standard (E02 says less than 60)
        ("1500+30", True),  # 25 + 30 = 55
        ("5400+30", False),
        ("15 min + 5 sec", True),
        (None, None),
    ],
)
def test_e02_scope(tc, rapid):
    assert is_rapid_time_control(tc) is rapid
