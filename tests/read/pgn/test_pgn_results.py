"""The result-normalisation table and the FIDE time-control classes of `elopipe.read.pgn.results`."""

from __future__ import annotations

from decimal import Decimal

import pytest

from elopipe.read.pgn.results import SCORES, minutes_for_60_moves, normalise_result, rate_class


@pytest.mark.parametrize(
    ("raw", "result", "standard", "forfeit"),
    [
        ("1-0", "1-0", True, False),
        ("0-1", "0-1", True, False),
        ("1/2-1/2", "1/2-1/2", True, False),
        ("*", "*", True, False),
        (" 1-0 ", "1-0", False, False),
        ("1 - 0", "1-0", False, False),
        ("1–0", "1-0", False, False),
        ("1:0", "1-0", False, False),
        ("0:1", "0-1", False, False),
        ("1/2", "1/2-1/2", False, False),
        ("½-½", "1/2-1/2", False, False),
        ("½–½", "1/2-1/2", False, False),
        ("0.5-0.5", "1/2-1/2", False, False),
        ("+:-", "1-0", False, True),
        ("+/-", "1-0", False, True),
        ("-:+", "0-1", False, True),
        ("-/+", "0-1", False, True),
        ("-:-", "0-0", False, True),
        ("0-0", "0-0", False, True),
        ("1-0 (forfeit)", "1-0", False, True),
        ("0-1 forfeit", "0-1", False, True),
        ("1-0 ff", "1-0", False, True),
        ("1F-0", "1-0", False, True),
        ("0-1 by default", "0-1", False, True),
    ],
)
def test_result_table(raw: str, result: str, standard: bool, forfeit: bool) -> None:
    form = normalise_result(raw)
    assert form is not None
    assert (form.result, form.standard, form.forfeit, form.known) == (result, standard, forfeit, True)


@pytest.mark.parametrize("raw", ["banana", "2-0", "1-1", "W", "+-="])
def test_unknown_results_are_unknown_never_draws(raw: str) -> None:
    form = normalise_result(raw)
    assert form is not None and form.result == "*" and not form.known


@pytest.mark.parametrize("raw", [None, "", "?", "-", "---"])
def test_missing_results(raw: str | None) -> None:
    assert normalise_result(raw) is None


def test_scores_are_decimals() -> None:
    assert SCORES["1/2-1/2"] == (Decimal("0.5"), Decimal("0.5"))
    assert SCORES["0-0"] == (Decimal(0), Decimal(0))
    assert SCORES["*"] == (None, None)


@pytest.mark.parametrize(
    ("tc", "minutes", "klass"),
    [
        ("5400+30", 120, "standard"),
        ("40/7200:20/3600:900+30", 210, "standard"),
        ("40/7200:3600", 180, "standard"),
        ("3600", 60, "standard"),
        ("900+10", 25, "rapid"),
        ("1500+10", 35, "rapid"),
        ("600+5", 15, "rapid"),
        ("600", 10, "blitz"),
        ("180+2", 5, "blitz"),
        ("180", 3, None),
        ("60", 1, None),
        ("1/259200", None, None),
        ("?", None, None),
        ("-", None, None),
        ("", None, None),
        (": 90 minutes for the first 40 moves, followed by 30 minutes for the rest of the game", 120, "standard"),
        ("90 min + 30 min, 30 seconds increment per move", 150, "standard"),
    ],
)
def test_time_control_classes(tc: str, minutes: float | None, klass: str | None) -> None:
    assert minutes_for_60_moves(tc) == minutes
    assert rate_class(tc) == klass
