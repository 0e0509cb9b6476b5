"""The checks of a rating run's rules and options (`elopipe.rating.param_checks`) and of the
`--through` month (`elopipe.rating.run.parse_month`): each option by its kind, a bad value a
usage error naming what is accepted."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from decimal import Decimal

import pytest

from elopipe.rating import param_checks, systems
from elopipe.rating.fide import b02
from elopipe.rating.fide.calc import fide_period
from elopipe.rating.param_checks import ParamError, check_param, parse_param, rules_name
from elopipe.rating.run import parse_month


@pytest.mark.parametrize(
    ("text", "value"),
    [("true", True), ("TRUE", True), ("yes", True), ("1", True), ("false", False), ("No", False), ("0", False)],
)
@pytest.mark.parametrize("key", sorted(param_checks.BOOLEANS))
def test_booleans_take_true_false_yes_no_one_zero(key: str, text: str, value: bool) -> None:
    assert parse_param(key, f" {text} ") is value


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "-5", "2", "maybe", "", "t"])
def test_any_other_boolean_is_refused_naming_the_accepted_values(text: str) -> None:
    with pytest.raises(ParamError, match=r"^check_time_minimum must be true or false \(or yes/no, 1/0\), not ") as e:
        parse_param("check_time_minimum", text)
    assert e.value.exit_code == 2


@pytest.mark.parametrize(
    ("key", "text", "value"),
    [
        ("rate_class", "Rapid", "rapid"),
        ("rate_class", "any", "any"),
        ("unknown_tc", "BLITZ", "blitz"),
        ("period", "tournament", "tournament"),
        ("z_mode", "Logistic", "logistic"),
        ("unrated_opponents", "iterative", "iterative"),
        ("young_max_category", "u18", "U18"),
        ("young_max_category", "cad", "Cad"),
        ("period_scheme", "monthly", "monthly"),
        ("no_moves", "Forfeit", "forfeit"),
    ],
)
def test_a_choice_is_taken_in_any_case_and_stored_as_spelled(key: str, text: str, value: str) -> None:
    assert parse_param(key, text) == value


@pytest.mark.parametrize(
    ("key", "text", "listed"),
    [
        ("rate_class", "xyz", "standard, rapid, blitz, any"),
        ("unknown_tc", "any", "standard, rapid, blitz"),
        ("period", "year", "month, tournament, game"),
        ("z_mode", "1", "table, logistic"),
        ("young_max_category", "U21", "U8, U10, U12, U14, U16, U18, U20, Ppo"),
    ],
)
def test_another_choice_is_refused_listing_the_choices(key: str, text: str, listed: str) -> None:
    with pytest.raises(ParamError, match=f"^{key} must be one of {listed}.*, not '{text}'$"):
        parse_param(key, text)


def test_a_date_is_yyyy_mm_dd() -> None:
    assert parse_param("rating_from", "2005-01-01") == dt.date(2005, 1, 1)
    for text in ("banana", "20050101", "2005-01", "2005-02-30", "2005-W01-1"):
        with pytest.raises(ParamError, match=f"^rating_from must be a date YYYY-MM-DD, not '{text}'$"):
            parse_param("rating_from", text)


def test_numbers_keep_their_bounds() -> None:
    assert parse_param("tau", "0.5") == 0.5 and parse_param("threshold", "8") == 8
    assert parse_param("k", "20,games<30:40") == "20,games<30:40"
    for key, text, says in (
        ("tau", "nan", "tau must be a number > 0 and <= 10, not nan"),
        ("tau", "inf", "tau must be a number > 0 and <= 10, not inf"),
        ("tau", "-5", "tau must be a number > 0 and <= 10, not -5"),
        ("threshold", "8.5", "threshold must be an integer >= 0 and <= 1000"),
        ("initial_rd", "abc", "initial_rd must be a number > 0 and <= 1000"),
        ("k", "20,games<30:-1", "k must be a number > 0 and <= 1000, not -1"),
    ):
        with pytest.raises(ParamError, match=f"^{says}$"):
            parse_param(key, text)
    with pytest.raises(ParamError):
        check_param("tau", math.inf)


@pytest.mark.parametrize("system", systems.names())
def test_every_engine_option_has_a_kind(system: str) -> None:
    """An option with no kind would fall back to text and be taken whatever it says."""
    kinds = param_checks.BOOLEANS | param_checks.DATES | set(param_checks.NUMERIC)
    for key in systems.param_keys(system) or []:
        assert key in kinds or param_checks.choices(key) is not None, key


def test_rules_names_fold_everywhere() -> None:
    assert rules_name("fide@x", "v2017") == rules_name("fide-rapid", " V2017 ") == "V2017"
    assert rules_name("ffe@x", "Table") == "table"
    assert b02.version_name("v2024") == "V2024"
    assert fide_period(1800, [(1800, Decimal(1))], on=dt.date(2024, 6, 1), rules="v2022").rules == "V2022"
    for system, text, says in (
        ("fide", "V1999", "unknown FIDE rules version V1999; known: V2017, V2022, V2024"),
        ("ffe", "V2017", "ffe: --rules must be table or logistic, not 'V2017'"),
        ("elo@x", "V2017", "elo: --rules does not apply"),
    ):
        with pytest.raises(ParamError, match=f"^{says}"):
            rules_name(system, text)


def test_through_is_a_list_month() -> None:
    assert parse_month("2023-01") == dt.date(2023, 1, 1) and parse_month(None) is None
    for text in ("2023-12-31", "2023-1", "2023-13", "2023-00", "23-01", "2023/01", "banana"):
        with pytest.raises(ValueError, match=f"^expected a list month YYYY-MM such as 2024-03, got '{text}'$"):
            parse_month(text)


def _policy(variable: str) -> Callable[[str | None], str]:
    """The run policy read from the environment variable `variable`."""
    from elopipe.rating.fide.params import ro_from_policy
    from elopipe.rating.store_io import no_moves_policy

    return {
        "ELOPIPE_UNKNOWN_TC": param_checks.unknown_tc_policy,
        "ELOPIPE_NO_MOVES": no_moves_policy,
        "ELOPIPE_RO_FROM": ro_from_policy,
    }[variable]


@pytest.mark.parametrize(
    ("variable", "default"),
    [("ELOPIPE_UNKNOWN_TC", "standard"), ("ELOPIPE_NO_MOVES", "played"), ("ELOPIPE_RO_FROM", "list")],
)
def test_a_policy_is_not_given_only_when_its_variable_is_unset(
    monkeypatch: pytest.MonkeyPatch, variable: str, default: str
) -> None:
    """An empty option or variable is a bad value, not the default: only an unset variable is not
    given (`runtime.settings.given_or_env`)."""
    policy = _policy(variable)
    monkeypatch.delenv(variable, raising=False)
    assert policy(None) == default
    with pytest.raises(ValueError, match="not ''$"):
        policy("")
    monkeypatch.setenv(variable, "")
    with pytest.raises(ValueError, match="not ''$"):
        policy(None)
    assert policy(default) == default  # a given value still wins over the variable
    # blanks are shown as written: --unknown-tc ' ' said "not ''", where --no-moves said "not '  '"
    with pytest.raises(ValueError, match="not ' '$"):
        policy(" ")


@pytest.mark.parametrize(
    ("variable", "given", "value"),
    [("ELOPIPE_UNKNOWN_TC", " Rapid\n", "rapid"), ("ELOPIPE_NO_MOVES", "PLAYED ", "played"),
     ("ELOPIPE_RO_FROM", "\tFile", "file")],
)  # fmt: skip
def test_the_three_policies_read_case_and_blanks_alike(
    monkeypatch: pytest.MonkeyPatch, variable: str, given: str, value: str
) -> None:
    """`--unknown-tc RAPID` was taken and `--no-moves PLAYED` or `--ro-from ' file'` refused: every
    run policy reads its value in any case, without surrounding blanks, and returns it lower case
    (what the run records and digests), from the option and from the variable alike."""
    from elopipe.rating.fide.params import FideParams
    from elopipe.rating.store_io import games_sql

    policy = _policy(variable)
    monkeypatch.delenv(variable, raising=False)
    assert policy(given) == value
    monkeypatch.setenv(variable, given)
    assert policy(None) == value
    with pytest.raises(ValueError, match="not '"):
        policy(" ")  # a blank value is still no value
    # the engines' own checks keep the value they read, lower case
    assert FideParams(no_moves="FORFEIT", ro_from=" File").no_moves == "forfeit"
    assert FideParams(ro_from=" File").ro_from == "file"
    assert games_sql("Forfeit") == games_sql("forfeit")
