"""`--system elo --period game` plays the games of one day in an order the files decide, not the
ingestion order (game ids follow it): the same files ingested in either order give the same lists."""

from __future__ import annotations

from pathlib import Path

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.store_rows import db_rows

_GAME = """[Event "{event}"]
[Site "Cork"]
[Date "2024.03.03"]
[Round "1"]
[White "{white}"]
[Black "{black}"]
[Result "1-0"]
[WhiteElo "{welo}"]
[BlackElo "{belo}"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0
"""


def _files(tmp_path: Path) -> list[Path]:
    """Two events of one day: Alpha, rated 2000, beats a 2200 in one and loses to an 1800 in the
    other. Played in either order, the two results leave Alpha 0.6 apart (1999.7 or 2000.3)."""
    spring = tmp_path / "spring.pgn"
    spring.write_text(_GAME.format(event="Spring Open", white="Alpha, Anna", black="Beta, Bo", welo=2000, belo=2200))
    town = tmp_path / "town.pgn"
    town.write_text(_GAME.format(event="Town Open", white="Gamma, Gil", black="Alpha, Anna", welo=1800, belo=2000))
    return [spring, town]


def _lists(db: Path) -> list[tuple]:
    with open_writer(db) as con:
        rate(con, "elo", period="game")
    return db_rows(
        db,
        "SELECT l.list_date, p.name, l.rating_exact, l.games FROM rating_lists l "
        "JOIN players p USING (player_id) WHERE l.system = 'elo' ORDER BY 1, 2",
    )


def test_the_games_of_one_day_are_played_in_the_same_order_whatever_the_ingestion_order(tmp_path):
    spring, town = _files(tmp_path)
    one, other = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    for db, order in ((one, [spring, town]), (other, [town, spring])):
        for path in order:
            ingest_paths([path], db)
    lists = _lists(one)
    assert lists == _lists(other)
    alpha = [row for row in lists if row[1] == "Alpha, Anna"]
    assert alpha and alpha[-1][3] == 2  # one player, both games counted
