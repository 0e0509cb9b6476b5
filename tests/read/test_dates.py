"""Dates as written in PGN tags and in every TRF form of trf-format.md (§3 042/052/132, §4 birth dates)."""

import datetime as dt

import pytest

from elopipe.read.dates import parse_pgn_date, parse_trf_date, trf_date_candidates

D = dt.date


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023.05.17", (D(2023, 5, 17), "day")),
        ("2023.05.??", (D(2023, 5, 1), "month")),
        ("2023.??.??", (D(2023, 1, 1), "year")),
        ("????.??.??", (None, "none")),
        ("2023.02.30", (None, "none")),
        ("", (None, "none")),
    ],
)
def test_pgn_dates_unchanged(text, expected):
    assert parse_pgn_date(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # spec forms (TRF16 birth date, TRF26 042/052)
        ("2011/07/02", (D(2011, 7, 2), "day")),
        ("2008-02-01", (D(2008, 2, 1), "day")),
        ("2008.06.07", (D(2008, 6, 7), "day")),
        ("1969.12.06", (D(1969, 12, 6), "day")),
        ("1993-12-20", (D(1993, 12, 20), "day")),
        # day first with a four-digit year (Irish, Vega)
        ("25.02.2011", (D(2011, 2, 25), "day")),
        ("30/09/2011", (D(2011, 9, 30), "day")),
        ("08/04/2018", (D(2018, 4, 8), "day")),
        # spaces after the dots (FIDE's example1)
        ("28. 07. 2005", (D(2005, 7, 28), "day")),
        # two-digit years: YY.MM.DD, and YY.DD.MM when the month would be impossible
        ("10.09.13", (D(2010, 9, 13), "day")),
        ("18/04/08", (D(2018, 4, 8), "day")),
        ("11.25.02", (D(2011, 2, 25), "day")),
        # lichess
        ("May 29, 2020", (D(2020, 5, 29), "day")),
        ("Jun 26, 2020", (D(2020, 6, 26), "day")),
        ("29 May 2020", (D(2020, 5, 29), "day")),
        # partial birth dates
        ("2014/00/00", (D(2014, 1, 1), "year")),
        ("1978", (D(1978, 1, 1), "year")),
        ("1975.  .", (D(1975, 1, 1), "year")),
        ("1990/11/00", (D(1990, 11, 1), "month")),
        ("2024", (D(2024, 1, 1), "year")),
        # unknown
        ("0000/00/00", (None, "none")),
        ("", (None, "none")),
        ("          ", (None, "none")),
        (None, (None, "none")),
        ("not a date", (None, "none")),
        # padding (rus_sds header lines)
        ("2016/06/28              ", (D(2016, 6, 28), "day")),
        ("20110702", (D(2011, 7, 2), "day")),
    ],
)
def test_trf_date_forms(text, expected):
    assert parse_trf_date(text) == expected


def test_two_digit_year_day_first_when_preferred():
    assert parse_trf_date("26/09/22", prefer="dmy") == (D(2022, 9, 26), "day")
    assert parse_trf_date("26/09/22") == (D(2026, 9, 22), "day")  # TRF round dates are YY/MM/DD


def test_candidates_list_every_valid_reading_preferred_first():
    orders = [(d, o) for d, _, o in trf_date_candidates("01.09.30")]
    assert orders == [(D(2001, 9, 30), "ymd"), (D(2030, 9, 1), "dmy")]
    assert trf_date_candidates("2011/07/02") == [(D(2011, 7, 2), "day", "ymd")]
    assert trf_date_candidates("") == []


def test_impossible_dates_are_none_not_errors():
    assert parse_trf_date("2011/02/30") == (D(2011, 1, 1), "year")  # keeps the year it is sure of
    assert parse_trf_date("31.02.2011") == (None, "none")
    assert parse_trf_date("99.99.99") == (None, "none")
