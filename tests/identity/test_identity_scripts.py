"""Names in every script are identities of their own; names without letters identify nobody."""

from pathlib import Path

import duckdb

from elopipe.ingest.driver import ingest_paths
from elopipe.read.names import name_key


def test_name_keys_keep_non_latin_letters():
    assert name_key("王皓") == "王皓"
    assert name_key("Иванов, Иван") == name_key("Иван Иванов") == "иван иванов"
    assert name_key("כהן") != name_key("لوي")
    assert name_key("?") == name_key("-") == ""


def _pgn(games: list[tuple[str, str, str]]) -> str:
    return "\n".join(
        f'[Event "{ev}"]\n[Site "X"]\n[Date "2023.05.0{i + 1}"]\n[Round "{i + 1}"]\n'
        f'[White "{w}"]\n[Black "{b}"]\n[Result "1-0"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n'
        for i, (ev, w, b) in enumerate(games)
    )


def test_non_latin_players_are_not_merged_into_one(tmp_path: Path):
    (tmp_path / "a.pgn").write_text(
        _pgn([("Beijing", "王皓", "丁立人"), ("Beijing", "李超", "卜祥志")]), encoding="utf-8"
    )
    (tmp_path / "b.pgn").write_text(
        _pgn([("Moscow", "Иванов, Иван", "כהן"), ("Moscow", "لوي", "Петров")]), encoding="utf-8"
    )
    db = tmp_path / "s.duckdb"
    ingest_paths([tmp_path], db)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM players WHERE merged_into IS NULL").fetchone()[0] == 8
    assert con.execute("SELECT count(*) FROM games WHERE white_id = black_id").fetchone()[0] == 0
    con.close()


def test_the_same_non_latin_player_in_two_events_is_one_person(tmp_path: Path):
    (tmp_path / "a.pgn").write_text(_pgn([("Moscow A", "Иванов, Иван", "Петров, Пётр")]), encoding="utf-8")
    (tmp_path / "b.pgn").write_text(_pgn([("Moscow B", "Иван Иванов", "Сидоров, Сидор")]), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([tmp_path], db)
    con = duckdb.connect(str(db), read_only=True)
    ids = con.execute("SELECT DISTINCT white_id FROM canonical_games").fetchall()
    con.close()
    assert len(ids) == 1
