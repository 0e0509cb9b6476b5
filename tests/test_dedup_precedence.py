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
