"""TRF headers, 001 fields, teams, NRS, extensions, rulers and encodings (trf-format.md §2-7)."""

import datetime as dt
from decimal import Decimal

import pytest

from elopipe.read.textio import decode_bytes
from elopipe.read.trf.detect import has_capital_runs
from elopipe.read.trf.reader import is_ruler_line, looks_like_trf, read_trf
from tests.helpers.trf_build import block, row, trf

HEADERS = """012 Open de Test
022 Lyon
032 FRA
042 2024/03/01
052 2024/03/03
062 129 (88)
072 2
082 0
092 Individual: Swiss-System
102 IA Jean Arbitre (12345678)
112 Deputy One
112 Deputy Two
122 90 minutes + 30 seconds per move
132                                                                                        24/03/01  24/03/02
142 2
152 W
192 FIDE_DUTCH_2025
XXR 2
XXC white1
XXA    1  1.0  1.0
DAT    1 EMAIL a@b.c
"""


def test_header_records_fill_the_tournament():
    p = read_trf(HEADERS + row(1, "Alpha, Ann", [block(0, "-", "U")], points="1.0") + "\n")
    (t,) = p.tournaments
    assert (t.name, t.city, t.federation) == ("Open de Test", "Lyon", "FRA")
    assert (t.start_date, t.end_date) == (dt.date(2024, 3, 1), dt.date(2024, 3, 3))
    assert (t.tournament_type, t.chief_arbiter) == ("Individual: Swiss-System", "IA Jean Arbitre (12345678)")
    assert t.time_control == "90 minutes + 30 seconds per move" and t.rate_class == "standard"
    assert t.rounds == 2 and t.extra["rounds_source"] == "142"
    assert t.extra["round_dates"] == {"1": "2024-03-01", "2": "2024-03-02"}
    assert t.extra["headers"]["112"] == ["Deputy One", "Deputy Two"]
    assert t.extra["headers"]["152"] == "W" and t.extra["headers"]["192"] == "FIDE_DUTCH_2025"
    assert t.extra["declared_players"] == 129  # '129 (88)': leading integer
    assert t.extra["extensions"]["XXR"] == "2" and t.extra["extensions"]["XXC"] == "white1"
    assert t.extra["extensions"]["XXA"] == ["1  1.0  1.0"]
    assert t.extra["unknown_records"][0]["raw"].startswith("DAT")
    assert not t.is_team
    assert not [i for i in p.issues if i.severity == "error"]


def test_rounds_from_xxr_then_from_blocks():
    p = read_trf(trf("XXR 9", row(1, "A", [block(0, "-", "Z")])))
    assert p.tournaments[0].rounds == 9 and p.tournaments[0].extra["rounds_in_blocks"] == 1
    p = read_trf(trf(row(1, "A", [block(0, "-", "Z"), block(0, "-", "Z")])))
    assert p.tournaments[0].rounds == 2 and p.tournaments[0].extra["rounds_source"] == "blocks"


def test_player_fields_are_sliced_by_column():
    line = row(
        7,
        "Müller-Lüdenscheidt, Hans Peter",
        [block(0, "-", "H")],
        sex="w",
        title="WGM",
        rating=2311,
        fed="GER",
        fide_id=4612345,
        birth="1990/05/17",
        points="0.5",
        final_rank=3,
    )
    p = read_trf(trf(line))
    (pl,) = p.players
    assert (pl.ref, pl.start_rank, pl.sex, pl.title, pl.name) == (7, 7, "w", "WGM", "Müller-Lüdenscheidt, Hans Peter")
    assert (pl.rating, pl.federation, pl.fide_id, pl.national_id) == (2311, "GER", 4612345, None)
    assert (pl.birth_date, pl.birth_year) == (dt.date(1990, 5, 17), 1990)
    assert (pl.points, pl.final_rank, pl.line) == (Decimal("0.5"), 3, 6)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"rating": 0, "fide_id": 0}, {"rating": None, "fide_id": None}),
        ({"rating": "0000", "fide_id": "00000000"}, {"rating": None, "fide_id": None}),
        ({"rating": "", "fide_id": ""}, {"rating": None, "fide_id": None}),
        ({"rating": "0951"}, {"rating": None, "national_rating": 951}),  # Irish national rating
        ({"rating": 950}, {"rating": None, "national_rating": 950}),  # below any FIDE floor
        ({"rating": 1000}, {"rating": 1000, "national_rating": None}),
        ({"fide_id": 6897}, {"fide_id": None, "national_id": "6897"}),  # ICU number in the FIDE column
        # 11 digits (TRF26 sample): no FIDE ID has more than nine (issue 25)
        ({"fide_id": 70323454321}, {"fide_id": None, "national_id": None}),
        ({"fide_id": 653054768}, {"fide_id": 653054768}),  # nine digits (a French player's real ID)
        ({"sex": "M"}, {"sex": "m"}),
        ({"sex": "f"}, {"sex": "w"}),
        ({"sex": "F"}, {"sex": "w"}),
        ({"sex": " "}, {"sex": None}),
        ({"sex": "u"}, {"sex": None}),
        ({"title": "g"}, {"title": "GM"}),
        ({"title": "m"}, {"title": "IM"}),
        ({"title": "wf"}, {"title": "WFM"}),
        ({"title": "F"}, {"title": "FM"}),
        ({"title": "CM"}, {"title": "CM"}),
        ({"birth": "2014/00/00"}, {"birth_year": 2014, "birth_date": None}),
        ({"birth": "1975.  ."}, {"birth_year": 1975, "birth_date": None}),
        ({"birth": "1969.12.06"}, {"birth_date": dt.date(1969, 12, 6)}),
        ({"birth": "0000/00/00"}, {"birth_year": None, "birth_date": None}),
        # placeholders and typos outside 1850..2100 are not stored (a warning says so)
        ({"birth": "9999/12/31"}, {"birth_year": None, "birth_date": None}),
        ({"birth": "1066/10/14"}, {"birth_year": None, "birth_date": None}),
        ({"final_rank": 0}, {"final_rank": None}),
    ],
)
def test_player_field_variants(kwargs, expected):
    p = read_trf(trf(row(1, "Alpha, Ann", **kwargs)))
    (pl,) = p.players
    for attr, value in expected.items():
        assert getattr(pl, attr) == value, attr


def test_club_codes_in_the_federation_column_are_not_federations():
    p = read_trf(trf(row(1, "A", fed="ENG"), row(2, "B", fed="DUB"), row(3, "C", fed="DUB"), row(4, "D", fed="C.C")))
    assert [pl.federation for pl in p.players] == ["ENG", None, None, None]
    (issue,) = [i for i in p.issues if i.code == "trf_not_a_federation"]
    assert issue.line == 7 and "C.C (1), DUB (2)" in issue.message


def test_short_rows_and_trailing_spaces_are_blank_fields():
    p = read_trf(trf("001    3      Short, Row", "001    4      Padded" + " " * 150))
    assert [(pl.ref, pl.name, pl.points) for pl in p.players] == [(3, "Short, Row", None), (4, "Padded", None)]
    assert not p.unplayed and not p.games


def test_rows_out_of_order_are_read_in_start_rank_order():
    p = read_trf(trf(row(2, "B"), row(1, "A"), header=False))
    assert [pl.ref for pl in p.players] == [1, 2]
    assert any(i.code == "trf_rows_unordered" for i in p.issues)
    assert any(i.code == "trf_no_name" for i in p.issues)  # no 012 at all


def test_duplicate_start_rank_is_an_error_not_a_silent_drop():
    p = read_trf(trf(row(1, "A"), row(1, "B")))
    assert [pl.name for pl in p.players] == ["A"]
    (issue,) = [i for i in p.issues if i.code == "trf_duplicate_start_rank"]
    assert issue.severity == "error" and issue.line == 7 and "B" in issue.raw


def test_one_fide_id_on_two_rows_is_a_warning_and_both_rows_are_read():
    """A FIDE ID names one player: two entries of one tournament under it are a mistyped ID or one
    player entered twice. Both rows are read as written and the arbiter is told, once per ID, at
    the second row (they loaded without a word: hostile tester)."""
    p = read_trf(
        trf(
            row(1, "Alpha, Anton", fide_id=2200001),
            row(2, "Kappa, Karl", fide_id=2200001),
            row(3, "Beta, Bo", fide_id=2200003),
            row(4, "Alpha, Anton", fide_id=2200001),
            row(5, "No, Id"),
            row(6, "No, Id"),
        )
    )
    assert [(pl.ref, pl.fide_id) for pl in p.players][:4] == [(1, 2200001), (2, 2200001), (3, 2200003), (4, 2200001)]
    (issue,) = [i for i in p.issues if i.code == "trf_shared_fide_id"]
    assert issue.severity == "warning" and issue.line == 7 and "Kappa, Karl" in issue.raw
    assert "FIDE ID 2200001 is on the rows of start ranks 1 (line 6), 2 (line 7), 4 (line 9)" in issue.message


def test_tab_inside_a_record_is_reported():
    p = read_trf(trf(row(1, "A"), "001    2\tTabbed, Name"))
    assert [pl.ref for pl in p.players] == [1]
    assert any(i.code == "trf_tab" and i.line == 7 for i in p.issues)


# ---- rulers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "0123456789" * 11,  # starts with 012: would overwrite the tournament name
        "1234567890" * 14,  # starts with 123: looks like a numeric tag
        "         1         2         3         4         5",
        "DDD SSSS sTTT NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN RRRR FFF IIIIIIIIIII BBBB/BB/BB PPPP RRRR  1111 1 1",
        "UUU MMMM GGGG 111 222 333 444",
        "CCC SSS NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN FFFFF EEEEEE MMMMMM GGGGGG RRR  PPP1",
        "    SSSS sTTT NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN RRRR FFF",
    ],
)
def test_ruler_lines_are_recognised(line):
    assert is_ruler_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "012 Open de Test",
        "001    1 m    Alpha, Ann",
        "FRA   14 m  A Test0014 Player0014               2700 BRE      L01854 1990/00/00",
        "132                                                                                        24/03/01",
        "XXR 9",
    ],
)
def test_records_are_not_rulers(line):
    assert not is_ruler_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "0123456789" * 11,
        "DDD SSSS sTTT NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN RRRR FFF IIIIIIIIIII BBBB/BB/BB PPPP RRRR  1111 1 1",
        "    SSSS sTTT NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN RRRR FFF",
        "001    1 m    AAAA, Ann",
        "001    1 m    Alpha, Ann",
        "012 Open de Test",
    ],
)
def test_a_file_without_capital_runs_skips_their_search_with_the_same_verdict(line):
    # the reader searches the whole file once (`has_capital_runs`) and tells each line whether to look
    assert is_ruler_line(line, has_capital_runs(trf(line))) == is_ruler_line(line)


def test_ruler_starting_with_012_does_not_overwrite_the_name():
    text = trf("0123456789" * 11, "1234567890" * 11, "DDD SSSS sTTT NNNN", row(1, "A"))
    p = read_trf(text)
    assert p.tournaments[0].name == "Test Open"
    (issue,) = [i for i in p.issues if i.code == "trf_ruler_line"]
    assert issue.severity == "info" and issue.line == 6 and "3 lines" in issue.message
    assert "headers" not in p.tournaments[0].extra  # '123' not kept as a header


def test_comments_and_blank_lines_are_skipped_quietly():
    p = read_trf(trf("### a TRF26 comment", "", "   ", row(1, "A")))
    assert len(p.players) == 1 and p.tournaments[0].extra["comment_lines"] == 1
    assert not [i for i in p.issues if i.code.startswith("trf_unknown")]


# ---- encodings (bytes through textio) ---------------------------------------------------


def _file_bytes(encoding: str, newline: str, bom: bool = False) -> bytes:
    text = trf(
        row(1, "Ó Muireagáin, Mícheál", [block(2, "w", "1")], rating=1650, fed="IRL", points="1.0"),
        row(2, "Hülleman, Leon", [block(1, "b", "0")], rating=1500, fed="NED"),
    )
    data = text.replace("\n", newline).encode(encoding)
    return (b"\xef\xbb\xbf" if bom else b"") + data


@pytest.mark.parametrize(
    ("encoding", "newline", "bom", "detected"),
    [
        ("utf-8", "\n", False, "utf-8"),
        ("utf-8", "\r\n", True, "utf-8-sig"),
        ("cp1252", "\r\n", False, "cp1252"),
        ("latin-1", "\n", False, "cp1252"),
        ("utf-8", "\r", False, "utf-8"),
    ],
)
def test_encodings_and_line_ends(encoding, newline, bom, detected):
    decoded = decode_bytes(_file_bytes(encoding, newline, bom))
    assert decoded.encoding == detected
    p = read_trf(decoded.text)
    assert p.tournaments[0].name == "Test Open"  # no BOM glued to '012'
    assert [(pl.name, pl.rating, pl.federation) for pl in p.players] == [
        ("Ó Muireagáin, Mícheál", 1650, "IRL"),
        ("Hülleman, Leon", 1500, "NED"),
    ]
    assert [(g.white_ref, g.black_ref, g.result, g.played) for g in p.games] == [(1, 2, "1-0", True)]


def test_byte_counting_writer_is_realigned_with_a_warning():
    good = row(1, "Hülleman, Leon", [block(2, "w", "1")], rating=1500, points="1.0")
    shifted = good[:40] + good[41:]  # name padded to 33 bytes: one char short after decoding
    p = read_trf(trf(shifted, row(2, "Beta, Bob", [block(1, "b", "0")])))
    assert any(i.code == "trf_misaligned" for i in p.issues)
    assert [(g.white_ref, g.result, g.played) for g in p.games] == [(1, "1-0", True)]
    assert p.players[0].rating == 1500


# ---- teams, NRS, TRF26 records ---------------------------------------------------------


def test_013_team_lines():
    team = "013 " + "Κρητική Ομάδα".ljust(32) + "   1    2"
    p = read_trf(trf(row(1, "A"), row(2, "B"), row(3, "C"), team))
    (t,) = p.teams
    assert (t.record, t.name, t.member_ranks, t.line) == ("013", "Κρητική Ομάδα", [1, 2], 9)
    assert p.tournaments[0].is_team
    assert [pl.team for pl in p.players] == ["Κρητική Ομάδα", "Κρητική Ομάδα", None]


def test_310_team_lines_and_unknown_members():
    team = "310   1 ERP A                            ERP A      0    3.0    3.5         1    2    9"
    p = read_trf(trf(row(1, "A"), row(2, "B"), team))
    (t,) = p.teams
    assert (t.record, t.team_no, t.name, t.member_ranks, t.points) == ("310", 1, "ERP A", [1, 2, 9], Decimal("3.0"))
    assert p.tournaments[0].extra["teams_310"][0]["game_points"] == "3.5"
    assert any(i.code == "trf_team_unknown_member" for i in p.issues)


def test_nrs_line_gives_national_id_and_rating():
    nrs = "FRA    1    A                                   2200 IDF      D50113"
    p = read_trf(trf(row(1, "CARLSEN, Magnus", rating=2840, fide_id=1503014), nrs))
    (pl,) = p.players
    assert (pl.national_id, pl.national_rating, pl.fide_id, pl.rating) == ("D50113", 2200, 1503014, 2840)
    assert p.tournaments[0].extra["nrs"][0]["classification"] == "A"
    assert p.tournaments[0].extra["nrs"][0]["origin"] == "IDF"


def test_240_bye_only_in_record_240_is_added():
    p = read_trf(trf(row(1, "A", [block(None, " ", " ")]), row(2, "B", [block(0, "-", "H")]), "240 H   1    1    2"))
    assert [(u.player_ref, u.code) for u in p.unplayed] == [(1, "H"), (2, "H")]
    assert any(i.code == "trf_240_only" for i in p.issues)
    assert p.tournaments[0].extra["records"]["240"] == ["240 H   1    1    2"]


def test_trf26_records_are_kept_raw():
    p = read_trf(trf(row(1, "A"), "300   1   1   3   10   15", "802 anything", "330 +-   1   1   2"))
    recs = p.tournaments[0].extra["records"]
    assert set(recs) == {"300", "802", "330"}
    assert "headers" not in p.tournaments[0].extra


def test_scoring_system_is_kept_and_points_not_compared():
    p = read_trf(trf("162  W 3.0    D 1.0    L 0.0    Z 0.0    P 3.0", row(1, "A", [block(0, "-", "U")])))
    assert p.tournaments[0].extra["scoring"] == {"W": "3.0", "D": "1.0", "L": "0.0", "Z": "0.0", "P": "3.0"}
    assert not any(i.code.startswith("trf_points") for i in p.issues)


def test_points_checked_against_the_blocks():
    p = read_trf(trf(row(1, "A", [block(0, "-", "H")], points="1.0"), row(2, "B", [block(0, "-", "H")], points="0.5")))
    (issue,) = [i for i in p.issues if i.code == "trf_points_mismatch"]
    assert issue.line == 6 and "declared points 1.0" in issue.message
    p = read_trf(trf(row(1, "A", [block(0, "-", "H")]), row(2, "B", [block(0, "-", "H")])))
    assert any(i.code == "trf_points_all_zero" for i in p.issues)


# ---- dates in context ------------------------------------------------------------------


def test_two_digit_042_052_read_as_a_sensible_range():
    p = read_trf("012 X\n042 10.09.13\n052 11.03.13\n" + row(1, "A") + "\n")
    assert (p.tournaments[0].start_date, p.tournaments[0].end_date) == (dt.date(2010, 9, 13), dt.date(2011, 3, 13))
    p = read_trf("012 X\n042 26/09/22\n052 27/09/22\n" + row(1, "A") + "\n")
    assert (p.tournaments[0].start_date, p.tournaments[0].end_date) == (dt.date(2022, 9, 26), dt.date(2022, 9, 27))


def test_round_dates_swapped_or_with_a_wrong_year_are_fixed_and_reported():
    head = "012 X\n042 25.02.2011\n052 27.02.2011\n132" + " " * 88
    p = read_trf(head + "11.25.02  11.26.02\n" + row(1, "A") + "\n")
    assert p.tournaments[0].extra["round_dates"] == {"1": "2011-02-25", "2": "2011-02-26"}
    assert any(i.code == "trf_round_date_order" for i in p.issues)
    head = "012 X\n042 30/09/2011\n052 02/10/2011\n132" + " " * 88
    p = read_trf(head + "01.09.30  01.10.01\n" + row(1, "A") + "\n")
    assert p.tournaments[0].extra["round_dates"] == {"1": "2011-09-30", "2": "2011-10-01"}
    assert any(i.code == "trf_round_date_year" for i in p.issues)


def test_one_day_event_dates_its_games():
    p = read_trf(
        "012 X\n042 May 29, 2020\n052 May 29, 2020\n"
        + row(1, "A", [block(2, "w", "1")], points="1.0")
        + "\n"
        + row(2, "B", [block(1, "b", "0")])
        + "\n"
    )
    assert p.games[0].game_date == dt.date(2020, 5, 29)


# ---- detection and rejection --------------------------------------------------------------


def test_looks_like_trf():
    assert looks_like_trf(trf(row(1, "A")))
    assert looks_like_trf("012 Only headers\n042 2024/01/01\n")
    assert not looks_like_trf('[Event "Tata Steel"]\n[Site "Wijk"]\n\n1. e4 e5 1-0\n')
    assert not looks_like_trf("<html><body>001 nope</body></html>")
    assert not looks_like_trf("001|   1|Alpha|2000\n")  # Vega .tdf
    assert not looks_like_trf("")


@pytest.mark.parametrize(
    "text",
    ["", "<!DOCTYPE html>\n<html><body>Not found</body></html>\n", '[Event "x"]\n1. e4 *\n', "\x00\x01\x02garbage"],
)
def test_not_trf_is_rejected_without_raising(text):
    p = read_trf(text)
    assert p.format == "trf" and p.rejected_reason
    assert not p.players and not p.games


def test_vega_tdf_rows_are_rejected():
    p = read_trf("012 X\n001|   1|Alpha|2000\n001|   2|Beta|1900\n")
    assert "Vega" in p.rejected_reason
    assert any(i.code == "trf_pipe_row" and i.severity == "error" for i in p.issues)


def test_undecoded_line_ends_are_still_split():
    text = trf(row(1, "A", [block(2, "w", "1")], points="1.0"), row(2, "B", [block(1, "b", "0")]))
    for newline in ("\r", "\r\n"):
        p = read_trf(text.replace("\n", newline))
        assert len(p.players) == 2 and [g.played for g in p.games] == [True]


@pytest.mark.parametrize(
    "text,cls",
    [
        ("90+30", "standard"),  # written by hand: minutes + seconds
        ("15+10", "rapid"),
        ("3+2", "blitz"),
        ("5400+30", "standard"),  # TRF26 222 style: seconds
        ("180+2", "blitz"),
        ("90 minutes + 30 seconds per move", "standard"),
        ("120'/40+30'", "standard"),  # minutes for 40 moves, then 30 minutes: not a move count
        ("90'/40+30'+30\"", "standard"),
        ("40/120, 60", "standard"),  # moves first: 120 minutes for 40 moves
        ("25'+10\"", "rapid"),
    ],
)
def test_time_control_text_of_line_122(text, cls):
    from elopipe.read.trf.time_control import rate_class_from_text

    assert rate_class_from_text(text) == cls


@pytest.mark.parametrize(
    "text,cls",
    [
        # hours and minutes as French and Spanish files write them, and a game in N minutes: they
        # read as a minute and 30, rapid or blitz, and a standard event went to the rapid list
        ("1h30+30s", "standard"),
        ("1h30", "standard"),
        ("Cadence 1h30 + 30s", "standard"),
        ("2h + 30s", "standard"),
        ("G/90+30", "standard"),
        ("G/30", "rapid"),
        ("G5", "blitz"),
        # moves, then the time for them: the number after '/' is the time (they read as rapid)
        ("40/120+30", "standard"),
        ("40/2h + 30min", "standard"),
        ("40/2h, 30min", "standard"),
        ("40/2h+30", "standard"),
    ],
)
def test_hours_and_minutes_and_a_game_in_n_minutes(text, cls):
    from elopipe.read.rate_of_play import classify_text
    from elopipe.read.trf.time_control import rate_class_from_text

    assert rate_class_from_text(text) == cls
    assert classify_text(text) == cls  # the rate of play's reading of the same text agrees


def test_a_line_that_ends_inside_the_rating_field_reads_no_rating() -> None:
    """A player line cut short in its right-aligned rating (columns 49-52): '18' of '1850' was read
    as a rating of 18, a national rating. It is no rating, with a warning; a whole field is read."""
    cut = "001    1 m    " + "Alonso, Ana".ljust(33) + " 18\n"  # the name is columns 15-47
    whole = "001    2 m    " + "Baeza, Bruno".ljust(33) + " 1850\n"
    pf = read_trf("012 T\n042 2023/03/01\n" + cut + whole)
    alonso, baeza = pf.players
    assert (alonso.rating, alonso.national_rating) == (None, None)
    assert (baeza.rating, baeza.national_rating) == (1850, None)
    cut_issues = [i for i in pf.issues if i.code == "trf_field_cut"]
    assert [(i.line, i.severity) for i in cut_issues] == [(3, "warning")]
    assert "'18'" in cut_issues[0].message


def test_a_line_that_ends_inside_the_fide_id_field_reads_no_id() -> None:
    """A player line cut short in its right-aligned FIDE ID (columns 58-68): '1410106' of
    14101068 was stored as a FIDE ID, which can join the player to someone else. No ID, a warning."""
    start = "001    1 m    " + "Milov, Vadim".ljust(33) + " 2650 SUI "
    pf = read_trf(
        "012 T\n042 2005/07/28\n" + start + "   1410106\n" + start.replace("    1 m", "    2 m") + "   14101068\n"
    )
    cut, whole = pf.players
    assert (cut.fide_id, whole.fide_id) == (None, 14101068)
    assert [(i.code, i.line) for i in pf.issues if i.code == "trf_field_cut"] == [("trf_field_cut", 3)]
