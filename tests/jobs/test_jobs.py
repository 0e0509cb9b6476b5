"""The jobs layer (`elopipe.jobs`): each job takes its request, opens the store itself and returns
what the CLI prints. On the real FIDE Candidates 2022 file (`tests.helpers.candidates.CANDIDATES`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest

from elopipe.jobs.ingest import ingest
from elopipe.jobs.publish import publish_lists
from elopipe.jobs.rate import rate_system
from elopipe.jobs.report import NothingRated, TournamentView, report
from elopipe.jobs.requests import IngestRequest, PublishRequest, RateRequest, ReportRequest, RunRequest
from tests.helpers.candidates import CANDIDATES, EVENT


def _list_dates(db: Path, system: str) -> list[dt.date]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT DISTINCT list_date FROM rating_lists WHERE system = ? ORDER BY 1", [system]
        ).fetchall()
    return [r[0] for r in rows]


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of the Candidates file, rated under `fide` by the rating job."""
    db = tmp_path_factory.mktemp("jobs") / "store.duckdb"
    assert ingest(IngestRequest((str(CANDIDATES),), str(db))).exit_code == 0
    outcome = rate_system(RateRequest(str(db), "fide", skip_empty=True))
    assert outcome.summary is not None and outcome.changed == _list_dates(db, "fide")
    return db


def test_the_rate_job_skips_a_store_without_games_when_asked(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    db = tmp_path / "store.duckdb"
    ingest(IngestRequest((str(empty),), str(db)))  # no file: a store with no game
    outcome = rate_system(RateRequest(str(db), "fide", skip_empty=True))
    assert outcome.summary is None and outcome.changed == [] and _list_dates(db, "fide") == []


def test_the_rate_job_says_which_lists_it_rewrote(rated: Path) -> None:
    assert _list_dates(rated, "fide"), "the Candidates are rated on a FIDE list"
    again = rate_system(RateRequest(str(rated), "fide"))
    assert again.changed == [] and again.summary.first_changed is None  # nothing new: nothing rewritten


def test_the_publish_job_writes_the_latest_list_once(rated: Path, tmp_path: Path) -> None:
    request = PublishRequest(rated, "fide", tmp_path / "out", formats=("csv",), wait=0)
    first = publish_lists(request)
    latest = _list_dates(rated, "fide")[-1]
    assert [p.suffix for p in first.paths] == [".csv"] and str(latest) in first.paths[0].name and first.kept == 0
    again = publish_lists(request)
    assert again.paths == [] and again.kept == 1  # same content: not rewritten


def test_the_report_job_shows_the_tournament_before_writing_it(rated: Path, tmp_path: Path) -> None:
    shown: list[TournamentView] = []
    done = report(ReportRequest(rated, "fide", EVENT, tmp_path), lambda note: None, shown.append)
    assert [v.name for v in shown] == [EVENT] and shown[0].perf.height == 8
    assert done.written and all(p.exists() and p.parent == tmp_path / "reports" / "fide" for p in done.written)


def test_the_report_job_says_why_nothing_is_rated(rated: Path, tmp_path: Path) -> None:
    with pytest.raises(NothingRated) as caught:
        report(ReportRequest(rated, "elo", EVENT, tmp_path), lambda note: None, lambda view: None)
    assert caught.value.name == EVENT and not (tmp_path / "reports").exists()


def test_a_run_request_hands_each_stage_its_part() -> None:
    run = RunRequest(("a.pgn",), "s.duckdb", ("fide", "ffe"), "out", None, True, 5.0, 3, "forfeit", "file")
    assert run.ingest().paths == ("a.pgn",) and run.ingest().validate_moves and run.ingest().wait is None
    assert run.rating().systems == ("fide", "ffe") and run.rating().ro_from == "file"
    assert run.publishing({"fide": []}, {"fide": 1}).max_lists == 3
