"""Every fault class of shared/specs/pgn-faults.md, as small inline PGN texts read by `read_pgn`.

Test names carry the entry number of the fault log (f01 ... f42).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elopipe.read.pgn.reader import looks_like_pgn, movetext_hash, movetext_tokens, read_pgn
from elopipe.read.records import ParsedFile
from elopipe.read.textio import decode_bytes
from tests.helpers.paths import REPO

MOVES_20 = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7"


def game(*tags: tuple[str, str], moves: str = "1. e4 e5 2. Nf3 Nc6 1-0") -> str:
    base = {
        "Event": "Test Open",
        "Site": "Paris FRA",
        "Date": "2023.05.06",
        "Round": "1",
        "White": "Alpha, A",
        "Black": "Beta, B",
        "Result": "1-0",
    }
    base.update(dict(tags))
    head = "".join(f'[{k} "{v}"]\n' for k, v in base.items())
    return head + "\n" + moves + "\n\n"


def codes(pf: ParsedFile) -> set[str]:
    return {i.code for i in pf.issues}


def issues_of(pf: ParsedFile, code: str) -> list:
    return [i for i in pf.issues if i.code == code]


# ---- 1-4 encodings -----------------------------------------------------------------------


def test_f01_latin1_names_decode_and_read() -> None:
    data = game(("White", "Helbich, Ján"), ("Black", "Réti, Richard")).encode("latin-1")
    dec = decode_bytes(data)
    pf = read_pgn(dec.text)
    assert dec.encoding in ("cp1252", "latin-1")
    assert [p.name for p in pf.players] == ["Helbich, Ján", "Réti, Richard"]


def test_f02_utf8_bytes_undefined_in_cp1252_read_exactly() -> None:
    # "Á" is C3 81 and "Ő" is C5 90: 0x81 and 0x90 are holes of cp1252
    data = game(("White", "Álmos, Ő")).encode("utf-8")
    assert b"\x81" in data and b"\x90" in data
    pf = read_pgn(decode_bytes(data).text)
    assert pf.players[0].name == "Álmos, Ő"


def test_f03_bom_at_start_and_inside() -> None:
    text = "\ufeff" + game() + "\ufeff" + game(("Round", "2"))
    pf = read_pgn(text)
    assert len(pf.games) == 2
    assert pf.games[0].headers["Event"] == "Test Open"
    assert all("\ufeff" not in k + v for g in pf.games for k, v in g.headers.items())


def test_f04_mixed_encodings_one_player() -> None:
    data = (
        game(("White", "Sofía, Ana")).encode("utf-8")
        + game(("White", "Sofía, Ana"), ("Round", "2")).encode("latin-1")
        + game(("White", "Sofía, Ana"), ("Round", "3")).encode("utf-8")
    )
    pf = read_pgn(decode_bytes(data).text)
    assert len(pf.games) == 3
    assert {g.headers["White"] for g in pf.games} == {"Sofía, Ana"}
    assert len({g.white_ref for g in pf.games}) == 1
    assert len(issues_of(pf, "mixed_encoding")) >= 1


# ---- 5-7 moves ---------------------------------------------------------------------------


def test_f05_castling_with_zeros_hashes_like_letters() -> None:
    a = read_pgn(game(moves="1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. 0-0 Nf6 1-0")).games[0]
    b = read_pgn(game(moves="1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O Nf6 1-0")).games[0]
    assert a.ply_count == b.ply_count == 8
    assert a.movetext_hash == b.movetext_hash


@pytest.mark.parametrize("null", ["--", "Z0"])
def test_f06_f07_null_move_keeps_game_and_result(null: str) -> None:
    pf = read_pgn(game(("Result", "0-1"), moves=f"1. d4 d5 2. c4 {null} 3. Nc3 Nf6 0-1"), validate_moves=True)
    g = pf.games[0]
    assert (g.result, g.played, g.ply_count) == ("0-1", True, 6)
    assert "null_move" in g.flags
    assert "illegal_move" not in codes(pf)


# ---- 8-14 results, forfeits, byes ---------------------------------------------------------


def test_f08_result_conflict_stores_both_and_flags() -> None:
    pf = read_pgn(game(("Result", "1/2-1/2"), moves="1. e4 e5 2. Nf3 Nc6 0-1"))
    g = pf.games[0]
    assert g.result == "1/2-1/2" and g.result_raw == "1/2-1/2"
    assert g.result_marker == "0-1"
    assert "result_conflict" in g.flags
    assert issues_of(pf, "result_conflict")[0].severity == "error"


def test_f09_missing_marker_and_result_in_comment() -> None:
    text = game(("Result", "0-1"), moves="1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# {0-1}") + game(("Round", "2"))
    pf = read_pgn(text)
    assert len(pf.games) == 2
    assert pf.games[0].result == "0-1" and pf.games[0].result_marker is None
    assert pf.games[0].ply_count == 7
    assert issues_of(pf, "no_result_marker")[0].game_index == 0
    assert pf.games[1].headers["Round"] == "2"


def test_f10_star_is_unknown_not_rated() -> None:
    g = read_pgn(game(("Result", "*"), moves="1. e4 e5 *")).games[0]
    assert g.result == "*" and g.white_score is None and g.black_score is None


@pytest.mark.parametrize(
    ("raw", "result", "forfeit"),
    [
        ("1/2", "1/2-1/2", False),
        ("0.5-0.5", "1/2-1/2", False),
        ("½-½", "1/2-1/2", False),
        ("½–½", "1/2-1/2", False),
        ("1:0", "1-0", False),
        ("0:1", "0-1", False),
        ("+:-", "1-0", True),
        ("-:+", "0-1", True),
        ("-:-", "0-0", True),
        ("+/-", "1-0", True),
        ("0-0", "0-0", True),
        ("1-0 (forfeit)", "1-0", True),
        ("banana", "*", False),
    ],
)
def test_f11_f12_nonstandard_results_normalised_and_flagged(raw: str, result: str, forfeit: bool) -> None:
    pf = read_pgn(game(("Result", raw), moves="1. e4 e5 2. Nf3 Nc6"))
    g = pf.games[0]
    assert g.result == result and g.result_raw == raw
    assert g.played is (not forfeit)
    assert (g.unplayed_code == "forfeit") is forfeit
    assert codes(pf) & {"result_nonstandard", "result_unknown"}
    if result == "*":
        assert "result_unknown" in g.flags  # never a draw by default


def test_f12_forfeit_scores_never_draws() -> None:
    g = read_pgn(game(("Result", "-:-"), moves="")).games[0]
    assert (g.result, g.white_score, g.black_score, g.played) == ("0-0", Decimal(0), Decimal(0), False)


def test_f12_double_forfeit_movetext_is_not_castling() -> None:
    pf = read_pgn(game(("Result", "0-0"), ("WhiteFideId", "5029465"), moves="0-0"), validate_moves=True)
    g = pf.games[0]
    assert (g.result, g.result_marker, g.ply_count, g.played) == ("0-0", "0-0", 0, False)
    assert "double_forfeit" in g.flags
    assert "illegal_move" not in codes(pf)


def test_f12_decisive_result_without_moves_is_forfeit_in_a_file_that_shows_moves() -> None:
    pf = read_pgn(game(("Result", "1-0"), moves="1-0") + game(("White", "Gamma, C"), ("Black", "Delta, D")))
    g = pf.games[0]
    assert (g.result, g.played, g.unplayed_code, g.ply_count) == ("1-0", False, "forfeit", 0)
    assert g.white_score == Decimal(1) and "forfeit_no_moves" in codes(pf) and not pf.results_only


def test_f13_fewer_than_two_plies_flagged() -> None:
    g = read_pgn(game(("Result", "1-0"), moves="1. e4 1-0")).games[0]
    assert g.ply_count == 1 and g.played
    assert "fewer_than_two_plies" in g.flags


def test_f14_bye_pseudo_game_is_unplayed() -> None:
    pf = read_pgn(game(("Black", "?"), ("Result", "1-0"), ("Termination", "bye"), ("Round", "4"), moves="1-0"))
    g = pf.games[0]
    assert g.unplayed_code == "bye" and not g.played and g.black_ref is None
    assert "forfeit" not in g.flags
    assert [(u.round, u.code, u.score) for u in pf.unplayed] == [(4, "U", Decimal(1))]


@pytest.mark.parametrize(
    "name", ["Freilos", "FREILOS", "Descansa", "Vrij", "Pauze", "Bye (1 pt)", "BYE 1", "Not paired", "No opponent"]
)
def test_f14_the_bye_names_of_other_languages_and_programs_are_byes(name: str) -> None:
    """German, Spanish and Dutch exports and pairing programs name the bye's side so: each was a
    player with a played game (a hostile tester)."""
    pf = read_pgn(game(("Black", name), ("Result", "1-0"), ("Round", "4"), moves="1-0"))
    g = pf.games[0]
    assert g.unplayed_code == "bye" and not g.played and g.black_ref is None
    assert [p.name for p in pf.players] == [g.headers["White"]]


@pytest.mark.parametrize("name", ["Bye, Torbjorn", "Byers, Tom", "Bye John"])
def test_f14_a_player_named_bye_is_a_player(name: str) -> None:
    """A surname Bye is a person: his game with moves is played and rated (it was taken for a bye)."""
    pf = read_pgn(game(("Black", name), ("Result", "0-1"), ("Round", "1"), moves="1. e4 e5 2. Nf3 Nc6 0-1"))
    g = pf.games[0]
    assert g.played and g.unplayed_code is None and g.black_ref is not None
    assert name in [p.name for p in pf.players]


def test_f14_bye_without_newline_keeps_next_game() -> None:
    text = (
        '[Event "E"]\n[Round "1"]\n[White "A"]\n[Black ""][Result "1-0"]\n\n1-0\n\n'
        + game(("Round", "1"), ("White", "C"), ("Black", "D"))
        + game(("Round", "1"), ("White", "E"), ("Black", "F"))
    )
    pf = read_pgn(text)
    assert len(pf.games) == 3
    assert pf.games[0].result == "1-0" and pf.games[0].unplayed_code == "bye"
    assert issues_of(pf, "tags_on_one_line")[0].line == 4
    assert [g.headers["White"] for g in pf.games[1:]] == ["C", "E"]


# ---- 15-19 header values -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "date", "precision"),
    [
        ("2023.05.06", dt.date(2023, 5, 6), "day"),
        ("2023.??.??", dt.date(2023, 1, 1), "year"),
        ("2023.05.??", dt.date(2023, 5, 1), "month"),
        ("2017.4.14", dt.date(2017, 4, 14), "day"),
        ("2023-05-06", dt.date(2023, 5, 6), "day"),
        ("2018.10.11 ", dt.date(2018, 10, 11), "day"),
    ],
)
def test_f15_date_forms(raw: str, date: dt.date, precision: str) -> None:
    g = read_pgn(game(("Date", raw))).games[0]
    assert (g.game_date, g.date_precision) == (date, precision)
    assert g.headers["Date"] == raw


def test_f15_unknown_date_falls_back_to_event_date() -> None:
    pf = read_pgn(game(("Date", "????.??.??"), ("EventDate", "2022.07.29")) + game(("Date", "Sun Jul 09 2023")))
    g0, g1 = pf.games
    assert (g0.game_date, g0.date_precision) == (dt.date(2022, 7, 29), "day")
    assert "date_from_event" in g0.flags
    assert g1.game_date is None and g1.date_precision == "none"
    assert [i.game_index for i in issues_of(pf, "date_unparsed")] == [1]


def test_f16_one_fide_id_one_player_per_tournament() -> None:
    pf = read_pgn(
        game(("White", "Carlsen,M"), ("WhiteFideId", "1503014"))
        + game(("White", "Carlsen, Magnus"), ("WhiteFideId", "1503014"), ("Round", "2"))
        + game(("White", "Carlsen,H"), ("Round", "3"))
    )
    assert pf.games[0].white_ref == pf.games[1].white_ref != pf.games[2].white_ref
    assert {p.name for p in pf.players} >= {"Carlsen,M", "Carlsen,H"}


@pytest.mark.parametrize("raw", ["", "?", "-", "0", "Elo=1234 DWZ=1234", "abc", "99999"])
def test_f17_non_numeric_elo_is_unrated(raw: str) -> None:
    pf = read_pgn(game(("WhiteElo", raw), ("BlackElo", "2701"), ("WhiteTitle", "-"), ("BlackTitle", "gm")))
    g = pf.games[0]
    assert g.white_rating is None and g.black_rating == 2701
    white, black = pf.players
    assert white.rating is None and white.title is None
    assert black.rating == 2701 and black.title == "GM"
    assert bool(issues_of(pf, "rating_invalid")) == (raw in ("Elo=1234 DWZ=1234", "abc", "99999"))


@pytest.mark.parametrize(
    ("raw", "fide_id", "warned"),
    [("stockfish", None, True), ("", None, False), ("0", None, False), (" 1503014 ", 1503014, False)],
)
def test_f18_fide_id_values(raw: str, fide_id: int | None, warned: bool) -> None:
    pf = read_pgn(game(("WhiteFideId", raw), ("BlackFideId", "24101605")))
    assert pf.players[0].fide_id == fide_id
    assert pf.players[1].fide_id == 24101605
    assert bool(issues_of(pf, "fide_id_invalid")) is warned


def test_f19_time_control_gives_tournament_rate_class() -> None:
    pf = read_pgn(
        game(("TimeControl", "40/7200:20/3600:900+30"))
        + game(("Event", "Rapid"), ("TimeControl", "900+10"))
        + game(("Event", "Nothing"))
    )
    by_name = {t.name: t for t in pf.tournaments}
    assert by_name["Test Open"].rate_class == "standard"
    assert by_name["Test Open"].time_control == "40/7200:20/3600:900+30"
    assert by_name["Rapid"].rate_class == "rapid"
    assert by_name["Nothing"].rate_class is None


# ---- 20-21 set-up positions and variants ---------------------------------------------------


def test_f20_fen_with_lowercase_setup_is_honoured() -> None:
    fen = "rnbqkbnr/1ppppppp/p7/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    pf = read_pgn(game(("Setup", "1"), ("FEN", fen), moves="2. Nc3 e5 3. Nf3 Qe7 1-0"), validate_moves=True)
    g = pf.games[0]
    assert g.fen == fen and "non_standard_start" in g.flags and g.ply_count == 4
    assert not issues_of(pf, "illegal_move")


def test_f21_chess960_from_variant_and_from_castling_letters() -> None:
    # O-O is legal here only under Chess960 rules (king e1, castling rook f1)
    fen = "bqnrkrnb/pppppppp/8/8/8/8/PPPPPPPP/BQNRKRNB w FDfd - 0 1"
    moves = "1. Nh3 Nh6 2. O-O O-O 1/2-1/2"
    pf = read_pgn(
        game(("Variant", "chess 960"), ("SetUp", "1"), ("FEN", fen), ("Result", "1/2-1/2"), moves=moves)
        + game(("SetUp", "1"), ("FEN", fen), ("Result", "1/2-1/2"), moves=moves),
        validate_moves=True,
    )
    assert [g.variant for g in pf.games] == ["chess960", "chess960"]
    assert all("chess960" in g.flags for g in pf.games)
    assert not issues_of(pf, "illegal_move")


# ---- 22-25 tag syntax --------------------------------------------------------------------


def test_f22_brackets_in_values_and_tags_in_comments() -> None:
    text = game(("Black", "[=0040.34h5a4]"), moves='1. e4 {a comment\n[Event "not a game"]\nstill comment} e5 1-0')
    pf = read_pgn(text)
    assert len(pf.games) == 1
    assert pf.games[0].headers["Black"] == "[=0040.34h5a4]"
    assert pf.games[0].ply_count == 2


def test_f23_escaped_and_unescaped_quotes() -> None:
    text = (
        '[Event "The \\"Closed\\" Dragon Cup"]\n[White "O"Reilly, P"]\n[Black "Stockfish 7 /Level 6\\"]\n'
        '[Result "1-0"]\n\n1. e4 1-0\n\n'
        '[Event "The \\"Closed\\" Dragon Cup"]\n[White "O\\"Reilly, P"]\n[Black "X"]\n[Result "0-1"]\n\n1. e4 e5 0-1\n'
    )
    pf = read_pgn(text)
    g0, g1 = pf.games
    assert g0.headers["Event"] == 'The "Closed" Dragon Cup'
    assert g0.headers["White"] == g1.headers["White"] == 'O"Reilly, P'
    assert g0.headers["Black"] == "Stockfish 7 /Level 6"
    assert g0.white_ref == g1.white_ref


def test_f24_percent_lines_ignored() -> None:
    pf = read_pgn("% exported by a tool\n" + game() + "%another\n" + game(("Round", "2")))
    assert len(pf.games) == 2 and not pf.issues
    assert pf.games[1].line == 13


def test_f25_blank_line_inside_tag_section() -> None:
    text = '[Event "E"]\n\n[Site "S"]\n[White "W"]\n[Black "B"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n'
    pf = read_pgn(text)
    assert len(pf.games) == 1
    assert set(pf.games[0].headers) == {"Event", "Site", "White", "Black", "Result"}


# ---- 26-29 how games are separated and end ---------------------------------------------------


def test_f26_no_blank_lines_between_games() -> None:
    one = '[Event "E"]\n[White "A"]\n[Black "B"]\n[Result "1-0"]\n[ECOUrl "https://x/3...Qxd5"]\n'
    text = (one + "1. e4 e5 1-0\n") * 2 + one + "1. d4 d5 1-0"
    pf = read_pgn(text)
    assert len(pf.games) == 3
    assert [g.ply_count for g in pf.games] == [2, 2, 2]
    assert all(g.headers["White"] == "A" for g in pf.games)


def test_f26_result_glued_to_next_event() -> None:
    text = '[Event "E"]\n[White "A"]\n[Black "B"]\n[Result "1/2-1/2"]\n\n1. e4 e5 1/2-1/2[Event "F"]\n' + (
        '[White "C"]\n[Black "D"]\n[Result "0-1"]\n\n1. d4 d5 0-1\n'
    )
    pf = read_pgn(text)
    assert [g.headers["Event"] for g in pf.games] == ["E", "F"]
    assert pf.games[1].line == 6 and pf.games[0].result_marker == "1/2-1/2"


def test_f27_last_game_without_final_newline() -> None:
    pf = read_pgn(game() + game(("Round", "2")).rstrip("\n"))
    assert len(pf.games) == 2 and pf.games[1].ply_count == 4


def test_f28_truncated_file_flags_last_game() -> None:
    text = game() + game(("Result", "0-1"), moves="1. e4 e5 2. Nf3 {the broadcast stopped here because")
    pf = read_pgn(text.rstrip("\n"))
    g0, g1 = pf.games
    assert "truncated" not in g0.flags
    assert "truncated" in g1.flags and g1.ply_count == 3
    assert issues_of(pf, "unterminated_comment")[0].game_index == 1


def test_f29_consecutive_empty_games() -> None:
    empty = '[Event "E"]\n[White "A"]\n[Black "B"]\n[Result "*"]\n[FEN "8/8/8/8/8/8/8/K1k5 w - - 0 1"]\n\n'
    pf = read_pgn(empty + empty + game())
    assert len(pf.games) == 3
    assert [g.ply_count for g in pf.games] == [0, 0, 4]
    assert [g.movetext_hash is None for g in pf.games] == [True, True, False]
    assert [g.game_index for g in pf.games] == [0, 1, 2]


def test_f29_empty_games_without_blank_line() -> None:
    empty = '[Event "E"]\n[White "A"]\n[Black "B"]\n[Result "*"]\n'
    pf = read_pgn(empty + empty + "\n" + game())
    assert len(pf.games) == 3


# ---- 30-34 movetext ----------------------------------------------------------------------


def test_f30_illegal_move_keeps_game_and_result() -> None:
    text = game(("Result", "1-0"), moves="1. e4 e5 2. Ke2 Ke7 3. Ke4 Ke5 4. Kd3 1-0")
    assert not issues_of(read_pgn(text), "illegal_move")  # default mode does not replay
    pf = read_pgn(text, validate_moves=True)
    g = pf.games[0]
    assert g.result == "1-0" and g.played and "moves_invalid" in g.flags
    err = issues_of(pf, "illegal_move")[0]
    assert err.severity == "error" and err.game_index == 0 and "Ke4" in err.message and "ply 5" in err.message


def test_f30_illegal_move_is_reported_at_its_own_line() -> None:
    first = game(("Result", "1-0"), moves="1. e4 e5 2. Nf3 Nc6 1-0")
    moves = (
        "1. e4 {a comment\nover two lines} e5\n"  # comments and variations keep their lines
        "2. Nf3 (2. Nc3 Nc6\n3. f4) Nc6 ; a rest-of-line comment Ke4\n"
        "3. Bb5 a6\n"
        "4. Ke4 1-0"
    )
    text = first + "\n" + game(("Result", "1-0"), moves=moves)
    pf = read_pgn(text, validate_moves=True)
    err = issues_of(pf, "illegal_move")[0]
    lines = text.split("\n")
    assert err.game_index == 1 and "Ke4" in err.message
    assert lines[err.line - 1] == "4. Ke4 1-0"
    amb = game(moves="1. e4 e5 2. Nf3 Nf6 3. Nc3 Nc6 4. Nd5 Nd4\n5. Nxe5 Nxe4\n6. Nc4 Nc5\n7. Ne3 1-0")
    err = issues_of(read_pgn(amb, validate_moves=True), "ambiguous_move")[0]
    assert amb.split("\n")[err.line - 1] == "7. Ne3 1-0"


def test_f30_ambiguous_move_reported() -> None:
    # white knights on c4 and d5 can both go to e3
    pf = read_pgn(
        game(moves="1. e4 e5 2. Nf3 Nf6 3. Nc3 Nc6 4. Nd5 Nd4 5. Nxe5 Nxe4 6. Nc4 Nc5 7. Ne3 1-0"), validate_moves=True
    )
    assert issues_of(pf, "ambiguous_move")[0].severity == "error"


def test_f31_unbalanced_parentheses_keep_main_line() -> None:
    moves = "1. e4 e5 (1... c5 (1... e6) 2. Nf3) 2. Nf3 Nc6 3. Bb5 a6 ) 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 1-0"
    pf = read_pgn(game(moves=moves))
    assert pf.games[0].ply_count == 14
    assert issues_of(pf, "unbalanced_variation")


def test_f32_nags_and_glyphs_skipped() -> None:
    moves = (
        "1. e4! e5?! $1 2. Nf3 ± Nc6 ∓ 3. Bb5!? a6 = 4. Ba4 Nf6 $14 5. O-O Be7 6. Re1 b5 7. Bb3 d6 "
        "8. c3 O-O 9. h3 Nb8 10. d4 Nbd7 11. c4 c6 12. Nc3 1-0"
    )
    g = read_pgn(game(moves=moves)).games[0]
    assert g.ply_count == 23


def test_f33_odd_move_numbers_and_line_breaks() -> None:
    moves = (
        "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Ba4 Nf6 5.O-O Be7 6.Re1 b5 7.Bb3 d6 8.c3 O-O 9.h3 Nb8\n10. d4\n"
        "10....Nbd7 11. c4 c6 12. Nc3 Qc7 1-0"
    )
    g = read_pgn(game(moves=moves)).games[0]
    assert g.ply_count == 24
    plain = read_pgn(game(moves=MOVES_20 + " 11. c4 c6 12. Nc3 Qc7 1-0")).games[0]
    assert g.movetext_hash == plain.movetext_hash


def test_f34_very_long_line() -> None:
    moves = " ".join(f"{{{'x' * 300}}} {t}" for t in MOVES_20.split()) + " 1/2-1/2"
    assert len(moves) > 5000 and "\n" not in moves
    g = read_pgn(game(("Result", "1/2-1/2"), moves=moves)).games[0]
    assert (g.ply_count, g.result) == (20, "1/2-1/2")


def test_f35_crlf_leaves_no_carriage_return() -> None:
    pf = read_pgn((game() + game(("Round", "2"))).replace("\n", "\r\n"))
    assert len(pf.games) == 2
    assert all("\r" not in v for g in pf.games for v in g.headers.values())


def test_f36_disambiguation_and_notation_variants_hash_the_same() -> None:
    a = read_pgn(game(moves="1. Ng1f3 d5 2. g3 Nbd7 3. Bg2 e5 4. 0-0 e4 5. Nfe1 Z0 1-0")).games[0]
    b = read_pgn(game(moves="1. Nf3 d5 2. g3 Nd7 3. Bg2 e5 4. O-O e4 5. Ne1 -- 1-0")).games[0]
    assert a.movetext_hash == b.movetext_hash
    c = read_pgn(game(moves="1. Nf3 d5 2. g3 Nd7 3. Bg2 e5 4. O-O e4 5. Ne1 Qd6 1-0")).games[0]
    assert c.movetext_hash != b.movetext_hash


def test_f36_annotations_do_not_change_the_hash() -> None:
    bare = read_pgn(game(moves=MOVES_20 + " 1-0")).games[0]
    annotated = read_pgn(
        game(
            moves="1. e4 {best by test} e5 (1... c5 2. Nf3) 2. Nf3 $1 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 "
            "6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7 {[%clk 0:10:00]} 1-0"
        )
    ).games[0]
    assert bare.movetext_hash == annotated.movetext_hash
    assert movetext_hash(movetext_tokens(MOVES_20)) == bare.movetext_hash


# ---- 37-42 degenerate files and tags ---------------------------------------------------------


def test_f37_movetext_without_tags() -> None:
    pf = read_pgn("1. e4 e5 2. Nf3 Nc6 1-0\n\n1. d4 d5 2. c4 0-1\n")
    assert pf.rejected_reason is None
    assert [(g.result, g.ply_count) for g in pf.games] == [("1-0", 4), ("0-1", 3)]
    assert all("players_unknown" in g.flags and g.white_ref is None for g in pf.games)


def test_f38_empty_text() -> None:
    for text in ("", "\n\n", "   "):
        pf = read_pgn(text)
        assert pf.games == [] and pf.n_errors == 0


@pytest.mark.parametrize(
    "text",
    [
        '<html><body><div class="rpbui">Error 500</div></body></html>',
        "undefined",
        "<p>1. e4 e5</p> <p>a1 b2 c3</p>",
    ],
)
def test_f39_not_pgn_is_rejected(text: str) -> None:
    pf = read_pgn(text)
    assert pf.rejected_reason and "not PGN" in pf.rejected_reason
    assert pf.games == [] and pf.players == []
    assert not looks_like_pgn(text)


def test_f40_placeholder_tags_are_unknown() -> None:
    pf = read_pgn(game(("Event", "---"), ("Date", "---"), ("White", "?"), ("Black", ""), ("TimeControl", "")))
    g = pf.games[0]
    assert pf.tournaments[0].name is None and g.game_date is None and g.time_control is None
    assert g.white_ref is None and g.black_ref is None and "players_unknown" in g.flags


def test_f41_result_tag_missing() -> None:
    text = (
        '[Event "E"]\n[White "A"]\n[Black "B"]\n\n1. e4 e5 0-1\n\n[Event "E"]\n[White "A"]\n[Black "B"]\n\n1. e4 e5\n'
    )
    pf = read_pgn(text)
    g0, g1 = pf.games
    assert (g0.result, g0.result_raw) == ("0-1", "0-1") and issues_of(pf, "result_from_marker")
    assert g1.result == "*" and "result_unknown" in g1.flags


def test_f42_loose_tag_syntax() -> None:
    text = '[Event\t"Open"]\n[Date "2018.10.11" ]\n[Round 3]\n[White  "A"]\n[Black "B\n[Result "1-0"]\n\n1. e4 1-0\n'
    pf = read_pgn(text)
    g = pf.games[0]
    assert g.headers["Event"] == "Open" and g.game_date == dt.date(2018, 10, 11)
    assert g.round == 3 and g.headers["White"] == "A" and g.headers["Black"] == "B"
    assert issues_of(pf, "tag_unterminated") and issues_of(pf, "tag_unquoted")


# ---- contract details --------------------------------------------------------------------


def test_round_board_and_tournament_fields() -> None:
    pf = read_pgn(
        game(("Round", "3.12"), ("WhiteTeam", "India"), ("WhiteFed", "ind"), ("EventDate", "2023.05.01"))
        + game(("Round", "5"), ("Date", "2023.05.09"), ("EventDate", "2023.05.01"))
    )
    g0, g1 = pf.games
    assert (g0.round, g0.board, g0.round_label) == (3, 12, "3.12")
    assert (g1.round, g1.board) == (5, None)
    (t,) = pf.tournaments
    assert (t.name, t.city, t.federation) == ("Test Open", "Paris FRA", "FRA")
    assert (t.start_date, t.end_date, t.rounds) == (dt.date(2023, 5, 1), dt.date(2023, 5, 9), 5)
    w = pf.players[0]
    assert (w.team, w.federation) == ("India", "IND")
    assert g0.white_score == Decimal(1) and g0.black_score == Decimal(0)


def test_lines_and_game_indexes() -> None:
    pf = read_pgn("\n" + game() + game(("Round", "2")))
    assert [(g.line, g.game_index) for g in pf.games] == [(2, 0), (12, 1)]


def test_looks_like_pgn() -> None:
    assert looks_like_pgn(game())
    assert looks_like_pgn("1. e4 e5 2. Nf3 Nc6 1-0")
    assert not looks_like_pgn("012 Some tournament\n001    1 m    Player")


# ---- never raises ----------------------------------------------------------------------------

_FUZZ_BASE = (
    game(("WhiteFideId", "1503014"), moves="1. e4 {c [%clk 0:01]} e5 (1... c5 2. Nf3) 2. Nf3 $1 Nc6 1-0")
    + game(("Result", "0-0"), moves="0-0")
    + game(("FEN", "8/8/8/8/8/8/8/K1k5 w - - 0 1"), ("SetUp", "1"), moves="1. Kb1 Kd2 *")
)
_FUZZ_PIECES = ["[", "]", "{", "}", "(", ")", '"', "\\", "\n", "\n\n", ";", "%", "$", "1-0", "0-0", "[Event ", "\ufeff"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_FUZZ_BASE)), st.sampled_from(_FUZZ_PIECES), st.booleans()), max_size=8))
def test_mutated_pgn_never_raises(edits: list[tuple[int, str, bool]]) -> None:
    text = _FUZZ_BASE
    for pos, piece, delete in edits:
        pos = min(pos, len(text))
        text = text[:pos] + text[pos + 3 :] if delete else text[:pos] + piece + text[pos:]
    for validate in (False, True):
        pf = read_pgn(text, validate_moves=validate)
        assert not [i for i in pf.issues if i.code == "reader_error"]
        refs = {p.ref for p in pf.players}
        assert all(r in refs for g in pf.games for r in (g.white_ref, g.black_ref) if r is not None)
        assert [g.game_index for g in pf.games] == sorted(g.game_index for g in pf.games)


def test_partial_event_date_does_not_set_the_start() -> None:
    pf = read_pgn(
        game(("EventDate", "2023.??.??"), ("Date", "2023.05.06"))
        + game(("EventDate", "2023.??.??"), ("Date", "2023.05.09"))
    )
    (t,) = pf.tournaments
    assert (t.start_date, t.end_date) == (dt.date(2023, 5, 6), dt.date(2023, 5, 9))


def test_move_offsets_name_the_same_moves_as_the_replay_on_real_files() -> None:
    """The illegal-move line comes from `san_offsets`; it must see the moves the replay sees."""

    from elopipe.read.pgn.movetext import san_offsets, san_words

    data = REPO.parent / "shared" / "data" / "pgn"
    n = 0
    for f in sorted(data.glob("*.pgn")):
        for mt in f.read_bytes().split(b"\n\n"):
            if mt.startswith(b"["):
                continue
            placed = san_offsets(mt)
            assert [w for w, _ in placed] == san_words(mt), (f.name, mt[:200])
            assert all(mt[o : o + len(w)] == w for w, o in placed)  # each offset points at its move
            n += 1
    assert n > 5_000


def test_variations_nested_fifty_thousand_deep_read_in_linear_time() -> None:
    # a hostile or broken file: each level used to cost a pass over the whole movetext
    n = 50_000
    pf = read_pgn(game(("Result", "1-0"), moves="1. e4 " + "(1. d4 " * n + ")" * n + " e5 2. Nf3 1-0"))
    assert pf.games[0].ply_count == 3 and not issues_of(pf, "unterminated_variation")
    pf = read_pgn(game(("Result", "1-0"), moves="1. e4 e5 " + "(1. d4 " * n + "1-0"))
    assert pf.games[0].ply_count == 2 and issues_of(pf, "unterminated_variation")


def test_many_unclosed_braces_read_in_linear_time() -> None:
    # every later `{` used to be tried to the end of the movetext: 500,000 of them took minutes
    pf = read_pgn(game(("Result", "1-0"), moves="1. e4 e5 " + "({ (1. d4 " * 100_000))
    assert pf.games[0].ply_count == 2 and issues_of(pf, "unterminated_comment")
