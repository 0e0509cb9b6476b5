"""A game dated to the year only (`2022.??.??`, read as 2022-01-01) in an event whose other games
give their day does not move the event's dates: the event's span, and so its list in force, its
Ro and its rules' era, come from the dates given to the day. On the real Norway Chess 2022 PGN
(May-June 2022) without its EventDate tags (as many sources write it): one game's date cut to
its year gave the event a start of 1 January, and its FIDE rules those of the January list."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.paths import SHARED_DATA

PGN = SHARED_DATA / "pgn" / "norway_chess_2022_classical.pgn"

pytestmark = pytest.mark.skipif(not PGN.exists(), reason="../shared/data is not available")


def _store(tmp_path: Path, name: str, text: str) -> tuple[list[tuple], list[tuple]]:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "norway.pgn").write_text(text, encoding="utf-8")
    db = folder / "s.duckdb"
    ingest_paths([folder / "norway.pgn"], db)
    with open_writer(db) as con:
        rate(con, "fide")
        events = con.execute("SELECT name, start_date, end_date FROM tournaments ORDER BY ALL").fetchall()
        lists = con.execute(
            "SELECT list_date, player_id, rating, games FROM rating_lists WHERE system = 'fide' ORDER BY ALL"
        ).fetchall()
    return events, lists


@pytest.mark.parametrize(("where", "partial"), [("first", "2022.??.??"), ("first", "2022.05.??")])
def test_a_game_dated_to_the_year_or_month_only_does_not_move_its_event(
    tmp_path: Path, where: str, partial: str
) -> None:
    text = re.sub(r'\[EventDate "[^"]*"\]\n', "", PGN.read_text(encoding="utf-8"))
    dates = list(re.finditer(r'\[Date "(\d{4}\.\d\d\.\d\d)"\]', text))
    assert len(dates) >= 40
    m = dates[0] if where == "first" else dates[-1]
    cut = text[: m.start(1)] + partial + text[m.end(1) :]
    events, lists = _store(tmp_path, "cut", cut)
    assert (events, lists) == _store(tmp_path, "whole", text)
    assert events[0][1:] == (dt.date(2022, 5, 31), dt.date(2022, 6, 10)) and lists
