"""A `rate --scenario` killed between its writes (issue 26, item 8): the `rating_runs` row written
first stayed with no list and no `scenarios` row; the next run kept it and `scenarios list` did
not show it. The run's row and its lists now commit together, so a kill at the lists' write leaves
nothing (first test); a store an earlier elopipe left that way (the row committed alone) is still
shown and cleaned up (the others)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import elopipe.rating.result_tables as result_tables
from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import db_rows

TRF = SHARED_DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf"


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_a_kill_at_the_lists_write_leaves_no_run_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "s.duckdb"
    ingest_paths([TRF], db)

    def killed_here(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # as a kill -9 at this point: nothing after it runs

    with monkeypatch.context() as m:
        m.setattr(result_tables, "write_results", killed_here)
        res = _run("rate", "--system", "fide", "--scenario", "x", "--rules", "V2017", "--db", str(db))
    assert res.exit_code == 130, res.output
    assert db_rows(db, "SELECT count(*) FROM rating_runs WHERE system = 'fide@x'") == [(0,)]
    assert db_rows(db, "SELECT count(*) FROM scenarios") == [(0,)]
    assert db_rows(db, "SELECT count(*) FROM rating_lists WHERE system = 'fide@x'") == [(0,)]


@pytest.fixture
def killed(tmp_path: Path) -> Path:
    """A store whose scenario `x` an earlier elopipe killed after its rating_runs row (committed on
    its own), before its lists."""
    from elopipe.store.connect import open_writer

    db = tmp_path / "s.duckdb"
    ingest_paths([TRF], db)
    with open_writer(db) as con:
        result_tables.start_run(con, "fide@x", rules_forced="V2017", params={})
    assert db_rows(db, "SELECT count(*) FROM rating_runs WHERE system = 'fide@x'") == [(1,)]
    assert db_rows(db, "SELECT count(*) FROM scenarios") == [(0,)]
    assert db_rows(db, "SELECT count(*) FROM rating_lists WHERE system = 'fide@x'") == [(0,)]
    return db


def test_scenarios_list_shows_an_unfinished_run(killed: Path) -> None:
    res = _run("scenarios", "list", "--db", str(killed))
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "fide@x" in out and "unfinished" in out, res.output
    assert "no scenario" not in out


def test_the_next_run_removes_the_unfinished_run_and_says_so(killed: Path) -> None:
    res = _run("rate", "--system", "fide", "--scenario", "x", "--rules", "V2017", "--db", str(killed))
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "removed an unfinished run of fide@x" in out, res.output
    runs = db_rows(killed, "SELECT run_id, first_list IS NOT NULL FROM rating_runs WHERE system = 'fide@x' ORDER BY 1")
    assert len(runs) == 1 and runs[0][1]  # only the finished run, with its lists
    assert db_rows(killed, "SELECT count(*) FROM scenarios WHERE system = 'fide@x'") == [(1,)]


def test_dropping_an_unfinished_scenario_removes_its_run(killed: Path) -> None:
    res = _run("scenarios", "drop", "x", "--db", str(killed))
    assert res.exit_code == 0, res.output
    assert db_rows(killed, "SELECT count(*) FROM rating_runs WHERE system = 'fide@x'") == [(0,)]
