"""Every TRF result code and block form of trf-format.md §5, read through `read_trf`."""

from decimal import Decimal

import pytest

from elopipe.read.trf.reader import read_trf
from tests.helpers.trf_build import block, row, trf

HALF, ONE, ZERO = Decimal("0.5"), Decimal("1"), Decimal("0")


POINTS = {"1": "1.0", "+": "1.0", "W": "1.0", "=": "0.5", "D": "0.5"}


def pair(code_a: str, code_b: str, colour_a: str = "w", colour_b: str = "b"):
    text = trf(
        row(1, "Alpha, Ann", [block(2, colour_a, code_a)], points=POINTS.get(code_a.upper(), "0.0")),
        row(2, "Beta, Bob", [block(1, colour_b, code_b)], points=POINTS.get(code_b.upper(), "0.0")),
    )
    return read_trf(text, "t.trf")


def unplayed_of(parsed, ref, rnd=1):
    found = [u for u in parsed.unplayed if u.player_ref == ref and u.round == rnd]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("a", "b", "result", "ws", "bs"),
    [("1", "0", "1-0", ONE, ZERO), ("0", "1", "0-1", ZERO, ONE), ("=", "=", "1/2-1/2", HALF, HALF)],
)
def test_rated_codes_make_one_played_game(a, b, result, ws, bs):
    p = pair(a, b)
    assert len(p.games) == 1 and not p.unplayed
    g = p.games[0]
    assert (g.white_ref, g.black_ref, g.result, g.white_score, g.black_score) == (1, 2, result, ws, bs)
    assert g.played and g.unplayed_code is None and g.flags == []
    assert g.result_raw == f"{a}/{b}"


def test_colours_decide_white_and_black():
    p = pair("0", "1", colour_a="b", colour_b="w")
    g = p.games[0]
    assert (g.white_ref, g.black_ref, g.result) == (2, 1, "1-0")


@pytest.mark.parametrize(
    ("a", "b", "result", "code"),
    [("W", "L", "1-0", "W"), ("L", "W", "0-1", "L"), ("D", "D", "1/2-1/2", "D")],
)
def test_unrated_results_are_not_played_games(a, b, result, code):
    p = pair(a, b)
    (g,) = p.games
    assert not g.played and g.unplayed_code == code and g.result == result
    assert "trf_not_rated" in g.flags
    assert (unplayed_of(p, 1).code, unplayed_of(p, 2).code) == (a, b)
    assert unplayed_of(p, 1).opponent_ref == 2


def test_lower_case_letter_codes_are_accepted():
    p = pair("w", "l")
    assert p.games[0].unplayed_code == "W" and not p.games[0].played


@pytest.mark.parametrize(("a", "b", "result"), [("+", "-", "1-0"), ("-", "+", "0-1")])
def test_forfeit_is_unplayed_rounds_plus_an_unplayed_game(a, b, result):
    p = pair(a, b)
    (g,) = p.games
    assert not g.played and g.result == result and g.unplayed_code == a
    assert "trf_forfeit" in g.flags and "trf_sides_disagree" not in g.flags
    ua, ub = unplayed_of(p, 1), unplayed_of(p, 2)
    assert (ua.code, ua.score, ua.opponent_ref) == (a, ONE if a == "+" else ZERO, 2)
    assert (ub.code, ub.opponent_ref) == (b, 1)
    assert not [i for i in p.issues if i.severity != "info"]


def test_double_forfeit():
    p = pair("-", "-")
    (g,) = p.games
    assert (g.result, g.white_score, g.black_score, g.played) == ("0-0", ZERO, ZERO, False)
    assert "trf_double_forfeit" in g.flags


def test_legacy_forfeit_with_colour_dash_keeps_the_pairing():
    p = pair("+", "-", colour_a="-", colour_b="-")
    (g,) = p.games
    assert (g.white_ref, g.black_ref, g.result, g.played) == (1, 2, "1-0", False)
    assert "trf_colour_unknown" in g.flags


def test_rated_code_without_colours_is_not_rated():
    p = pair("1", "0", colour_a="-", colour_b="-")
    (g,) = p.games
    assert not g.played and "trf_colour_missing" in g.flags
    assert any(i.code == "trf_colour_missing" for i in p.issues)


@pytest.mark.parametrize(
    ("text_block", "code", "score"),
    [
        (block(0, "-", "H"), "H", HALF),
        (block(0, "-", "F"), "F", ONE),
        (block(0, "-", "U"), "U", ONE),
        (block(0, "-", "Z"), "Z", ZERO),
        (block(0, "-", "h"), "H", HALF),
        # legacy and lichess forms (§5 "also seen")
        (block(0, "-", "="), "H", HALF),
        (block(0, "-", "+"), "F", ONE),
        (block(0, "-", "-"), "Z", ZERO),
        (block(0, "-", "0"), "Z", ZERO),
        (block(None, " ", "U"), "U", ONE),
        (block(None, " ", "H"), "H", HALF),
        (block(None, " ", "-"), "Z", ZERO),
        # blank result: 'Z' by the spec, value unknown (bye points often only in the total)
        (block(None, "-", " "), "Z", None),
        (block(0, "-", " "), "Z", None),
        # completely blank block: not paired
        (block(None, " ", " "), " ", None),
    ],
)
def test_byes_and_absences(text_block, code, score):
    text = trf(
        row(1, "Alpha, Ann", [text_block, block(2, "w", "1")]),
        row(2, "Beta, Bob", [block(0, "-", "U"), block(1, "b", "0")]),
    )
    p = read_trf(text)
    u = unplayed_of(p, 1)
    assert (u.code, u.score, u.opponent_ref) == (code, score, None)
    assert [g.round for g in p.games] == [2]


def test_result_code_without_opponent_is_a_bye_with_a_warning():
    p = read_trf(trf(row(1, "Alpha, Ann", [block(0, "-", "1")])))
    assert unplayed_of(p, 1).code == "F"
    assert any(i.code == "trf_result_without_opponent" for i in p.issues)


def test_colour_with_opponent_0000_is_reported():
    p = read_trf(trf(row(1, "Alpha, Ann", [block(0, "w", "Z")])))
    assert unplayed_of(p, 1).code == "Z"
    assert any(i.code == "trf_colour_without_opponent" for i in p.issues)


def test_bye_code_with_an_opponent_is_not_a_game():
    """lichess-org/lila#14387: '62 b Z'."""
    p = pair("Z", "Z", colour_a="b", colour_b="w")
    assert not p.games
    assert unplayed_of(p, 1).code == "Z" and unplayed_of(p, 1).opponent_ref == 2
    assert any(i.code == "trf_bye_with_opponent" for i in p.issues)


def test_scheduled_round_is_never_a_zero():
    p = pair(" ", " ")
    (g,) = p.games
    assert (g.result, g.played, g.unplayed_code, g.white_score) == ("*", False, "*", None)
    assert "trf_scheduled" in g.flags
    assert (unplayed_of(p, 1).code, unplayed_of(p, 1).score) == ("*", None)


@pytest.mark.parametrize(("a", "b"), [("1", "1"), ("1", "="), ("=", "0"), ("1", " ")])
def test_sides_that_disagree_are_flagged_and_not_rated(a, b):
    p = pair(a, b)
    (g,) = p.games
    assert not g.played and "trf_sides_disagree" in g.flags
    assert g.result == "*" and g.white_score is None
    assert any(i.code == "trf_sides_disagree" and i.severity == "warning" for i in p.issues)
    assert (unplayed_of(p, 1).code, unplayed_of(p, 2).code) == (a, b.strip() or "*")


def test_same_colour_on_both_sides_is_a_disagreement():
    p = pair("1", "0", colour_a="w", colour_b="w")
    (g,) = p.games
    assert not g.played and {"trf_sides_disagree", "trf_colour_disagree"} <= set(g.flags)
    assert g.result == "1-0"  # the results still mirror


def test_forfeit_entered_on_one_side_only():
    text = trf(row(1, "Alpha, Ann", [block(2, "w", "+")]), row(2, "Beta, Bob", [block(None, " ", " ")]))
    p = read_trf(text)
    (g,) = p.games
    assert (g.white_ref, g.black_ref, g.result, g.played) == (1, 2, "1-0", False)
    assert {"trf_one_sided", "trf_forfeit"} <= set(g.flags)
    assert unplayed_of(p, 1).code == "+" and unplayed_of(p, 2).code == " "
    assert any(i.code == "trf_one_sided_forfeit" and i.severity == "warning" for i in p.issues)


def test_one_sided_played_result_is_flagged():
    text = trf(row(1, "Alpha, Ann", [block(2, "b", "1")]), row(2, "Beta, Bob", [block(0, "-", "Z")]))
    p = read_trf(text)
    (g,) = p.games
    assert (g.white_ref, g.black_ref, g.result, g.played) == (2, 1, "0-1", False)
    assert any(i.code == "trf_one_sided" for i in p.issues)


def test_conflicting_pairings_do_not_invent_games():
    text = trf(
        row(1, "Alpha, Ann", [block(2, "w", "1")]),
        row(2, "Beta, Bob", [block(3, "w", "1")]),
        row(3, "Gamma, Gil", [block(2, "b", "0")]),
    )
    p = read_trf(text)
    assert [(g.white_ref, g.black_ref, g.played) for g in p.games] == [(2, 3, True)]
    assert unplayed_of(p, 1).code == "1"
    assert any(i.code == "trf_pairing_conflict" for i in p.issues)


def test_unknown_opponent_and_self_pairing_are_errors():
    p = read_trf(trf(row(1, "Alpha, Ann", [block(9, "w", "1"), block(1, "w", "1")])))
    assert not p.games
    codes = {i.code for i in p.issues if i.severity == "error"}
    assert {"trf_unknown_opponent", "trf_self_pairing"} <= codes
    assert [u.code for u in p.unplayed] == ["1", "1"]


def test_bad_block_is_an_error_and_still_an_unplayed_round():
    line = row(1, "Alpha, Ann", [block("x2", "w", "1"), block(0, "-", "Q")])
    p = read_trf(trf(line))
    assert [u.code for u in p.unplayed] == ["?", "?"]
    assert sum(i.code == "trf_bad_block" for i in p.issues) == 2


def test_rounds_are_positional_and_dated_from_132():
    text = trf(
        "132" + " " * 88 + "24/03/01  24/03/02  24/03/03",
        row(1, "Alpha, Ann", [block(None, " ", " "), block(2, "w", "1"), block(2, "b", "=")]),
        row(2, "Beta, Bob", [block(0, "-", "U"), block(1, "b", "0"), block(1, "w", "=")]),
    )
    p = read_trf(text)
    assert [(g.round, g.game_date.isoformat(), g.date_precision) for g in p.games] == [
        (2, "2024-03-02", "day"),
        (3, "2024-03-03", "day"),
    ]
    assert [(g.white_ref, g.result) for g in p.games] == [(1, "1-0"), (2, "1/2-1/2")]
    assert unplayed_of(p, 1, 1).code == " " and unplayed_of(p, 2, 1).code == "U"
    assert p.tournaments[0].rounds == 3


def test_every_block_lands_exactly_once():
    text = trf(
        row(1, "Alpha, Ann", [block(2, "w", "1"), block(3, "b", "+"), block(0, "-", "H")]),
        row(2, "Beta, Bob", [block(1, "b", "0"), block(0, "-", "U"), block(3, "w", "D")]),
        row(3, "Gamma, Gil", [block(None, " ", " "), block(1, "w", "-"), block(2, "b", "D")]),
    )
    p = read_trf(text)
    seen = [(u.player_ref, u.round) for u in p.unplayed]
    for g in p.games:
        if g.played:
            seen += [(g.white_ref, g.round), (g.black_ref, g.round)]
    assert sorted(seen) == [(r, n) for r in (1, 2, 3) for n in (1, 2, 3)]


def test_plus_without_opponent_is_a_board_forfeit_in_team_files():
    team = "013 " + "Team A".ljust(32) + "   1"
    p = read_trf(trf(row(1, "Alpha, Ann", [block(0, "-", "+")], points="1.0"), team))
    u = unplayed_of(p, 1)
    assert (u.code, u.score, u.opponent_ref) == ("+", ONE, None)
    p = read_trf(trf(row(1, "Alpha, Ann", [block(0, "-", "+")], points="1.0")))
    assert unplayed_of(p, 1).code == "F"  # individual file: legacy full-point bye


@pytest.mark.parametrize(
    ("scoring", "score"),
    [
        ("162  W 1.0    D 0.5    L 0.0    Z 0.0    P 0.5", HALF),
        ("162  W 3.0    D 1.0    L 0.0    Z 0.0    P 3.0", ONE),
        ("XXS PAB=0.5", HALF),
        ("XXS W=3 PAB=0", ZERO),
        ("162  W 1.0    P 0.7", ONE),  # not a game-scale value: default
    ],
)
def test_pab_value_follows_the_scoring_system(scoring, score):
    p = read_trf(trf(scoring, row(1, "Alpha, Ann", [block(0, "-", "U")])))
    assert unplayed_of(p, 1).score == score


def test_more_than_one_pab_in_a_round_is_noted():
    p = read_trf(
        trf(row(1, "A", [block(0, "-", "U")], points="1.0"), row(2, "B", [block(None, " ", "U")], points="1.0"))
    )
    (issue,) = [i for i in p.issues if i.code == "trf_several_pab"]
    assert "[1, 2]" in issue.message


def test_games_in_place_order_when_a_higher_rank_alone_writes_a_pairing():
    # round 1: 2-3 on both rows, 4 names 1 whose row is blank (one-sided, placed by rank 1): the
    # reader meets 4's pairing after 2-3's and still gives the games by round and lower rank
    text = trf(
        row(1, "Alpha, Ann", [block(None, " ", " "), block(2, "w", "1")]),
        row(2, "Beta, Bob", [block(3, "w", "1"), block(1, "b", "0")]),
        row(3, "Gamma, Gil", [block(2, "b", "0"), block(4, "w", "=")]),
        row(4, "Delta, Dan", [block(1, "b", "0"), block(3, "b", "=")]),
    )
    p = read_trf(text)
    assert [(g.round, g.white_ref, g.black_ref, g.played) for g in p.games] == [
        (1, 1, 4, False), (1, 2, 3, True), (2, 1, 2, True), (2, 3, 4, True),
    ]  # fmt: skip
    assert [g.game_index for g in p.games] == [0, 1, 2, 3]


def test_fide_id_column_read_alike_on_every_path():
    # plain FIDE IDs take a shorter path than placeholders, national numbers and odd values
    ids = {"1503014": (1503014, None), "999999": (None, None), "0": (None, None), "012345678": (12345678, None),
           "12345": (None, "12345"), "123456789": (123456789, None), "1234567890": (None, None),
           "100000": (100000, None), "99999": (None, None), "999": (None, "999")}  # fmt: skip
    for raw, want in ids.items():
        (player,) = read_trf(trf(row(1, "Alpha, Ann", fide_id=raw))).players
        assert (player.fide_id, player.national_id) == want, raw
