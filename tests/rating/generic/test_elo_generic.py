"""Generic K-factor Elo (seed 001) and the `elopipe elo` calculator."""

from __future__ import annotations

from decimal import Decimal

import pytest
from typer.testing import CliRunner

from elopipe.rating.generic.elo import (
    KSchedule,
    calculator,
    expected_score,
    parse_vs,
    rate_period,
    round_one_decimal,
    score_value,
)


def test_seed001_expected_score_1750_vs_1810():
    # seed 001 step 4: 1 / 2.413 = 0.414 (the seed truncates 0.41451)
    assert abs(expected_score(1750, 1810) - 0.41451) < 1e-5


def test_seed001_win_k20_gives_plus_11_7():
    res = calculator(1750, ["1810:W"], 20)
    assert res.change == Decimal("11.7")
    assert res.new_rating == Decimal("1761.7")


def test_seed001_win_and_draw_gives_plus_13_4():
    res = calculator(1750, ["1810:W", "1810:D"], 20)
    assert res.change == Decimal("13.4")
    assert res.new_rating == Decimal("1763.4")
    assert res.score == Decimal("1.5")


def test_expected_scores_are_complementary():
    assert expected_score(1600, 1900) + expected_score(1900, 1600) == pytest.approx(1.0)


def test_round_one_decimal_halves_away_from_zero():
    assert round_one_decimal(Decimal("0.25")) == Decimal("0.3")
    assert round_one_decimal(Decimal("-0.25")) == Decimal("-0.3")
    assert round_one_decimal(Decimal("0.35")) == Decimal("0.4")  # half-even would say 0.4 too
    assert round_one_decimal(Decimal("0.45")) == Decimal("0.5")  # half-even would say 0.4


def test_k_schedule_by_games_then_rating():
    ks = KSchedule.parse("20,games<30:40,rating>=2400:10")
    assert ks.k_for(1500, 0) == 40
    assert ks.k_for(1500, 30) == 20
    assert ks.k_for(2450, 100) == 10
    assert rate_period(2450, [(2450, "D")], ks, games_so_far=100).k == 10


def test_k_schedule_rejects_garbage():
    with pytest.raises(ValueError):
        KSchedule.parse("20,foo:3")
    with pytest.raises(ValueError):
        KSchedule.parse("")


def test_bad_results_raise_value_error():
    with pytest.raises(ValueError):
        score_value("X")
    with pytest.raises(ValueError):
        parse_vs("1810")
    with pytest.raises(ValueError):
        parse_vs("abc:W")


def test_loss_to_weaker_player_costs_more_than_to_stronger():
    weak = rate_period(1800, [(1600, "L")], 20)
    strong = rate_period(1800, [(2000, "L")], 20)
    assert weak.change < strong.change < 0


def test_cli_elo_seed_vectors():
    from elopipe.cli.main import app  # every command registered, as the console script has it

    runner = CliRunner()
    out = runner.invoke(app, ["elo", "1750", "--vs", "1810:W", "--k", "20"])
    assert out.exit_code == 0, out.output
    assert "+11.7" in out.output and "1761.7" in out.output
    out = runner.invoke(app, ["elo", "1750", "--vs", "1810:W", "--vs", "1810:D"])
    assert out.exit_code == 0, out.output
    assert "+13.4" in out.output and "1763.4" in out.output


def test_cli_elo_bad_argument_exits_2():
    from elopipe.cli.main import app

    out = CliRunner().invoke(app, ["elo", "1750", "--vs", "1810-W"])
    assert out.exit_code == 2


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["nan", "--vs", "1500:W"], "the rating must be a number"),
        (["inf", "--vs", "1500:W"], "the rating must be a number"),
        (["1e308", "--vs", "1500:W"], "the rating must be a number"),
        (["1750", "--vs", "1810:W", "--k", "nan"], "expected a whole number"),
        (["1500", "--vs", "1e400:L"], "is not a rating"),
        (["1500", "--vs", "-1e308:W"], "is not a rating"),
        (["1500", "--vs", "1810:W", "--k", "20,rating>=nan:10"], "is not a rating"),
    ],
)
def test_cli_elo_refuses_numbers_that_are_no_rating_in_one_line(args, words):
    from elopipe.cli.main import app

    out = CliRunner().invoke(app, ["elo", *args])
    assert out.exit_code == 2 and words in out.output and "Traceback" not in out.output
    assert "invalid literal" not in out.output
