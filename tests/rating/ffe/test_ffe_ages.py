"""FFE age categories (spec Part C) and licence numbers (spec Part D)."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from elopipe.rating.ffe.ages import (
    age_in_season,
    category,
    category_expr,
    estimated_rating,
    fide_name,
    is_valid_club_estimate,
    is_valid_licence,
    is_young,
    season_expr,
    season_year,
    young_expr,
)


@pytest.mark.parametrize(
    ("birth", "age", "code"),
    [
        ("2017-10-18", 7, "Ppo"),
        ("2013-06-27", 11, "Pup"),
        ("2009-09-01", 15, "Min"),
        ("2005-11-09", 19, "Jun"),
        ("1960-02-21", 64, "Sep"),
        ("1971-11-13", 53, "Sep"),
    ],
)
def test_spec_c2_vectors_may_2025(birth, age, code):
    season = season_year(dt.date(2025, 5, 15))
    assert season == 2025
    year = dt.date.fromisoformat(birth).year
    assert age_in_season(year, season) == age
    assert category(year, season) == code


def test_spec_c2_edges_season_2025_26():
    season = season_year(dt.date(2025, 9, 1))  # the season starts on 1 September
    assert season == 2026
    assert category(2005, season) == "Sen"  # a = 20, not Jun
    assert category(1975, season) == "Sep"  # a = 50


@pytest.mark.parametrize(
    ("season", "cutoffs"),
    [
        # spec C.2: first birth year of Ppo, Pou, ..., and the last of Sep (Vet below)
        (2023, {2015: "Ppo", 2013: "Pou", 2011: "Pup", 2009: "Ben", 2007: "Min", 2005: "Cad",
                2003: "Jun", 2002: "Sen", 1973: "Sen", 1972: "Sep", 1958: "Sep", 1957: "Vet"}),
        (2027, {2019: "Ppo", 2018: "Pou", 2017: "Pou", 2016: "Pup", 2008: "Jun", 2007: "Jun",
                2006: "Sen", 1977: "Sen", 1976: "Sep", 1962: "Sep", 1961: "Vet"}),
    ],
)  # fmt: skip
def test_spec_c2_cutoff_table(season, cutoffs):
    for year, code in cutoffs.items():
        assert category(year, season) == code, (season, year)


def test_fide_names_and_young():
    assert fide_name("Ppo") == "U8" and fide_name("Jun") == "U20" and fide_name("Vet") == "S65"
    assert is_young(2006, 2025) and not is_young(2005, 2026)
    assert not is_young(2007, 2026, young_max_category="U18")  # Jun is not young under U18
    assert is_young(2008, 2026, young_max_category="U18")
    assert not is_young(None, 2026)
    with pytest.raises(ValueError):
        is_young(2000, 2026, young_max_category="Sen")


def test_polars_expressions_agree_with_scalar():
    df = pl.DataFrame(
        {
            "birth_year": [2017, 2013, 2009, 2005, 1960, 1971, None, 2005],
            "d": [dt.date(2025, 5, 1)] * 7 + [dt.date(2025, 9, 1)],
        }
    ).with_columns(season_expr("d").alias("season"))
    out = df.with_columns(
        category_expr("birth_year", "season").alias("cat"),
        young_expr("birth_year", "season").alias("young"),
    )
    for by, season, cat, young in out.select("birth_year", "season", "cat", "young").iter_rows():
        if by is None:
            assert cat is None and young is False
        else:
            assert cat == category(by, season) and young == is_young(by, season)


@pytest.mark.parametrize(
    ("text", "strict", "lenient"),
    [
        ("A01450", True, True),
        ("K59857", True, True),
        (" z06739 ", True, True),
        ("AB1234", False, True),  # Sharly-Chess accepts a letter in second place
        ("A0145", False, False),
        ("101450", False, False),
        ("", False, False),
        (None, False, False),
    ],
)
def test_licence_numbers(text, strict, lenient):
    assert is_valid_licence(text) is strict
    assert is_valid_licence(text, lenient=True) is lenient


@pytest.mark.parametrize(
    ("code", "rate", "below_floor", "expected"),
    [
        ("Sep", "standard", False, 1399),  # F.4: new licensee, Sep, standard
        ("Min", "standard", False, 1299),  # Min (U16), standard
        ("Min", "rapid", False, 1199),
        ("Pup", "rapid", False, 999),
        ("Ppo", "rapid", False, 799),
        ("Jun", "standard", True, 1399),  # FIDE standard below the floor: 1399E, not 1299
        ("Ben", "blitz", False, 999),  # blitz = rapid (S8)
    ],
)
def test_spec_f4_estimated_ratings(code, rate, below_floor, expected):
    assert estimated_rating(code, rate, below_fide_floor=below_floor) == expected


def test_club_estimates_end_in_49_or_99():
    assert is_valid_club_estimate(1449) and is_valid_club_estimate(1499)
    assert not is_valid_club_estimate(1450) and not is_valid_club_estimate(1399 + 1)
    with pytest.raises(ValueError):
        estimated_rating("Xyz")
    with pytest.raises(ValueError):
        estimated_rating("Sen", "bullet")
