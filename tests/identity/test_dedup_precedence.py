"""Two exports of one event: the fuller one is canonical, whatever the order of ingestion."""

from pathlib import Path

import duckdb
import pytest

from elopipe.ingest.driver import ingest_paths
from tests.helpers.paths import REPO

PGN = REPO.parent / "shared" / "data" / "pgn"
FULL, PART = PGN / "wchcand22.pgn", PGN / "fide_candidates_2022_madrid_spain.pgn"


@pytest.mark.parametrize("order", [(FULL, PART), (PART, FULL)], ids=["full_first", "part_first"])
def test_the_full_export_of_an_event_holds_every_canonical_game(tmp_path, order):
    db = tmp_path / "s.duckdb"
    for f in order:
        ingest_paths([f], db)
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "SELECT s.path, count(*) FROM canonical_games c JOIN source_files s USING (file_id) GROUP BY 1"
    ).fetchall()
    con.close()
    assert [(Path(p).name, n) for p, n in rows] == [("wchcand22.pgn", 56)]


def test_a_report_by_name_finds_the_event_not_its_duplicate_export(tmp_path):
    from elopipe.publish.reports import find_tournament

    db = tmp_path / "s.duckdb"
    ingest_paths([PART, FULL], db)
    con = duckdb.connect(str(db), read_only=True)
    tid = find_tournament(con, "FIDE Candidates 2022")
    path = con.execute(
        "SELECT s.path FROM tournaments t JOIN source_files s USING (file_id) WHERE t.tournament_id = ?", [tid]
    ).fetchone()[0]
    con.close()
    assert Path(path).name == "wchcand22.pgn"


def test_a_report_by_the_id_of_the_duplicate_export_points_to_the_event(tmp_path):
    from typer.testing import CliRunner

    from elopipe.cli.main import app
    from elopipe.publish.reports import canonical_event, find_tournament

    db = tmp_path / "s.duckdb"
    ingest_paths([PART, FULL], db)
    con = duckdb.connect(str(db), read_only=True)
    part_id, full_id = (
        con.execute(
            "SELECT t.tournament_id FROM tournaments t JOIN source_files s USING (file_id) WHERE s.path LIKE ?",
            [f"%{f.name}"],
        ).fetchone()[0]
        for f in (PART, FULL)
    )
    assert canonical_event(con, part_id) == full_id
    assert canonical_event(con, full_id) is None
    assert find_tournament(con, str(part_id)) == full_id
    con.close()
    # a report needs a rating (an unrated event writes no file): rate, then ask by the export's id
    assert CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)]).exit_code == 0
    res = CliRunner().invoke(app, ["report", "--tournament", str(part_id), "--db", str(db), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert f"duplicate export of tournament {full_id}" in res.output


def test_report_names_a_redirect_only_when_the_event_asked_for_is_a_duplicate_export(tmp_path):
    from typer.testing import CliRunner

    from elopipe.cli.main import app

    db = tmp_path / "s.duckdb"
    ingest_paths([PART, FULL], db)
    run = CliRunner().invoke
    assert run(app, ["rate", "--system", "fide", "--db", str(db)]).exit_code == 0
    # "2022" is not a tournament id: it matches both exports by name (the full one is the event)
    res = run(app, ["report", "--tournament", "2022", "--db", str(db), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "duplicate export" not in res.output
    # the duplicate export asked for by its exact name: the event is reported, and said so
    con = duckdb.connect(str(db))
    con.execute(
        "UPDATE tournaments SET name = 'Madrid export' WHERE file_id = "
        "(SELECT file_id FROM source_files WHERE path LIKE ?)",
        [f"%{PART.name}"],
    )
    con.close()
    res = run(app, ["report", "--tournament", "Madrid export", "--db", str(db), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "is a duplicate export of tournament" in res.output and "FIDE Candidates 2022" in res.output


PAIRINGS = [[(1, 2), (3, 4)], [(3, 1), (4, 2)]]  # (white, black) by round


def _trf(
    name: str,
    start: str,
    end: str,
    results: list[list[str]],
    tc: str = "90 minutes + 30 seconds per move",
    pairings: list[list[tuple[int, int]]] = PAIRINGS,
) -> str:
    """Four players, by default the same two rounds of pairings whatever the event;
    `results[r][b]` is White's result ('1', '0', '=') on board b of round r + 1."""
    players = [("Alpha,A", 2000, 2700001), ("Beta,B", 1900, 2700002), ("Gamma,C", 1800, 2700003)]
    players.append(("Delta,D", 1700, 2700004))
    other = {"1": "0", "0": "1", "=": "="}
    cells: dict[int, str] = {i: "" for i in range(1, 5)}
    for rnd, boards in enumerate(pairings):
        for (w, b), res in zip(boards, results[rnd], strict=True):
            cells[w] += f"  {b:4d} w {res}"
            cells[b] += f"  {w:4d} b {other[res]}"
    lines = [f"012 {name}", "042 " + start, "052 " + end, "062 4", "122 " + tc]
    for i, (nm, rtg, fid) in enumerate(players, 1):
        lines.append(f"001 {i:4d} m    {nm:<33} {rtg:4d} IRL {fid:11d} 1980/01/01  0.0 {i:4d}{cells[i]}")
    return "\n".join(lines) + "\n"


def _in_both_orders(tmp_path, a: Path, b: Path, sql: str) -> list[list[tuple]]:
    """`sql`'s rows on a store that ingested a then b, and on one that ingested b then a."""
    out = []
    for order in ((a, b), (b, a)):
        db = tmp_path / f"{order[0].stem}_first.duckdb"
        for f in order:
            ingest_paths([f], db)
        con = duckdb.connect(str(db), read_only=True)
        out.append(con.execute(sql).fetchall())
        con.close()
    return out


def _trfs_in_both_orders(tmp_path, a: tuple, b: tuple, sql: str) -> list[list[tuple]]:
    """`_in_both_orders` on two TRF files written by `_trf(*a)` and `_trf(*b)`."""
    paths = []
    for i, spec in enumerate((a, b)):
        paths.append(tmp_path / f"e{i}.trf")
        paths[-1].write_text(_trf(*spec))
    return _in_both_orders(tmp_path, *paths, sql)


def test_two_events_with_the_same_pairings_and_other_results_are_two_events(tmp_path):
    """A weekend congress inside a club championship, the same pairings in rounds 1-2 but other
    results: both events' games count, whatever the order of ingestion."""
    got = _trfs_in_both_orders(
        tmp_path,
        ("Club Championship", "2021/03/01", "2021/03/20", [["1", "1"], ["1", "1"]]),
        # one result the same by chance: still another event
        ("Weekend Congress", "2021/03/06", "2021/03/07", [["0", "0"], ["0", "1"]]),
        "SELECT t.name, count(*) FROM canonical_games c JOIN tournaments t USING (tournament_id) GROUP BY 1 ORDER BY 1",
    )
    assert got[0] == got[1] == [("Club Championship", 4), ("Weekend Congress", 4)]


def test_player_names_and_titles_do_not_depend_on_the_order_of_the_files(tmp_path):
    """wchcand22 writes 'Firouzja,Alireza' and 'Ding Liren' and no title, the Madrid export
    'Firouzja, Alireza' and 'Ding, Liren', GM: whichever file comes first, the list shows the
    same names and titles (and every other fact of the players)."""
    sql = (
        "SELECT name, fide_id, title, federation, sex, birth_year, birth_date FROM players"
        " WHERE merged_into IS NULL ORDER BY name"
    )
    got = _in_both_orders(tmp_path, FULL, PART, sql)
    assert got[0] == got[1]
    titles = {r[0]: r[2] for r in got[0]}
    assert titles["Firouzja, Alireza"] == titles["Ding, Liren"] == titles["Nepomniachtchi, Ian"] == "GM"


def test_a_renamed_export_with_one_corrected_result_is_the_same_event(tmp_path):
    """'Spring Open 2023' and its re-export 'Spring Open 2023 (final)' with one result corrected:
    the games agree but for one, so they are one event: four games, the correction recorded as
    result_differs, and the same canonical results whatever the order."""
    v1 = ("Spring Open 2023", "2023/04/01", "2023/04/02", [["1", "="], ["1", "1"]])
    v2 = ("Spring Open 2023 (final)", "2023/04/01", "2023/04/02", [["1", "="], ["0", "1"]])
    got = _trfs_in_both_orders(
        tmp_path,
        v1,
        v2,
        "SELECT count(*), count(*) FILTER (WHERE match_rule LIKE '%result_differs') FROM game_sources"
        " WHERE role <> 'canonical'",
    )
    assert got[0] == got[1] == [(4, 1)]
    (tmp_path / "again").mkdir()
    results = _trfs_in_both_orders(tmp_path / "again", v1, v2, "SELECT round, result FROM canonical_games ORDER BY ALL")
    assert results[0] == results[1] and len(results[0]) == 4


def test_two_sources_of_one_event_disagreeing_on_a_result_give_one_result_whatever_the_order(tmp_path):
    got = _trfs_in_both_orders(
        tmp_path,
        ("Spring Open 2023", "2023/04/01", "2023/04/02", [["1", "="], ["1", "1"]]),
        ("Spring Open 2023", "2023/04/01", "2023/04/02", [["1", "="], ["0", "1"]]),
        "SELECT round, result FROM canonical_games ORDER BY ALL",
    )
    assert got[0] == got[1] and len(got[0]) == 4


def test_shown_name_prefers_accents_and_mixed_case_and_follows_corrections(tmp_path):
    """Among spellings of one player (same FIDE ID): 'Göl, İbrahim' before 'Gol, Ibrahim' and
    'Carlsen, Magnus' before 'CARLSEN, Magnus'; when a corrected file drops a spelling, the
    name shown no longer uses it."""
    from elopipe.identity.decisions import refresh_display_names

    db = tmp_path / "s.duckdb"

    def pgn(white: str) -> str:
        head = f'[Event "Open {white[:3]}"]\n[Site "X"]\n[Date "2023.01.0{len(white) % 9 + 1}"]\n'
        # two more games the correction below keeps: evidence that it is the same event's file
        others = "".join(
            f'\n{head}[Round "{r}"]\n[White "Third{r}, Tom"]\n[Black "Fourth{r}, Fay"]\n[Result "1-0"]\n'
            f'[WhiteFideId "25000{r}3"]\n[BlackFideId "25000{r}4"]\n\n1. d4 d5 1-0\n'
            for r in (2, 3)
        )
        return (
            f'{head}[Round "1"]\n'
            f'[White "{white}"]\n[Black "Other, Olga"]\n[Result "1-0"]\n[WhiteFideId "2500001"]\n'
            '[BlackFideId "2500002"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n'
        ) + others

    a, b = tmp_path / "a.pgn", tmp_path / "b.pgn"
    a.write_text(pgn("Gol, Ibrahim"))
    b.write_text(pgn("Göl, İbrahim"))
    ingest_paths([a, b], db)
    con = duckdb.connect(str(db))
    name = "SELECT name FROM players WHERE fide_id = 2500001"
    assert con.execute(name).fetchall() == [("Göl, İbrahim",)]
    con.execute("UPDATE tournament_players SET name_as_written = 'CARLSEN, Magnus' WHERE fide_id_in_file = 2500001")
    con.execute(
        "UPDATE tournament_players SET name_as_written = 'Carlsen, Magnus' WHERE fide_id_in_file = 2500001"
        " AND tournament_id = (SELECT min(tournament_id) FROM tournaments)"
    )
    pid = con.execute("SELECT player_id FROM players WHERE fide_id = 2500001").fetchall()[0][0]
    refresh_display_names(con, [pid])
    assert con.execute(name).fetchall() == [("Carlsen, Magnus",)]
    con.close()
    # a corrected b.pgn (same event, same path): another player had White, so no file writes
    # 'Göl, İbrahim' any more
    a2, b2 = tmp_path / "a2.pgn", tmp_path / "b2.pgn"
    a2.write_text(pgn("Gol, Ibrahim"))
    b2.write_text(pgn("Göl, İbrahim"))
    db2 = tmp_path / "t.duckdb"
    ingest_paths([a2, b2], db2)
    b2.write_text(pgn("Göl, İbrahim").replace("Göl, İbrahim", "Brown, Bob").replace("2500001", "2500003"))
    ingest_paths([b2], db2)
    con = duckdb.connect(str(db2), read_only=True)
    assert con.execute(name).fetchall() == [("Gol, Ibrahim",)]
    con.close()


def test_a_rapid_and_a_blitz_event_of_one_day_never_share_a_game(tmp_path):
    got = _trfs_in_both_orders(
        tmp_path,
        ("Galway Rapid 2024", "2024/05/04", "2024/05/04", [["1", "="], ["1", "0"]], "15 minutes + 10 seconds"),
        ("Galway Blitz 2024", "2024/05/04", "2024/05/04", [["1", "="], ["1", "1"]], "3 minutes + 2 seconds"),
        "SELECT t.name, count(*) FROM canonical_games c JOIN tournaments t USING (tournament_id) GROUP BY 1 ORDER BY 1",
    )
    assert got[0] == got[1] == [("Galway Blitz 2024", 4), ("Galway Rapid 2024", 4)]


def test_a_partial_export_agreeing_on_half_its_games_is_the_same_event(tmp_path):
    """A two-game export under another name, one result a typo: the same event's games (not four
    extra games), the typo recorded as result_differs."""
    full = ("Cork Open 2024", "2024/06/01", "2024/06/02", [["1", "="], ["1", "0"]])
    got = _trfs_in_both_orders(
        tmp_path,
        full,
        ("Munster Championship 2024", "2024/06/01", "2024/06/02", [["1", "1"], ["0", "0"]]),
        "SELECT count(*) FROM canonical_games",
    )
    # the second export has four games too, two agreeing: 4 canonical games
    assert got[0] == got[1] == [(4,)]


def test_two_sources_of_one_event_that_disagree_on_the_rate_of_play_are_still_one_event(tmp_path):
    """A TRF '122 90+30' can be read as a rapid time control; the same event's other source says
    standard: the same event name keeps them one event (4 games, not 8)."""
    results = [["1", "="], ["1", "0"]]
    got = _trfs_in_both_orders(
        tmp_path,
        ("Cork Open 2024", "2024/06/01", "2024/06/02", results, "90+30"),
        ("Cork Open 2024", "2024/06/01", "2024/06/02", results, "90 minutes + 30 seconds per move"),
        "SELECT count(*) FROM canonical_games",
    )
    assert got[0] == got[1] == [(4,)]


def test_one_shared_game_with_two_results_is_two_games(tmp_path):
    """Two differently named events sharing a single pairing with different results: no evidence
    of one event, both games count."""
    club = ("Dublin Club Championship 2024", "2024/03/01", "2024/03/31", [["1", "="], ["1", "0"]])
    congress = ("Dublin Weekend Congress 2024", "2024/03/09", "2024/03/10", [["0"]], "60 minutes", [[(1, 2)]])
    got = _trfs_in_both_orders(tmp_path, club, congress, "SELECT count(*) FROM canonical_games")
    assert got[0] == got[1] == [(5,)]  # the club's 4 games and the congress's 1
