"""Reader hardening: hostile or broken input must not lose data, crash the loader or the rating
engines, or land unchecked values (testers' defect list, issue 2 follow-up)."""

from __future__ import annotations

from elopipe.model import ParsedFile
from elopipe.pgn_reader import read_pgn


def pgn_game(i: int, moves: str = "1. e4 e5 1-0", **tags: str) -> str:
    base = {
        "Event": "Hardening Open",
        "Site": "Paris FRA",
        "Date": "2023.01.01",
        "Round": str(i),
        "White": f"White {i}",
        "Black": f"Black {i}",
        "Result": "1-0",
    }
    base.update(tags)
    return "".join(f'[{k} "{v}"]\n' for k, v in base.items()) + "\n" + moves + "\n\n"


def codes(pf: ParsedFile) -> list[str]:
    return [i.code for i in pf.issues]


# ---- 1. an unclosed { comment ends at the next game's tag section -----------------------------


def test_unclosed_brace_does_not_swallow_later_games() -> None:
    text = pgn_game(1) + pgn_game(2, "1. e4 {oops 2. Nf3") + "".join(pgn_game(i) for i in range(3, 53))
    pf = read_pgn(text)
    assert len(pf.games) == 52
    assert [g.round for g in pf.games] == list(range(1, 53))
    broken = [i for i in pf.issues if i.code == "unterminated_comment"]
    assert [(i.game_index, i.severity) for i in broken] == [(1, "error")]
    assert pf.games[1].ply_count == 1 and pf.games[2].ply_count == 2


def test_unclosed_brace_before_glued_event_block() -> None:
    # no blank line before the next tag section: an [Event line with more tags still ends it
    text = pgn_game(1, "1. e4 {oops 2. Nf3").rstrip("\n") + "\n" + pgn_game(2) + pgn_game(3)
    pf = read_pgn(text)
    assert [g.round for g in pf.games] == [1, 2, 3]
    assert "unterminated_comment" in codes(pf)


def test_event_line_inside_a_closed_comment_stays_comment() -> None:
    pf = read_pgn(pgn_game(1, '1. e4 {see\n[Event "not a game"]\nabove} e5 1-0') + pgn_game(2))
    assert [g.round for g in pf.games] == [1, 2]
    assert pf.games[0].ply_count == 2 and "unterminated_comment" not in codes(pf)


# ---- 3. a `;` comment that holds a tag is comment text ---------------------------------------


def test_semicolon_comment_with_result_and_event_is_no_game() -> None:
    for moves in ('1. e4 ; 1-0 [Event "x"]\ne5 1-0', '1. e4 ;*[Event "x"]\ne5 1-0', '1. e4 {1-0 [Event "x"]\n} e5 1-0'):
        pf = read_pgn(pgn_game(1) + pgn_game(2, moves) + pgn_game(3))
        assert [g.round for g in pf.games] == [1, 2, 3], moves
        assert pf.games[1].ply_count == 2 and pf.games[1].result_marker == "1-0"
        assert not pf.issues, moves


def test_result_glued_to_event_after_a_closed_comment_still_splits() -> None:
    text = (
        pgn_game(1, '1. e4 {ok} e5 1-0[Event "F"]').rstrip("\n")
        + "\n"
        + pgn_game(2)[len('[Event "Hardening Open"]\n') :]
    )
    pf = read_pgn(text)
    assert [g.headers["Event"] for g in pf.games] == ["Hardening Open", "F"]
