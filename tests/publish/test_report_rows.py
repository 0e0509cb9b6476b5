"""A publish reads the rows of all its reports set-wise (elopipe.publish.report_rows): each report
comes out as the report read on its own, byte for byte. Real files from ../shared/data rated
under FIDE and FFE rules: an Irish team league rated over two lists, a Swiss with byes, a TRF with
paired but unplayed rounds, and Dortmund 1999 from PGN."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from elopipe.publish.report_header import report_header
from elopipe.publish.report_rows import fetch_report_rows
from elopipe.publish.reports import ffe_frame, games_frame, performance_frame, rated_tournaments, write_report
from tests.helpers.paths import SHARED_DATA

FILES = [
    SHARED_DATA / "trf" / "irl_armstrong_cup_2010_11_team_league_013.trf",
    SHARED_DATA / "trf" / "fra_sharly_trf26_individual_nrs_240_byes.trf",
    SHARED_DATA / "trf" / "tur_bilkent_round2_paired_unplayed_utf8.trf",
    SHARED_DATA / "pgn" / "dortmund.pgn",
]
SYSTEMS = ("fide", "ffe")


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory):
    from elopipe.ingest.driver import ingest_paths
    from elopipe.rating.run import rate
    from elopipe.store.connect import open_writer

    db = tmp_path_factory.mktemp("rows") / "s.duckdb"
    ingest_paths(FILES, db)
    with open_writer(db) as w:
        for system in SYSTEMS:
            rate(w, system)
    c = duckdb.connect(str(db), read_only=True)
    yield c
    c.close()


@pytest.fixture(scope="module")
def written_alone(con, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[int, list[Path]]]:
    """{tournament id: its report files written alone (`write_report` without the set's rows)}
    of a system, written once for the module: two tests compare other writes with them."""
    done: dict[str, dict[int, list[Path]]] = {}

    def of(system: str) -> dict[int, list[Path]]:
        if system not in done:
            folder = tmp_path_factory.mktemp(f"alone-{system}")
            # a folder of its own each, as the tests wrote them one at a time
            done[system] = {
                tid: write_report(con, tid, system, folder / str(tid)) for tid in rated_tournaments(con, system)
            }
        return done[system]

    return of


@pytest.mark.parametrize("system", SYSTEMS)
def test_each_report_read_set_wise_is_the_report_read_alone(con, system: str) -> None:
    tids = rated_tournaments(con, system)
    assert len(tids) >= 3
    rows = fetch_report_rows(con, system, tids)
    for tid in tids:
        alone = performance_frame(con, tid, system)
        assert alone.height > 0
        assert_frame_equal(performance_frame(con, tid, system, rows), alone)
        assert_frame_equal(games_frame(con, tid, system, rows), games_frame(con, tid, system))
        assert_frame_equal(ffe_frame(con, tid, system, rows), ffe_frame(con, tid, system))
        assert rows.headers[tid] == report_header(con, tid, system)
        assert rows.headers[tid]["name"]


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_report_written_from_the_set_has_the_same_bytes(con, written_alone, system: str, tmp_path: Path) -> None:
    tids = rated_tournaments(con, system)
    rows = fetch_report_rows(con, system, tids)
    assert list(written_alone(system)) == list(tids)
    for tid in tids:
        alone = written_alone(system)[tid]
        together = write_report(con, tid, system, tmp_path / "set", rows)
        assert [p.name for p in together] == [p.name for p in alone]
        for a, b in zip(alone, together, strict=True):
            assert a.read_bytes() == b.read_bytes(), a.name


def test_every_report_of_a_system_is_the_report_written_alone(con, written_alone, tmp_path: Path) -> None:
    """`elopipe report --system ffe` (no tournament) reads its reports' rows set-wise."""
    from elopipe.jobs.report import report
    from elopipe.jobs.requests import ReportRequest

    db = Path(con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()[0])
    done = report(ReportRequest(db, "ffe", None, tmp_path / "all"), lambda _note: None, lambda _view: None)
    assert done.ids == rated_tournaments(con, "ffe")
    for tid in done.ids:
        for alone in written_alone("ffe")[tid]:
            assert (done.target / alone.name).read_bytes() == alone.read_bytes(), alone.name


def test_games_tied_on_round_and_line_come_in_list_order(con) -> None:
    """The team league is rated over two FFE lists: a player's unplayed round recorded on one line
    of the file has a row on each list, ordered by list (before, the order could vary)."""
    tid = next(t for t in rated_tournaments(con, "ffe") if t in _league(con))
    games = games_frame(con, tid, "ffe")
    keys = ["player_id", "round", "kind", "file_name", "line"]
    tied = games.filter(pl.len().over(keys) > 1)
    assert tied.height > 0
    for _, group in tied.group_by(keys, maintain_order=True):
        dates = group["list_date"].to_list()
        assert dates == sorted(dates)
    assert tied.n_unique("list_date") == 2


def _league(con: duckdb.DuckDBPyConnection) -> set[int]:
    rows = con.execute("SELECT tournament_id FROM tournaments WHERE name ILIKE '%armstrong%'").fetchall()
    return {int(r[0]) for r in rows}
