"""One event's games in two sources, one of which dates every game by the event's start or end day.

Many PGN databases write the event's first (or last) day on every game. Such a source holds the
same games as the organiser's file, day by day, with dates more than a day apart: they are one
game each when the evidence is strong (`game_links.event_dated`: equal moves of at least
`EVENT_DATE_PLIES` plies, the same players and colours, main round and round label, one event
key, and the date of one row a day of play of the other's tournament). Built from the real Norway
Chess 2022 classical file (45 games, 43 plies or more), and the lists do not depend on the order
the files came in. A short game (a repeated quick draw is no proof alone) is one game when the two
tournaments' long games link that way, one row of its key facing one (`dedup.short_dated_pairs`:
a round robin's 30-ply draw, a knockout's two short games of one pair); without such a long game,
and events apart, two games.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb
import pytest

from elopipe.identity.event_sources import EVENT_DATE_PLIES
from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from tests.helpers.paths import SHARED_DATA

NORWAY = SHARED_DATA / "pgn" / "norway_chess_2022_classical.pgn"

needs_data = pytest.mark.skipif(not NORWAY.exists(), reason="../shared/data is not available")


def _redated(text: str, date: str) -> str:
    """`text` with every game's Date tag set to `date` (moves, players, rounds, event unchanged)."""
    return re.sub(r'^\[Date "[^"]*"\]', f'[Date "{date}"]', text, flags=re.M)


def _list(db: Path) -> list[tuple]:
    """The FIDE lists computed from the store: (list date, player's name key, rating, games, K,
    change), and the store's canonical game count."""
    con = duckdb.connect(str(db))
    try:
        rate(con, "fide")
        rows = con.execute(
            "SELECT r.list_date, p.name_key, r.rating, r.games, r.k, r.change FROM rating_lists r"
            " JOIN players p USING (player_id) WHERE r.system = 'fide' ORDER BY ALL"
        ).fetchall()
        canonical = con.execute("SELECT count(*) FROM canonical_games").fetchone()
    finally:
        con.close()
    return [canonical, *rows]


@needs_data
@pytest.mark.parametrize("date", ["2022.05.31", "2022.06.10"], ids=["start_day", "end_day"])
def test_a_source_dating_every_game_by_one_event_day_counts_each_game_once(tmp_path: Path, date: str) -> None:
    text = NORWAY.read_text(encoding="utf-8")
    other = tmp_path / "in" / "norway_one_day.pgn"
    other.parent.mkdir()
    other.write_text(_redated(text, date), encoding="utf-8")
    alone = tmp_path / "alone.duckdb"
    ingest_paths([NORWAY], alone)
    expected = _list(alone)
    assert expected[0] == (45,)
    lists = []
    for name, files in (("fwd", [NORWAY, other]), ("rev", [other, NORWAY])):
        db = tmp_path / f"{name}.duckdb"
        for f in files:  # one file per batch: the second meets the first in the store
            ingest_paths([f], db)
        con = duckdb.connect(str(db), read_only=True)
        rules = dict(
            con.execute("SELECT match_rule, count(*) FROM game_sources WHERE role = 'duplicate' GROUP BY 1").fetchall()
        )
        # the canonical rows are the day-by-day source's: its dates are the games' days
        dates = con.execute("SELECT count(DISTINCT game_date), count(*) FROM canonical_games").fetchone()
        con.close()
        assert sum(rules.values()) == 45
        assert rules.get("round_players+hash+event_date", 0) >= 35
        assert dates == (9, 45)
        lists.append(_list(db))
    assert lists[0] == lists[1] == expected
    carlsen = [r for r in expected[1:] if r[1] == "carlsen magnus"]
    assert [r[3] for r in carlsen] == [9]


@needs_data
def test_both_files_in_one_batch_count_each_game_once(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    text = NORWAY.read_text(encoding="utf-8")
    (folder / "norway.pgn").write_text(text, encoding="utf-8")
    (folder / "norway_startdate.pgn").write_text(_redated(text, "2022.05.31"), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([folder], db)
    assert _list(db)[0] == (45,)


# a real line, cut where needed: (plies, movetext)
_MOVES = (
    "1. e4 e5 2. Nf3 Nc6 3. Bb5 Nf6 4. O-O Nxe4 5. Re1 Nd6 6. Nxe5 Be7 7. Bf1 Nxe5 8. Rxe5 O-O 9. d4 Bf6"
    " 10. Re1 Re8 11. c3 Rxe1 12. Qxe1 Ne8 13. Bf4 d6 14. Nd2 Bf5 15. Qe3 Nf6 16. Nf3 h6 17. h3 Qd7"
    " 18. Bd3 Bxd3 19. Qxd3 Re8 20. Re1 Rxe1+ 21. Nxe1 Qe6 22. Nf3 Qe4 23. Qxe4 Nxe4 24. Kf1 Kf8"
    " 25. Ke2 Ke7"
)


def _line(plies: int) -> str:
    words = [w for w in _MOVES.split() if not w.endswith(".")][:plies]
    out = []
    for i, w in enumerate(words):
        out += [f"{i // 2 + 1}.", w] if i % 2 == 0 else [w]
    return " ".join(out)


def _game(
    event: str, date: str, rnd: str, white: str, black: str, plies: int, result: str = "1/2-1/2", last: str = ""
) -> str:
    """One game of `_line(plies)`; `last`: another last move (another game of as many plies)."""
    moves = f"{_line(plies).rsplit(' ', 1)[0]} {last}" if last else _line(plies)
    return (
        f'[Event "{event}"]\n[Site "Linnikvik"]\n[Date "{date}"]\n[Round "{rnd}"]\n[White "{white}"]\n'
        f'[Black "{black}"]\n[Result "{result}"]\n[WhiteElo "2100"]\n[BlackElo "2050"]\n\n{moves} {result}\n\n'
    )


def _filler(event: str, days: list[str], names: str = "Filler", plies: int = 60, last: str = "") -> str:
    """Games of other players on `days` (rounds 1..), so that each event has its days of play."""
    return "".join(
        _game(event, d, str(r), f"{names}{r}, A", f"{names}{r}, B", plies, last=last)
        for r, d in enumerate(days, start=1)
    )


def _meier_games(
    tmp_path: Path,
    first: tuple[list[str], str],
    second: tuple[list[str], str],
    plies: int,
    fillers: tuple[dict[str, Any], dict[str, Any]] = ({}, {}),
) -> int:
    """Canonical games of 'Meier, Georg' - 'Berg, Ola' (round 3, drawn, the first `plies` plies of
    `_MOVES` in both) after two files of 'Linnikvik Open' are ingested one after the other: each
    (its filler games' days, that game's day); `fillers`: `_filler`'s options in each."""
    a, b = tmp_path / "a.pgn", tmp_path / "b.pgn"
    for f, (days, day), options in zip((a, b), (first, second), fillers, strict=True):
        game = _game("Linnikvik Open", day, "3", "Meier, Georg", "Berg, Ola", plies)
        f.write_text(_filler("Linnikvik Open", days, **options) + game, encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([a], db)
    ingest_paths([b], db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        n = con.execute(
            "SELECT count(*) FROM canonical_games g JOIN players w ON w.player_id = g.white_id"
            " WHERE w.name_key LIKE '%meier%'"
        ).fetchone()
    finally:
        con.close()
    assert n is not None
    return int(n[0])


_DAYS = ["2022.05.10", "2022.05.11", "2022.05.13"]


def test_the_same_short_draw_in_events_a_year_apart_stays_two_games(tmp_path: Path) -> None:
    # a quick repetition of the same two players, same colours and round, the same event name
    # one year later: two games
    days23 = ["2023.05.10", "2023.05.11", "2023.05.12"]
    assert _meier_games(tmp_path, (_DAYS, "2022.05.13"), (days23, "2023.05.10"), 24) == 2


def test_the_same_short_draw_in_a_source_dated_by_the_start_day_is_one_game_when_the_long_games_link(
    tmp_path: Path,
) -> None:
    # below `EVENT_DATE_PLIES`, equal moves three days apart are no proof alone (a prepared
    # repetition recurs between the same two players); here the fillers' long games of round 3
    # link by the event's day too, so the two files are one event from two sources and the draw
    # of that event is one game (it counted twice before)
    start = (["2022.05.10"] * 3, "2022.05.10")
    assert _meier_games(tmp_path, (_DAYS, "2022.05.13"), start, EVENT_DATE_PLIES - 10) == 1


def test_the_same_long_game_in_the_next_event_of_the_same_name_stays_two_games(tmp_path: Path) -> None:
    # the next weekend's event: its day is no day of play of the first, and the first's game day
    # is not the second's: a prepared line repeated, two games
    assert (
        _meier_games(tmp_path, (_DAYS[:2] + ["2022.05.12"], "2022.05.12"), (["2022.05.14"] * 3, "2022.05.14"), 50) == 2
    )


def test_the_same_long_game_in_a_source_dated_by_the_start_day_is_one_game(tmp_path: Path) -> None:
    assert _meier_games(tmp_path, (_DAYS, "2022.05.13"), (["2022.05.10"] * 3, "2022.05.10"), 50) == 1


# The same short draw of one pair, round and colours in two events of one name whose days overlap,
# the second dated by its start day, with no long game linked by the event's day between them: two
# games. The second's other games are another field (`names`), both files' are short too (`plies`:
# no long game to link), or the second has the same pairings with other long moves (`last`).
@pytest.mark.parametrize(
    "fillers",
    [
        ({}, {"names": "Other"}),
        ({"plies": EVENT_DATE_PLIES - 16}, {"plies": EVENT_DATE_PLIES - 16}),
        ({}, {"last": "Kg8"}),
    ],
    ids=["other_players", "short_games_only", "other_long_moves"],
)
def test_the_same_short_draw_without_a_long_game_linked_by_the_event_day_stays_two_games(
    tmp_path: Path, fillers: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    start = (["2022.05.10"] * 3, "2022.05.10")
    assert _meier_games(tmp_path, (_DAYS, "2022.05.13"), start, 24, fillers) == 2


# A 4-player round robin played one round every other day (Carlsen's three games: two long, that
# of round 2 a 30-ply draw), as (round label, day index in `_PLAY_DAYS`, White, Black, result,
# plies, last move)
_PLAYERS = {
    "Carlsen, Magnus": ("1503014", 2864),
    "Nepomniachtchi, Ian": ("4168119", 2766),
    "Ding, Liren": ("8603677", 2806),
    "Firouzja, Alireza": ("12573981", 2793),
}
_ROUND_ROBIN = [
    ("1", 0, "Carlsen, Magnus", "Nepomniachtchi, Ian", "1-0", 50, "Kf8"),
    ("1", 0, "Ding, Liren", "Firouzja, Alireza", "1/2-1/2", 50, "Ke8"),
    ("2", 1, "Nepomniachtchi, Ian", "Ding, Liren", "0-1", 50, "g5"),
    ("2", 1, "Firouzja, Alireza", "Carlsen, Magnus", "1/2-1/2", 30, ""),
    ("3", 2, "Carlsen, Magnus", "Ding, Liren", "1-0", 50, "a6"),
    ("3", 2, "Firouzja, Alireza", "Nepomniachtchi, Ian", "1-0", 50, "h5"),
]
_PLAY_DAYS = ["2022.05.10", "2022.05.12", "2022.05.14", "2022.05.16"]


def _event_pgn(games: list[tuple[str, int, str, str, str, int, str]], dated: str | None) -> str:
    """The games of 'Linnikvik Masters 2022', each dated by its day of play (`dated` None) or every
    one by `dated` (the event's start or end day, as many PGN databases write them)."""
    out = []
    for label, day, white, black, result, plies, last in games:
        head = (
            f'[Event "Linnikvik Masters 2022"]\n[Site "Linnikvik NOR"]\n[Date "{dated or _PLAY_DAYS[day]}"]\n'
            f'[Round "{label}"]\n[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n'
            f'[WhiteElo "{_PLAYERS[white][1]}"]\n[BlackElo "{_PLAYERS[black][1]}"]\n'
            f'[WhiteFideId "{_PLAYERS[white][0]}"]\n[BlackFideId "{_PLAYERS[black][0]}"]\n[TimeControl "5400+30"]\n\n'
        )
        moves = f"{_line(plies).rsplit(' ', 1)[0]} {last}" if last else _line(plies)
        out.append(f"{head}{moves} {result}\n\n")
    return "".join(out)


_SYSTEMS = ("fide", "ffe", "elo", "glicko2")


def _lists(db: Path) -> list[tuple]:
    """Every list of the four systems (system, list date, player's name key, rating, exact rating,
    RD, games, K, change), after the store's canonical game count and its canonical games' (date,
    White, Black, result)."""
    con = duckdb.connect(str(db))
    try:
        for system in _SYSTEMS:
            rate(con, system)
        rows = con.execute(
            "SELECT r.system, r.list_date, p.name_key, r.rating, r.rating_exact, r.rd, r.games, r.k, r.change"
            " FROM rating_lists r JOIN players p USING (player_id) ORDER BY ALL"
        ).fetchall()
        games = con.execute(
            "SELECT g.game_date, w.name_key, b.name_key, g.result FROM canonical_games g"
            " JOIN players w ON w.player_id = g.white_id JOIN players b ON b.player_id = g.black_id ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()
    return [len(games), *games, *rows]


def _two_sources(tmp_path: Path, games: list[tuple[str, int, str, str, str, int, str]], dated: str) -> list[list]:
    """The lists (`_lists`) of the day-by-day source alone, then of both sources loaded one after
    the other in each order (one file per batch: the second meets the first in the store)."""
    folder = tmp_path / "in"
    folder.mkdir()
    by_day, by_event_day = folder / "by_day.pgn", folder / "by_event_day.pgn"
    by_day.write_text(_event_pgn(games, None), encoding="utf-8")
    by_event_day.write_text(_event_pgn(games, dated), encoding="utf-8")
    out = []
    for name, files in (("alone", [by_day]), ("fwd", [by_day, by_event_day]), ("rev", [by_event_day, by_day])):
        db = tmp_path / f"{name}.duckdb"
        for f in files:
            ingest_paths([f], db)
        out.append(_lists(db))
    return out


@pytest.mark.parametrize("dated", ["2022.05.10", "2022.05.14"], ids=["start_day", "end_day"])
def test_a_short_draw_of_an_event_from_two_sources_counts_once(tmp_path: Path, dated: str) -> None:
    # the 30-ply draw of round 2 lies two days from the other source's date (the first or last
    # day): no proof alone, but the two files' long games of another round link by the event's
    # day, so the draw is one game (it counted twice: Carlsen 4 games, rated twice on one draw)
    alone, fwd, rev = _two_sources(tmp_path, _ROUND_ROBIN, dated)
    assert alone[0] == 6
    assert fwd == rev == alone
    carlsen = {r[0]: r[6] for r in alone[1:] if len(r) == 9 and r[2] == "carlsen magnus"}
    assert carlsen == dict.fromkeys(_SYSTEMS, 3)  # one list each, 3 games


# A knockout match of two-game rounds, 1.1 and 2.2 long, 1.2 and 2.1 the same 24-ply repetition
# with the colours swapped: each row the only one of its players, round label and moves in its
# source, so each links to its own twin (two games, not one)
_KNOCKOUT = [
    ("1.1", 0, "Carlsen, Magnus", "Ding, Liren", "1-0", 50, "Kf8"),
    ("1.2", 1, "Ding, Liren", "Carlsen, Magnus", "1/2-1/2", 24, ""),
    ("2.1", 2, "Carlsen, Magnus", "Ding, Liren", "1/2-1/2", 24, ""),
    ("2.2", 3, "Ding, Liren", "Carlsen, Magnus", "0-1", 50, "g5"),
]


def test_the_short_games_of_a_knockout_link_each_to_its_own_twin(tmp_path: Path) -> None:
    alone, fwd, rev = _two_sources(tmp_path, _KNOCKOUT, "2022.05.16")
    assert alone[0] == 4
    assert fwd == rev == alone


def test_a_short_draw_written_twice_in_one_source_links_to_neither_row_of_the_other(tmp_path: Path) -> None:
    # the start-dated source holds the round-2 draw twice (two rows of one key): which of them is
    # the day-by-day source's game is no question one link can answer, so none is made (the two
    # rows are one game of their file, `same_file_hash`; the draw counts twice, as before)
    folder = tmp_path / "in"
    folder.mkdir()
    by_day, by_event_day = folder / "by_day.pgn", folder / "by_event_day.pgn"
    by_day.write_text(_event_pgn(_ROUND_ROBIN, None), encoding="utf-8")
    by_event_day.write_text(_event_pgn([*_ROUND_ROBIN, _ROUND_ROBIN[3]], "2022.05.10"), encoding="utf-8")
    counts = []
    for name, files in (("fwd", [by_day, by_event_day]), ("rev", [by_event_day, by_day])):
        db = tmp_path / f"{name}.duckdb"
        for f in files:
            ingest_paths([f], db)
        con = duckdb.connect(str(db), read_only=True)
        counts.append(con.execute("SELECT count(*) FROM canonical_games").fetchone())
        rules = con.execute("SELECT count(*) FROM game_sources WHERE match_rule LIKE '%+short'").fetchone()
        con.close()
        assert rules == (0,)
    assert counts == [(7,), (7,)]
