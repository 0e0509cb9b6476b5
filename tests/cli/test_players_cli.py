"""`elopipe players merge|split|suspects`: the messages an officer reads (issue 17): whether a
re-rate is needed, both spellings and the evidence of a suspect, no Python values."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.paths import REPO, SHARED_DATA

CANDIDATES = REPO / "sample_pgn" / "fide_candidates_2022_madrid_spain.pgn"
IRISH = REPO / "sample_pgn" / "irl_irish_intermediate_champs_2011_latin1_crlf.trf"


@pytest.fixture(scope="module")
def _rated_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from elopipe.ingest.driver import ingest_paths
    from elopipe.rating.run import rate

    db = tmp_path_factory.mktemp("rated") / "s.duckdb"
    ingest_paths([CANDIDATES, IRISH], db)
    con = duckdb.connect(str(db))
    rate(con, "fide")
    con.close()
    return db


@pytest.fixture
def rated_store(_rated_once: Path, tmp_path: Path) -> Path:
    """Two events (Candidates 2022, Irish 2011) ingested and rated for FIDE: a copy of the
    module's store for each test, which may change it."""
    db = tmp_path / "s.duckdb"
    shutil.copyfile(_rated_once, db)
    return db


def _query(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(db))
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def _pid(db: Path, name: str) -> int:
    return _query(db, "SELECT player_id FROM players WHERE name = ?", [name])[0][0]


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, " ".join(res.output.split())


def _first_rated_list(db: Path, pid: int) -> str:
    return str(_query(db, "SELECT min(list_date) FROM rating_changes WHERE player_id = ?", [pid])[0][0])


def test_merge_and_split_say_whether_a_re_rate_is_needed(rated_store: Path) -> None:
    db = str(rated_store)
    firouzja, crichton = _pid(rated_store, "Firouzja,Alireza"), _pid(rated_store, "Crichton, Martin")
    first = _first_rated_list(rated_store, firouzja)
    rated = _query(rated_store, "SELECT count(DISTINCT game_id) FROM rating_changes WHERE player_id = ?", [firouzja])
    code, out = _run("players", "merge", str(crichton), str(firouzja), "--reason", "test", "--db", db)
    assert code == 0, out
    assert f"re-rate needed: fide lists from {first} change ({rated[0][0]} rated games moved);" in out
    assert f"run `elopipe rate --system fide --db {db}`" in out  # the store it was given, not the default
    # the split takes the Candidates games back to a new player: still not the player they were
    # rated with, so the lists still differ until a re-rate
    tid = _query(rated_store, "SELECT tournament_id FROM tournaments WHERE name LIKE '%Candidates%'")[0][0]
    code, out = _run("players", "split", str(crichton), "--tournament", str(tid), "--reason", "undo", "--db", db)
    assert code == 0, out
    assert f"re-rate needed: fide lists from {first} change" in out


def test_a_decision_moving_no_rated_game_says_no_re_rate(rated_store: Path) -> None:
    con = duckdb.connect(str(rated_store))
    con.execute(
        "INSERT INTO players (player_id, name, name_key)"
        " VALUES (nextval('player_id_seq'), 'Listed, Only', 'listed only')"
    )
    con.close()
    code, out = _run(
        "players", "merge", str(_pid(rated_store, "Crichton, Martin")), str(_pid(rated_store, "Listed, Only")),
        "--reason", "same", "--db", str(rated_store),
    )  # fmt: skip
    assert code == 0, out
    assert out.endswith("no re-rate needed: no rated game of these players moved")


def test_split_by_a_name_no_entry_has_lists_the_spellings(rated_store: Path) -> None:
    duda = _pid(rated_store, "Duda,J")
    code, out = _run("players", "split", str(duda), "--name", "Somebody", "--reason", "x", "--db", str(rated_store))
    assert code == 1
    assert out == (
        f"elopipe players split: error: no tournament entry of player {duda} is written 'Somebody';"
        " its entries are written 'Duda,J'"
    )


def test_suspects_show_both_spellings_and_no_python_values(rated_store: Path) -> None:
    db = str(rated_store)
    con = duckdb.connect(db)
    # a second 'Crichton, Martin' with the same birth year, and a weak link of Duda's entry
    con.execute(
        "INSERT INTO players (player_id, name, name_key, birth_year) SELECT nextval('player_id_seq'), name,"
        " name_key, 1970 FROM players WHERE name = 'Crichton, Martin'"
    )
    con.execute("UPDATE players SET birth_year = 1970 WHERE name = 'Crichton, Martin'")
    con.execute("UPDATE player_aliases SET confidence = 0.5, match_rule = 'name' WHERE name_as_written = 'Duda,J'")
    con.execute(
        "INSERT INTO player_aliases (player_id, name_as_written, name_key, tournament_id, match_rule, confidence)"
        " SELECT player_id, 'Duda, Jan-Krzysztof', 'duda jan krzysztof', NULL, 'new', 1.0 FROM players"
        " WHERE name = 'Duda,J'"
    )
    con.close()
    duda = _pid(rated_store, "Duda,J")
    res = CliRunner().invoke(app, ["players", "suspects", "--db", db])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "None" not in out and "[" not in out
    assert "both written 'Crichton, Martin'; born 1970 on both" in out
    assert (
        f"entry written 'Duda,J' linked to player {duda}, written 'Duda, Jan-Krzysztof' elsewhere;"
        " rule name (confidence 0.5)" in out
    )
    # one player: the entry as written against his other spellings (never a blank player_b)
    assert f"│ {duda} │ Duda,J │ {duda} │ Duda, Jan-Krzysztof │ weak_link │" in out
    # --weaker-than C adds the links below C: the 0.5 link is listed under 0.6, not under 0.4
    res = CliRunner().invoke(app, ["players", "suspects", "--db", db, "--weaker-than", "0.4"])
    assert res.exit_code == 0, res.output
    assert "weak_link" not in res.output and "Crichton, Martin" in res.output
    for odd in ("nan", "1.5", "-1"):  # NaN and values beyond 1 listed every player against himself
        res = CliRunner().invoke(app, ["players", "suspects", "--db", db, "--weaker-than", odd])
        assert res.exit_code == 2, (odd, res.output)


GREEK = REPO / "sample_pgn" / "gre_friendship_cup_2024_team_swiss_greek_utf8.trf"


def test_a_suspect_pair_a_merge_would_refuse_says_so(tmp_path: Path) -> None:
    """The Greek TRF writes FIDE ID 42143365 on two start ranks (54 'Meletaki,Angeliki', 127
    'Meletaki,Aggeliki'): two players. The suspect row says that a merge is refused and which
    file to check, and the merge is indeed refused."""
    from elopipe.ingest.driver import ingest_paths

    db = tmp_path / "s.duckdb"
    ingest_paths([GREEK], db)
    a, b = _pid(db, "Meletaki,Angeliki"), _pid(db, "Meletaki,Aggeliki")
    code, out = _run("players", "suspects", "--db", str(db))
    assert code == 0, out
    assert f"│ {a} │ Meletaki,Angeliki │ {b} │ Meletaki,Aggeliki │ same_fide_id │" in out
    tid = _query(db, "SELECT tournament_id FROM tournament_players WHERE player_id = ?", [a])[0][0]
    assert f"both have an entry in tournament {tid} (" in out
    assert f"start ranks 54 and 127: a merge is refused, check the file {GREEK.name}" in out
    code, out = _run("players", "merge", str(a), str(b), "--reason", "x", "--db", str(db))
    assert code == 1 and f"both have an entry in tournament {tid}" in out


def test_a_merge_of_two_entries_of_one_tournament_is_refused_and_loses_nothing(rated_store: Path) -> None:
    duda, rapport = _pid(rated_store, "Duda,J"), _pid(rated_store, "Rapport,R")
    entries = _query(rated_store, "SELECT count(*) FROM tournament_players")
    code, out = _run("players", "merge", str(duda), str(rapport), "--reason", "x", "--db", str(rated_store))
    assert code == 1
    assert out.startswith(
        f"elopipe players merge: error: players {duda} and {rapport} both have an entry in tournament "
    )
    assert out.endswith("two entries of one tournament are two people; not merged")
    assert _query(rated_store, "SELECT count(*) FROM tournament_players") == entries


def test_split_by_name_after_a_merge_takes_the_merged_spelling(rated_store: Path) -> None:
    db = str(rated_store)
    firouzja, crichton = _pid(rated_store, "Firouzja,Alireza"), _pid(rated_store, "Crichton, Martin")
    games = "SELECT count(*) FROM games WHERE white_id = ? OR black_id = ?"
    before = _query(rated_store, games, [firouzja, firouzja])
    code, out = _run("players", "merge", str(crichton), str(firouzja), "--reason", "test", "--db", db)
    assert code == 0, out
    code, out = _run("players", "split", str(crichton), "--name", "Firouzja,Alireza", "--reason", "undo", "--db", db)
    assert code == 0, out
    assert out.startswith(f"split from player {crichton}: new player ") and "{" not in out
    new = int(out.split("new player ")[1].split()[0])
    assert _query(rated_store, games, [new, new]) == before  # every game of the merged spelling


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["merge", "1", "1", "--reason", "same"],
            "elopipe players merge: error: cannot merge player 1 into itself: give two player ids",
        ),
        (["merge", "1", "2", "--reason", "   "], "elopipe players merge: error: --reason must say why"),
        (["split", "1", "--reason", "two people"], "elopipe players split: error: split needs --name or --tournament"),
        (["split", "1", "--name", "X", "--reason", ""], "elopipe players split: error: --reason must say why"),
    ],
)
def test_a_decision_that_cannot_be_made_is_a_one_line_usage_error(tmp_path: Path, args: list[str], words: str) -> None:
    db = tmp_path / "s.duckdb"
    code, out = _run("players", *args, "--db", str(db))
    assert code == 2 and out.startswith(words), out
    assert not db.exists()  # refused before the store is opened


def test_a_split_that_would_move_every_entry_is_refused(rated_store: Path) -> None:
    # the new player took every entry and the old one kept only the FIDE ID, to which the next file
    # giving that ID would link
    db = str(rated_store)
    firouzja = _pid(rated_store, "Firouzja,Alireza")
    entries = "SELECT count(*) FROM tournament_players WHERE player_id = ?"
    before = _query(rated_store, entries, [firouzja])
    code, out = _run("players", "split", str(firouzja), "--name", "Firouzja, Alireza", "--reason", "x", "--db", db)
    assert code == 1, out
    assert f"the split would move every tournament entry of player {firouzja} (1): nothing would stay" in out
    assert _query(rated_store, entries, [firouzja]) == before
    assert _query(rated_store, "SELECT count(*) FROM player_merges") == [(0,)]


IRISH_LEAGUE = [
    SHARED_DATA / "trf" / n
    for n in (
        "irl_armstrong_cup_2010_11_team_league_013.trf",
        "irl_bunratty_major_2011_crlf.trf",
        "irl_bunratty_minor_2011_crlf_103players.trf",
        "irl_gonzaga_classic_2008_fide_ids.trf",
        "irl_galway_major_2011_partial_birthdates.trf",
    )
]


def test_suspects_say_how_many_more_and_pair_no_player_with_himself(tmp_path: Path) -> None:
    """Real Irish TRFs: players met in several events are linked by name alone. A weak link whose
    spelling another entry of the player writes is that player with himself: not listed. The
    list says how many rows --limit left out."""
    from elopipe.identity.suspects import suspects
    from elopipe.ingest.driver import ingest_paths
    from elopipe.read.names import name_key

    db = tmp_path / "s.duckdb"
    ingest_paths(IRISH_LEAGUE, db)
    # links weaker than the default 0.6, which the list used to show as the player against himself
    assert _query(db, "SELECT count(*) FROM player_aliases WHERE confidence < 0.6")[0][0] > 0
    con = duckdb.connect(str(db), read_only=True)
    rows = suspects(con)
    con.close()
    for r in rows:
        if r["reason"] != "weak_link":
            continue
        spellings = {name_key(s) for s in r["name_b"].split(" / ")}
        # the entry's name against another name, or a fact both sides know and disagree on
        assert name_key(r["name_a"]) not in spellings or re.search(
            r"(born|federation|FIDE ID) \S+ / (?!unknown)", r["evidence"]
        ), r
    assert len(rows) > 1
    code, out = _run("players", "suspects", "--limit", "1", "--db", str(db))
    assert code == 0, out
    assert f"{len(rows)} suspects (1 shown)" in out
    assert out.endswith(f"… {len(rows) - 1} more (--limit 0 shows them all)")
