"""An event still in progress is not rated until it is complete (issue 25 item 3): `ingest` says so
in one line, every system records it in `rating_skips`, and it opens no list; once a file with its
results replaces it, it is rated."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.read.textio import decode_bytes
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import db_rows
from tests.helpers.trf_build import results_in_round

SHARLY = "fra_sharly_trf26_team_310_in_progress.trf"
SOURCE = SHARED_DATA / "trf" / SHARLY
OTHER = SHARED_DATA / "trf" / "fra_sharly_trf26_individual_nrs_240_byes.trf"
pytestmark = pytest.mark.skipif(not SOURCE.is_file(), reason="shared/data/trf not present")
runner = CliRunner()
REASON = "in_progress: round 2 of 3 is paired with no result on 6 of 6 boards"


def _run(*args: str):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_an_event_in_progress_is_not_rated_until_complete(tmp_path: Path) -> None:
    work = tmp_path / "inbox"
    work.mkdir()
    event = work / SHARLY
    event.write_bytes(SOURCE.read_bytes())
    db = str(tmp_path / "s.duckdb")
    out = _run("ingest", "--quiet", str(event), str(OTHER), "--db", db).output
    lines = [x for x in out.splitlines() if x.startswith("in progress:")]
    assert lines == [
        f"in progress: {event}: round 2 of 3 is paired with no result on 6 of 6 boards; "
        "not rated until a file with its results is loaded"
    ]
    for system in ("fide", "ffe", "elo"):
        said = _run("rate", "--system", system, "--db", db).output
        if system == "fide":  # one count in the summary, in words: the ingest's line named the round
            query = (
                "SELECT reason, count(DISTINCT tournament_id) AS events FROM rating_skips WHERE system = 'fide'"
                " GROUP BY 1 ORDER BY 2 DESC"
            )
            line = f'events skipped: 1 still in progress (`elopipe sql "{query}" --db {db}` counts them by code)'
            assert line in said.splitlines(), said
    skips = db_rows(db, "SELECT system, reason FROM rating_skips ORDER BY system")
    assert skips == [("elo", REASON), ("ffe", REASON), ("fide", REASON)]
    # the event of 29 May 2026 opens no list: the latest FIDE list is the other file's
    assert db_rows(db, "SELECT max(list_date) FROM rating_lists WHERE system = 'fide'") == [(dt.date(2025, 10, 1),)]

    # the organiser sends the file again with round 2's results: a correction, rated
    event.write_text(results_in_round(decode_bytes(SOURCE.read_bytes()).text, 2), encoding="utf-8")
    out = _run("ingest", "--quiet", str(event), "--db", db).output
    assert "in progress:" not in out
    _run("rate", "--system", "fide", "--db", db)
    assert db_rows(db, "SELECT count(*) FROM rating_skips WHERE system = 'fide'") == [(0,)]
    assert db_rows(db, "SELECT max(list_date) FROM rating_lists WHERE system = 'fide'") == [(dt.date(2026, 6, 1),)]


def test_every_system_gives_an_event_in_progress_the_same_reason(tmp_path: Path) -> None:
    """The Bilkent file pairs round 2 with no result and no date: `ffe` and `elo`, which date
    each game, said `no_dates` where the FIDE systems said `in_progress` (a fresh user's finding)."""
    bilkent = SHARED_DATA / "trf" / "tur_bilkent_round2_paired_unplayed_utf8.trf"
    db = str(tmp_path / "s.duckdb")
    _run("ingest", "--quiet", str(bilkent), "--db", db)
    for system in ("fide", "ffe", "elo"):
        _run("rate", "--system", system, "--db", db)
    reasons = db_rows(db, "SELECT system, list(DISTINCT reason) FROM rating_skips GROUP BY 1 ORDER BY 1")
    assert [s for s, _ in reasons] == ["elo", "ffe", "fide"]
    assert all(len(r) == 1 and r[0].startswith("in_progress: round 2 of 6") for _, r in reasons), reasons
