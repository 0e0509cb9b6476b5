"""With --validate-moves, the stored result is checked against the final position (issue 15,
item 2): kept as written, flagged for the officer when the board contradicts it."""

from __future__ import annotations

import pytest

from elopipe.read.pgn.reader import read_pgn

FOOLS_MATE = "1. f3 e5 2. g4 Qh4#"  # White is checkmated
LOYD_STALEMATE = (  # Sam Loyd's ten-move stalemate: Black to move, no legal move, not in check
    "1. e3 a5 2. Qh5 Ra6 3. Qxa5 h5 4. h4 Rah6 5. Qxc7 f6 6. Qxd7+ Kf7 7. Qxb7 Qd3 8. Qxb8 Qh7 9. Qxc8 Kg6 10. Qe6"
)
BISHOP_ONLY = '[SetUp "1"]\n[FEN "8/8/8/4k3/8/8/8/4K2B w - - 0 1"]\n'  # K+B v K: nobody can mate


def _game(moves: str, result: str, extra: str = "") -> list:
    text = (
        f'[Event "E"]\n[Date "2024.01.01"]\n[White "A, B"]\n[Black "C, D"]\n[Result "{result}"]\n{extra}\n'
        f"{moves} {result}\n"
    )
    parsed = read_pgn(text, validate_moves=True)
    (game,) = parsed.games
    return game, [(i.code, i.severity, i.message) for i in parsed.issues if i.code.startswith("result_")]


@pytest.mark.parametrize(
    ("moves", "result", "extra", "why"),
    [
        (FOOLS_MATE, "1-0", "", "result 1-0 but the moves end with White checkmated; stored as written"),
        (FOOLS_MATE, "1/2-1/2", "", "result 1/2-1/2 but the moves end with White checkmated; stored as written"),
        (LOYD_STALEMATE, "1-0", "", "result 1-0 after stalemate (a draw); stored as written"),
        (LOYD_STALEMATE, "0-1", "", "result 0-1 after stalemate (a draw); stored as written"),
        ("1. Kd2", "1-0", BISHOP_ONLY, "result 1-0 in a position where neither side can checkmate (a draw); "
         "stored as written"),
    ],
)  # fmt: skip
def test_a_result_the_final_position_contradicts_is_an_error_and_kept(moves, result, extra, why):
    game, issues = _game(moves, result, extra)
    assert issues == [("result_contradicts_position", "error", why)]
    assert game.result == result  # kept as written, for the officer to decide
    assert "result_contradicts_position" in game.flags


def test_checkmate_with_an_unknown_result_is_a_warning():
    game, issues = _game(FOOLS_MATE, "*")
    assert issues == [("result_after_checkmate_unknown", "warning", "White is checkmated but the result is '*'")]
    assert "result_contradicts_position" not in game.flags


@pytest.mark.parametrize(
    ("moves", "result", "extra"),
    [(FOOLS_MATE, "0-1", ""), (LOYD_STALEMATE, "1/2-1/2", ""), ("1. Kd2", "1/2-1/2", BISHOP_ONLY),
     ("1. e4 e5 2. Nf3", "1-0", "")],
)  # fmt: skip
def test_a_result_the_position_allows_gives_no_issue(moves, result, extra):
    game, issues = _game(moves, result, extra)
    assert issues == [] and "result_contradicts_position" not in game.flags


def test_without_validate_moves_the_position_is_not_looked_at():
    text = f'[Event "E"]\n[White "A, B"]\n[Black "C, D"]\n[Result "1-0"]\n\n{FOOLS_MATE} 1-0\n'
    parsed = read_pgn(text)
    assert not [i for i in parsed.issues if i.code.startswith("result_")]
