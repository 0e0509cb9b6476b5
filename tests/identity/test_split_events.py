"""One event held in several files is one event (issue 15, item 4): the parts are joined for the
rating, Rp and the crosstable, each game keeping its file; two events under one name stay apart.

The split is made from real files as TWIC cuts a long event into weekly files: the World Junior
Championship 2019 (wjun19.pgn: its first four rounds, a Swiss) as rounds 1-2 and rounds 3-4."""

from __future__ import annotations

import re
from pathlib import Path

from elopipe.ingest.driver import ingest_paths
from elopipe.publish.crosstable import crosstable
from elopipe.publish.reports import find_tournament
from elopipe.rating.run import rate
from elopipe.store.connect import open_reader, open_writer
from tests.helpers.paths import REPO
from tests.helpers.store_rows import db_rows

SAMPLE = REPO / "sample_pgn"
PGN = REPO.parent / "shared" / "data" / "pgn"


def _games(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [g for g in re.split(r"(?=^\[Event )", text, flags=re.M) if g.strip()]


def _round(game: str) -> int:
    return int(re.search(r'^\[Round "(\d+)', game, re.M).group(1))


def split_by_rounds(path: Path, last_of_first: int, folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    games = _games(path)
    first, second = folder / f"{path.stem}_week1.pgn", folder / f"{path.stem}_week2.pgn"
    first.write_text("".join(g for g in games if _round(g) <= last_of_first), encoding="utf-8")
    second.write_text("".join(g for g in games if _round(g) > last_of_first), encoding="utf-8")
    return first, second


def rated(db: Path, *files: Path) -> Path:
    for f in files:  # one file per ingest, as the weekly files arrive
        assert ingest_paths([f], db).exit_code == 0
    with open_writer(db) as con:
        rate(con, "fide")
    return db


PER_PLAYER = (
    "SELECT p.fide_id, tr.list_date, tr.n, tr.score, tr.ra, tr.rp, tr.change_x100 FROM tournament_ratings tr"
    " JOIN players p USING (player_id) WHERE tr.system = 'fide' ORDER BY 1, 2"
)
LISTS = (
    "SELECT p.fide_id, rl.list_date, rl.rating, rl.games FROM rating_lists rl JOIN players p USING (player_id)"
    " WHERE rl.system = 'fide' ORDER BY 1, 2"
)


def test_an_event_split_over_two_files_is_rated_and_reported_as_one(tmp_path: Path) -> None:
    week1, week2 = split_by_rounds(SAMPLE / "wjun19.pgn", 2, tmp_path / "twic")
    whole = rated(tmp_path / "whole.duckdb", SAMPLE / "wjun19.pgn")
    split = rated(tmp_path / "split.duckdb", week1, week2)
    parts = db_rows(split, "SELECT tournament_id, event_id, file_id FROM tournaments ORDER BY 1")
    assert len(parts) == 2 and {p[1] for p in parts} == {parts[0][0]} and parts[0][2] != parts[1][2]
    # each game keeps its file
    assert db_rows(split, "SELECT count(DISTINCT file_id), count(*) FROM games") == [(2, 181)]
    # one Ra, one Rp per player, as for the file that holds the whole event
    assert db_rows(split, PER_PLAYER) == db_rows(whole, PER_PLAYER)
    assert db_rows(split, "SELECT DISTINCT tournament_id FROM tournament_ratings") == [(parts[0][0],)]
    assert db_rows(split, LISTS) == db_rows(whole, LISTS)
    with open_reader(split) as con:
        event = find_tournament(con, str(parts[1][0]))  # the second part names the event
        rounds, table = crosstable(con, event)
    with open_reader(whole) as con:
        whole_rounds, whole_table = crosstable(con, find_tournament(con, "58th World Juniors 2019"))
    assert event == parts[0][0] and len(rounds) == len(whole_rounds) == 4
    assert table.equals(whole_table)


def test_the_parts_join_whatever_order_they_arrive_in(tmp_path: Path) -> None:
    week1, week2 = split_by_rounds(SAMPLE / "wjun19.pgn", 2, tmp_path / "twic")
    forward = rated(tmp_path / "forward.duckdb", week1, week2)
    backward = rated(tmp_path / "backward.duckdb", week2, week1)
    assert db_rows(backward, "SELECT count(*) FROM tournaments WHERE event_id IS NOT NULL") == [(2,)]
    assert db_rows(backward, PER_PLAYER) == db_rows(forward, PER_PLAYER)
    assert db_rows(backward, LISTS) == db_rows(forward, LISTS)


def test_two_events_under_one_name_on_the_same_days_stay_apart(tmp_path: Path) -> None:
    """Norway Chess 2022: the classical games and the armageddon games, same players, same
    place, same days, here under one name; their rounds repeat, so they are two events."""
    renamed = tmp_path / "armageddon.pgn"
    text = (PGN / "norway_chess_2022_armageddon.pgn").read_text(encoding="utf-8")
    renamed.write_text(text.replace("10th Norway Armageddon", "10th Norway Chess 2022"), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    for f in (PGN / "norway_chess_2022_classical.pgn", renamed):
        assert ingest_paths([f], db).exit_code == 0
    assert db_rows(db, "SELECT count(*), count(event_id) FROM tournaments") == [(2, 0)]


def test_a_playoff_at_another_rate_and_a_repeated_game_and_a_correction(tmp_path: Path) -> None:
    """Review cases: a part whose rate of play differs (a rapid playoff after a classical event)
    is another event; a second part that repeats one game of the first (dedup makes it one game)
    still continues the event; a correction that renames the part naming the event leaves no part
    pointing at a tournament that is gone."""
    week1, week2 = split_by_rounds(SAMPLE / "wjun19.pgn", 2, tmp_path / "twic")
    rapid = tmp_path / "playoff.pgn"
    rapid.write_text(week2.read_text(encoding="utf-8").replace("[Result ", '[TimeControl "900+10"]\n[Result '))
    db = tmp_path / "rapid.duckdb"
    for f in (week1, rapid):
        assert ingest_paths([f], db).exit_code == 0
    assert db_rows(db, "SELECT count(event_id) FROM tournaments") == [(0,)]

    repeated = tmp_path / "repeat" / "week2.pgn"
    repeated.parent.mkdir()
    repeated.write_text(_games(week1)[0] + week2.read_text(encoding="utf-8"), encoding="utf-8")
    db = tmp_path / "repeat.duckdb"
    for f in (week1, repeated):
        assert ingest_paths([f], db).exit_code == 0
    assert db_rows(db, "SELECT count(event_id) FROM tournaments") == [(2,)]

    db = tmp_path / "corrected.duckdb"
    for f in (week1, week2):
        assert ingest_paths([f], db).exit_code == 0
    week1.write_text(
        week1.read_text(encoding="utf-8").replace("58th World Juniors 2019", "58th World Juniors Delhi 2019")
    )
    assert ingest_paths([week1], db).exit_code == 0
    orphans = (
        "SELECT count(*) FROM tournaments WHERE event_id IS NOT NULL"
        " AND event_id NOT IN (SELECT tournament_id FROM tournaments)"
    )
    assert db_rows(db, orphans) == [(0,)]
