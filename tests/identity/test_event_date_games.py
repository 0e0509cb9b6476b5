"""One event's games in two sources, one of which dates every game by the event's start or end day.

Many PGN databases write the event's first (or last) day on every game. Such a source holds the
same games as the organiser's file, day by day, with dates more than a day apart: they are one
game each when the evidence is strong (`game_links.event_dated`: equal moves of at least
`EVENT_DATE_PLIES` plies, the same players and colours, main round and round label, one event
key, and the date of one row a day of play of the other's tournament). Built from the real Norway
Chess 2022 classical file (45 games, 43 plies or more), and the lists do not depend on the order
the files came in. Short games and events apart stay two games: a repeated quick draw is no proof.
"""

from __future__ import annotations

import re
from pathlib import Path

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


def _game(event: str, date: str, rnd: str, white: str, black: str, plies: int) -> str:
    return (
        f'[Event "{event}"]\n[Site "Linnikvik"]\n[Date "{date}"]\n[Round "{rnd}"]\n[White "{white}"]\n'
        f'[Black "{black}"]\n[Result "1/2-1/2"]\n[WhiteElo "2100"]\n[BlackElo "2050"]\n\n{_line(plies)} 1/2-1/2\n\n'
    )


def _filler(event: str, days: list[str]) -> str:
    """Games of other players on `days` (rounds 1..), so that each event has its days of play."""
    return "".join(_game(event, d, str(r), f"Filler{r}, A", f"Filler{r}, B", 60) for r, d in enumerate(days, start=1))


def _meier_games(tmp_path: Path, first: tuple[list[str], str], second: tuple[list[str], str], plies: int) -> int:
    """Canonical games of 'Meier, Georg' - 'Berg, Ola' (round 3, drawn, the first `plies` plies of
    `_MOVES` in both) after two files of 'Linnikvik Open' are ingested one after the other: each
    (its filler games' days, that game's day)."""
    a, b = tmp_path / "a.pgn", tmp_path / "b.pgn"
    for f, (days, day) in ((a, first), (b, second)):
        game = _game("Linnikvik Open", day, "3", "Meier, Georg", "Berg, Ola", plies)
        f.write_text(_filler("Linnikvik Open", days) + game, encoding="utf-8")
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


def test_the_same_short_draw_in_a_source_dated_by_the_start_day_stays_two_games(tmp_path: Path) -> None:
    # below `EVENT_DATE_PLIES`, equal moves three days apart are no proof: a prepared repetition
    # recurs between the same two players (the cost: such a game of a start-dated source counts twice)
    start = (["2022.05.10"] * 3, "2022.05.10")
    assert _meier_games(tmp_path, (_DAYS, "2022.05.13"), start, EVENT_DATE_PLIES - 10) == 2


def test_the_same_long_game_in_the_next_event_of_the_same_name_stays_two_games(tmp_path: Path) -> None:
    # the next weekend's event: its day is no day of play of the first, and the first's game day
    # is not the second's: a prepared line repeated, two games
    assert (
        _meier_games(tmp_path, (_DAYS[:2] + ["2022.05.12"], "2022.05.12"), (["2022.05.14"] * 3, "2022.05.14"), 50) == 2
    )


def test_the_same_long_game_in_a_source_dated_by_the_start_day_is_one_game(tmp_path: Path) -> None:
    assert _meier_games(tmp_path, (_DAYS, "2022.05.13"), (["2022.05.10"] * 3, "2022.05.10"), 50) == 1
