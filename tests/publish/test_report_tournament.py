"""Tournament performance reports: values straight from the store, game rows, crosstable."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.crosstable import crosstable
from elopipe.publish.report_tables import rich_table
from elopipe.publish.reports import (
    find_tournament,
    games_frame,
    match_tournament,
    performance_frame,
    write_report,
)
from tests.helpers.publish_store import FEB, TOURNAMENT_RATINGS, build_store
from tests.helpers.store_build import add_rows


@pytest.fixture
def con(tmp_path: Path):
    c = duckdb.connect(str(build_store(tmp_path / "s.duckdb")), read_only=True)
    yield c
    c.close()


def test_performance_rows_are_the_stored_values(con) -> None:
    perf = performance_frame(con, 1, "fide")
    assert perf["start_rank"].to_list() == [1, 2, 3, 4]
    for row, stored in zip(perf.iter_rows(named=True), TOURNAMENT_RATINGS, strict=True):
        pid, ro, n, score, ra, we, w_we, k, x100, rp, unrated, ru = stored
        assert (row["player_id"], row["ro"], row["n"], row["score"], row["ra"]) == (
            pid,
            ro,
            n,
            score,
            ra,
        )
        assert (row["we"], row["w_we"], row["k"], row["rp"], row["unrated"]) == (
            we,
            w_we,
            k,
            rp,
            unrated,
        )
        assert row["k_w_we"] == (None if x100 is None else Decimal(x100) / 100)
        assert row["ru_provisional"] == ru
    assert perf["change_rounded"].to_list() == [-4, -46, 54, None]
    assert perf.filter(pl.col("unrated"))["pooled_games"].to_list() == [2]


def test_game_rows_say_why_a_game_did_not_count(con) -> None:
    g = games_frame(con, 1, "fide")
    bravo = g.filter(pl.col("player_id") == 2)
    assert bravo["round"].to_list() == [1, 2, 3]
    assert bravo["reason"].to_list() == [None, "unrated_opponent", None]
    assert bravo["k_w_minus_pd"].to_list() == [Decimal("-9.60"), None, Decimal("-36.80")]
    delta = g.filter(pl.col("player_id") == 4)
    assert delta["reason"].to_list() == ["not_rated", "not_rated", "forfeit", "bye"]
    assert delta["file_name"].to_list() == ["spring_open.trf"] * 4
    anna = g.filter(pl.col("player_id") == 1).row(1, named=True)
    assert (anna["d_raw"], anna["d_used"], anna["capped"], anna["pd"]) == (
        600,
        400,
        True,
        Decimal("0.92"),
    )


def test_crosstable_cells(con) -> None:
    labels, ct = crosstable(con, 1)
    assert labels == ["1", "2", "3", "4"]
    rows = {r["name"]: r for r in ct.iter_rows(named=True)}
    assert [rows["Alpha, Anna"][f"r{i}"] for i in range(1, 5)] == ["2w1", "3b½", "4w+", ""]
    assert [rows["Delta, Dan"][f"r{i}"] for i in range(1, 5)] == ["3b½", "2b0", "1b-", "H"]
    assert ct["name"].to_list()[0] == "Alpha, Anna"  # ranked by points when the file has no rank
    assert rows["Alpha, Anna"]["points"] == Decimal("2.5")


def test_write_report_files(con, tmp_path: Path) -> None:
    paths = write_report(con, 1, "fide", tmp_path)
    names = [p.name for p in paths]
    assert names == [
        "1_spring-open-2024.players.csv",
        "1_spring-open-2024.games.csv",
        "1_spring-open-2024.crosstable.csv",
        "1_spring-open-2024.html",
    ]
    players = pl.read_csv(paths[0], infer_schema_length=None)
    assert players["k_w_we"].to_list()[:3] == [-3.6, -46.4, 53.6]
    html = paths[3].read_text(encoding="utf-8")
    assert "K×(W−We)" in html and "-3.60" in html and "bye [H]" in html


def test_find_tournament(con) -> None:
    assert find_tournament(con, "1") == 1
    assert find_tournament(con, "spring open") == 1
    with pytest.raises(LookupError, match="no tournament"):
        find_tournament(con, "Autumn")
    # digits that are not a decimal number, and blank text, are refused cleanly
    for ref in ("²", "", "  "):
        with pytest.raises(LookupError):
            find_tournament(con, ref)


def test_rich_table_has_every_player(con) -> None:
    table = rich_table(performance_frame(con, 1, "fide"), "t")
    assert table.row_count == 4


def test_report_command(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    runner = CliRunner()
    res = runner.invoke(app, ["report", "--tournament", "Spring", "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "-3.60" in res.output and "-46.40" in res.output and "53.60" in res.output
    assert (tmp_path / "o" / "reports" / "fide" / "1_spring-open-2024.html").exists()
    res = runner.invoke(app, ["report", "--all", "--db", str(db), "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", "--tournament", "Nope", "--db", str(db)])
    assert res.exit_code == 1


def test_ffe_report_has_period_working_and_incompatible_games(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    rw = duckdb.connect(str(db))
    ffe = {"system": "ffe", "list_date": FEB}
    add_rows(
        rw,
        tournament_ratings=[{**ffe, "tournament_id": 1, "player_id": 1, "n": 1, "score": Decimal("0.5")}],
        ffe_details=[{**ffe, "player_id": 1, "r_old": 2100, "n_compatible": 1, "n_incompatible": 1,
                      "x": Decimal("1500.00"), "p": Decimal("0.5000"), "z": Decimal("0.00"),
                      "perf": Decimal("1500.00"), "young": False,
                      "method": "down", "r_new": 2050, "r_source": "F"}],
        rating_changes=[{**ffe, "tournament_id": 1, "game_id": g, "player_id": 1, "opponent_id": o, "ro": 2100,
                         "rc": 1500, "d_raw": 600, "score": sc, "counted": counted, "reason": why}
                        for g, o, sc, counted, why in [(1, 2, Decimal(1), False, "incompatible"),
                                                       (3, 3, Decimal("0.5"), True, None)]],
    )  # fmt: skip
    rw.close()
    con = duckdb.connect(str(db), read_only=True)
    try:
        paths = write_report(con, 1, "ffe", tmp_path / "o")
        games = games_frame(con, 1, "ffe")
    finally:
        con.close()
    assert [p.name for p in paths][3:] == ["1_spring-open-2024.ffe.csv", "1_spring-open-2024.html"]
    ffe = pl.read_csv(paths[3])
    assert ffe.select("r_old", "r_source", "n_incompatible", "method", "r_new").row(0) == (
        2100,
        "F",
        1,
        "down",
        2050,
    )
    row = games.filter(pl.col("round") == 1).row(0, named=True)
    assert (row["reason"], row["capped"]) == ("incompatible", False)
    assert "FFE period working" in paths[4].read_text(encoding="utf-8")


def test_file_names_of_events_in_other_scripts_keep_their_words() -> None:
    from elopipe.publish.reports import slug

    assert slug("ΔΙΑΣΥΛΛΟΓΙΚΟ ΚΥΠΕΛΛΟ ΚΡΗΤΙΚΗΣ ΦΙΛΙΑΣ 2024") == "diasullogiko-kupello-kretikes-philias-2024"
    assert slug("Карпов, Анатолий") == "karpov-anatolii"
    assert slug("Café Müller / Open 2024") == "cafe-muller-open-2024"
    assert slug("???", "tournament") == "tournament"
    assert len(slug("x" * 100)) == 60


def test_an_ambiguous_name_lists_each_tournaments_dates_and_file(tmp_path: Path) -> None:
    """Two Candidates of one name and different games (the real 2022 file, and a variant of it
    played two years later): the answer gives each one's days of play and file to choose by."""
    import re

    from elopipe.ingest.driver import ingest_paths
    from tests.helpers.paths import SHARED_DATA

    real = SHARED_DATA / "pgn" / "wchcand22.pgn"
    later = tmp_path / "candidates_later.pgn"
    later.write_text(
        re.sub(r'\[(Date|EventDate) "2022\.', r'[\1 "2024.', real.read_text(encoding="utf-8")), encoding="utf-8"
    )
    db = tmp_path / "c.duckdb"
    ingest_paths([real, later], db)
    ids = [r[0] for r in duckdb.connect(str(db), read_only=True).execute(
        "SELECT tournament_id FROM tournaments ORDER BY 1").fetchall()]  # fmt: skip
    res = CliRunner().invoke(app, ["report", "--tournament", "Candidates", "--db", str(db)])
    out = " ".join(res.output.split())
    assert res.exit_code != 0
    assert (
        f"2 tournaments match 'Candidates', give the id: {ids[0]}: FIDE Candidates 2022, 2022-06-17 .. 2022-07-04,"
        f" file wchcand22.pgn; {ids[1]}: FIDE Candidates 2022, 2024-06-17 .. 2024-07-04, file candidates_later.pgn"
        in out
    )


def test_a_tournament_name_is_found_without_its_accents(tmp_path: Path) -> None:
    from elopipe.ingest.driver import ingest_paths
    from tests.helpers.paths import SHARED_DATA

    db = tmp_path / "v.duckdb"
    ingest_paths([SHARED_DATA / "trf" / "irl_las_vegas_sample_utf8_names.trf"], db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        (tid, name), *_ = con.execute("SELECT tournament_id, name FROM tournaments").fetchall()
        assert name != "Las Vegas National Open"  # the file writes it with accents
        assert match_tournament(con, "Las Vegas") == tid
        assert match_tournament(con, "las vegas national open") == tid
    finally:
        con.close()


def test_a_hyphenated_tournament_name_is_found_by_its_words(tmp_path: Path) -> None:
    """'Karl Mala' finds '9. Karl-Mala-Gedenkturnier' (a fresh user's search: each word alone found
    it, the two together did not); '%' still matches only itself."""
    from elopipe.ingest.driver import ingest_paths
    from tests.helpers.paths import SHARED_DATA

    db = tmp_path / "k.duckdb"
    ingest_paths([SHARED_DATA / "trf" / "ger_karl_mala_gedenkturnier_2005_fide_example1_284players.trf"], db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        (tid, name), *_ = con.execute("SELECT tournament_id, name FROM tournaments").fetchall()
        assert "Karl-Mala" in name
        assert match_tournament(con, "Karl Mala") == tid
        assert match_tournament(con, "karl  mala gedenkturnier") == tid
        with pytest.raises(LookupError):
            match_tournament(con, "Karl%Mala")
    finally:
        con.close()


def test_a_name_two_exports_share_is_answered_with_the_candidates(tmp_path: Path) -> None:
    """The same event in two encodings: 'Las Vegas' matches both; the one holding the games is
    taken (the other is its duplicate export), but the user is told both ids and files (it was
    answered for one without a word)."""
    from elopipe.ingest.driver import ingest_paths
    from tests.helpers.paths import SHARED_DATA

    db = tmp_path / "v.duckdb"
    trf = SHARED_DATA / "trf"
    ingest_paths([trf / "irl_las_vegas_sample_latin1_names.trf", trf / "irl_las_vegas_sample_utf8_names.trf"], db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        ids = [r[0] for r in con.execute("SELECT tournament_id FROM tournaments ORDER BY 1").fetchall()]
        with_games = con.execute("SELECT DISTINCT tournament_id FROM canonical_games").fetchall()
        notes: list[str] = []
        assert len(ids) == 2 and match_tournament(con, "Las Vegas", notes.append) == with_games[0][0]
    finally:
        con.close()
    assert len(notes) == 1 and notes[0].startswith("2 tournaments match 'Las Vegas': ")
    assert all(f"{tid}: " in notes[0] for tid in ids) and "irl_las_vegas_sample_utf8_names.trf" in notes[0]
