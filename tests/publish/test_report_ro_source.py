"""Issue 25, section 4: each row of a performance report (terminal, CSV, HTML, the crosstable) says
where its Ro came from and marks a Ro 50 or more points from the rating the organiser's file gives,
on the real FIDE Candidates 2022 file rated beside `Carlsen.pgn` (a store that lacks most of its
players' other games, so its lists drift from FIDE's)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.legend import legend, report_legend
from elopipe.publish.reports import find_tournament, performance_frame, write_report
from elopipe.rating.summary import RO_MARK_POINTS
from tests.helpers.candidates import EVENT, FIROUZJA, copy_of, file_ratings, ingested


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = copy_of(ingested(tmp_path_factory.mktemp("cand")), "list.duckdb")
    res = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(store)])
    assert res.exit_code == 0, res.output
    return store


@pytest.fixture(scope="module")
def con(db: Path):
    c = duckdb.connect(str(db), read_only=True)
    yield c
    c.close()


def test_each_row_says_where_its_ro_came_from_and_marks_a_drifted_one(con) -> None:
    perf = performance_frame(con, find_tournament(con, EVENT), "fide")
    given = file_ratings()
    assert perf.height == 8 and set(perf["name"]) == set(given)
    # the store rated these players before from Carlsen.pgn: Ro is its own computed list in force on
    # the event's first day (B.02 7.1.3), the list of 2022-06-01
    in_force = dict(
        con.execute(
            "SELECT p.name, rl.rating FROM rating_lists rl JOIN players p USING (player_id)"
            " WHERE rl.system = 'fide' AND rl.list_date = DATE '2022-06-01'"
        ).fetchall()
    )
    for r in perf.iter_rows(named=True):
        assert r["file_rating"] == given[r["name"]], r["name"]
        assert r["ro_source"] == ("computed" if r["name"] in in_force else "file"), r["name"]
        if r["ro_source"] == "computed":
            assert r["ro"] == in_force[r["name"]], r["name"]
        assert r["ro_mark"] == (abs(r["ro"] - r["file_rating"]) >= RO_MARK_POINTS), r["name"]
    firouzja = perf.filter(pl.col("name") == FIROUZJA).row(0, named=True)
    assert firouzja["ro_mark"] and firouzja["ro_source"] == "computed"


def test_the_terminal_csv_html_and_crosstable_carry_the_source_and_mark(db: Path, con, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", "--tournament", EVENT, "--db", str(db), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    perf = performance_frame(con, find_tournament(con, EVENT), "fide")
    marked = perf.filter(pl.col("ro_mark"))
    row = next(line for line in res.output.splitlines() if FIROUZJA in line)
    ro = marked.filter(pl.col("name") == FIROUZJA)["ro"][0]
    assert re.search(rf"\b{ro}! +computed +{file_ratings()[FIROUZJA]}\b", row), row
    assert "  !: Ro 50 or more points from the rating the organiser's file gives" in res.output

    paths = write_report(con, find_tournament(con, EVENT), "fide", tmp_path / "files")
    players = {r["name"]: r for r in csv.DictReader(paths[0].open(encoding="utf-8"))}
    assert {n for n, r in players.items() if r["ro_mark"] == "true"} == set(marked["name"])
    assert {r["ro_source"] for r in players.values()} <= {"computed", "file"}
    cross = {r["name"]: r for r in csv.DictReader(paths[2].open(encoding="utf-8"))}
    for name, r in cross.items():
        assert r["ro"] == players[name]["ro"] and r["ro_mark"] == players[name]["ro_mark"], name
        assert int(r["rating_in_file"]) == file_ratings()[name]
    html = paths[-1].read_text(encoding="utf-8")
    # the mark beside each drifted Ro, in the performance table and in the crosstable beside Rtg
    assert html.count('<span class="ro-mark"') == 2 * marked.height
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", html.split('id="crosstable"', 1)[1].split("</thead>", 1)[0])
    assert heads[2:4] == ["Rtg", "Ro"]
    terms = re.findall(r"<dt>([^<]*)</dt>", html.split('id="legend"', 1)[1])
    assert {"Ro", "src", "!", "Rtg"} <= set(terms) and len(terms) == len(set(terms))


def test_the_legend_explains_the_source_and_the_mark() -> None:
    fide = dict(legend("fide"))
    assert "B.02 7.1.3" in fide["Ro"]
    for word in ("official", "computed", "file", "standard"):
        assert f"{word}, " in fide["src"], word
    assert "elopipe lists import" in fide["!"] and "--ro-from file" in fide["!"]
    # the crosstable's own Ro and Rtg entries stay for systems that do not explain them
    assert {"Rtg", "Ro"} <= {t for t, _ in report_legend("ffe")}


def test_a_store_rated_before_ro_had_a_source_reports_without_it(db: Path, tmp_path: Path) -> None:
    """A store an older elopipe rated (its view has no ro_source) is reported, with no source and no
    mark, until it is rated again; nothing fails."""
    old = tmp_path / "old.duckdb"
    old.write_bytes(db.read_bytes())
    with duckdb.connect(str(old)) as rw:
        rw.execute(
            "CREATE OR REPLACE VIEW v_tournament_performance AS"
            " SELECT * EXCLUDE (ro_source, file_rating) FROM tournament_ratings"
            " JOIN (SELECT tournament_id, name AS tournament FROM tournaments) USING (tournament_id)"
            " JOIN (SELECT player_id, name, fide_id FROM players) USING (player_id)"
            " CROSS JOIN (SELECT NULL::INTEGER AS start_rank, NULL::DECIMAL(14,2) AS k_w_we,"
            " NULL::INTEGER AS change_rounded, NULL::INTEGER AS pooled_games)"
        )
    with duckdb.connect(str(old), read_only=True) as ro:
        perf = performance_frame(ro, find_tournament(ro, EVENT), "fide")
    assert perf.height == 8 and perf["ro"].null_count() == 0
    assert perf["ro_source"].null_count() == 8 and not perf["ro_mark"].any()
