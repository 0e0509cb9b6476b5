"""Two exports of one event: the fuller one is canonical, whatever the order of ingestion."""

from pathlib import Path

import duckdb
import pytest

from elopipe.ingest import ingest_paths

PGN = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pgn"
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

    from elopipe.cli import app
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
    res = CliRunner().invoke(app, ["report", "--tournament", str(part_id), "--db", str(db), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert f"duplicate export of tournament {full_id}" in res.output


def test_report_names_a_redirect_only_when_the_event_asked_for_is_a_duplicate_export(tmp_path):
    from typer.testing import CliRunner

    from elopipe.cli import app

    db = tmp_path / "s.duckdb"
    ingest_paths([PART, FULL], db)
    run = CliRunner().invoke
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


def _trf(name: str, start: str, end: str, results: list[list[str]]) -> str:
    """Four players, the same two rounds of pairings whatever the event; `results[r][b]` is
    White's result ('1', '0', '=') on board b of round r + 1."""
    players = [("Alpha,A", 2000, 2700001), ("Beta,B", 1900, 2700002), ("Gamma,C", 1800, 2700003)]
    players.append(("Delta,D", 1700, 2700004))
    other = {"1": "0", "0": "1", "=": "="}
    cells: dict[int, str] = {i: "" for i in range(1, 5)}
    for rnd, boards in enumerate(PAIRINGS):
        for (w, b), res in zip(boards, results[rnd], strict=True):
            cells[w] += f"  {b:4d} w {res}"
            cells[b] += f"  {w:4d} b {other[res]}"
    lines = [f"012 {name}", "042 " + start, "052 " + end, "062 4", "122 90 minutes + 30 seconds per move"]
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


def test_two_events_with_the_same_pairings_and_other_results_are_two_events(tmp_path):
    """A weekend congress inside a club championship, the same pairings in rounds 1-2 but other
    results: both events' games count, whatever the order of ingestion."""
    club, weekend = tmp_path / "club.trf", tmp_path / "weekend.trf"
    club.write_text(_trf("Club Championship", "2021/03/01", "2021/03/20", [["1", "1"], ["1", "1"]]))
    # one result the same by chance: still another event
    weekend.write_text(_trf("Weekend Congress", "2021/03/06", "2021/03/07", [["0", "0"], ["0", "1"]]))
    got = _in_both_orders(
        tmp_path,
        club,
        weekend,
        "SELECT t.name, count(*) FROM canonical_games c JOIN tournaments t USING (tournament_id) GROUP BY 1 ORDER BY 1",
    )
    assert got[0] == got[1] == [("Club Championship", 4), ("Weekend Congress", 4)]


def test_player_names_do_not_depend_on_the_order_of_the_files(tmp_path):
    """wchcand22 writes 'Firouzja,Alireza' and 'Ding Liren', the Madrid export 'Firouzja, Alireza'
    and 'Ding, Liren': whichever file comes first, the list shows the same names."""
    names = _in_both_orders(tmp_path, FULL, PART, "SELECT name FROM players WHERE merged_into IS NULL ORDER BY name")
    assert names[0] == names[1]
    assert ("Firouzja, Alireza",) in names[0] and ("Ding, Liren",) in names[0]


def test_a_renamed_export_with_one_corrected_result_is_the_same_event(tmp_path):
    """'Spring Open 2023' and its re-export 'Spring Open 2023 (final)' with one result corrected:
    the games agree but for one, so they are one event: four games, the correction recorded as
    result_differs, and the same canonical results whatever the order."""
    v1, v2 = tmp_path / "v1.trf", tmp_path / "v2.trf"
    v1.write_text(_trf("Spring Open 2023", "2023/04/01", "2023/04/02", [["1", "="], ["1", "1"]]))
    v2.write_text(_trf("Spring Open 2023 (final)", "2023/04/01", "2023/04/02", [["1", "="], ["0", "1"]]))
    got = _in_both_orders(
        tmp_path,
        v1,
        v2,
        "SELECT count(*), count(*) FILTER (WHERE match_rule LIKE '%result_differs') FROM game_sources"
        " WHERE role <> 'canonical'",
    )
    assert got[0] == got[1] == [(4, 1)]
    (tmp_path / "again").mkdir()
    results = _in_both_orders(tmp_path / "again", v1, v2, "SELECT round, result FROM canonical_games ORDER BY ALL")
    assert results[0] == results[1] and len(results[0]) == 4


def test_two_sources_of_one_event_disagreeing_on_a_result_give_one_result_whatever_the_order(tmp_path):
    a, b = tmp_path / "mon.trf", tmp_path / "tue.trf"
    a.write_text(_trf("Spring Open 2023", "2023/04/01", "2023/04/02", [["1", "="], ["1", "1"]]))
    b.write_text(_trf("Spring Open 2023", "2023/04/01", "2023/04/02", [["1", "="], ["0", "1"]]))
    got = _in_both_orders(tmp_path, a, b, "SELECT round, result FROM canonical_games ORDER BY ALL")
    assert got[0] == got[1] and len(got[0]) == 4
