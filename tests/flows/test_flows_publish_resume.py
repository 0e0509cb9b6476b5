"""`run` finishes a publish that a full disk interrupted, even when no list changed (issue 12,
item 6): the `pipeline` flow under the session's Prefect harness."""

from __future__ import annotations

import datetime as dt
import errno
from pathlib import Path

import pytest

import elopipe.publish.atomic as atomic
import elopipe.publish.outputs as outputs
from elopipe.jobs.requests import RunRequest
from elopipe.publish.plan import pending_dates, published_dates
from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO, TEST_DATA

pytestmark = pytest.mark.usefixtures("prefect_harness")

SAMPLE = REPO / "sample_pgn"
FILES = [
    str(SAMPLE / "fide_candidates_2022_madrid_spain.pgn"),
    str(TEST_DATA / "fra_sharly_trf26_individual_nrs_240_byes.trf"),
]
FORMATS = ("csv", "parquet", "txt", "html")


def _list_dates(db: Path) -> list[str]:
    con = open_reader(db)
    try:
        rows = con.execute("SELECT DISTINCT list_date FROM rating_lists WHERE system = 'fide' ORDER BY 1").fetchall()
    finally:
        con.close()
    return [r[0].isoformat() for r in rows]


def test_run_after_a_full_disk_writes_every_missing_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.pipeline import pipeline

    db, out = tmp_path / "store.duckdb", tmp_path / "out"
    real, count = atomic._fsync, {"lists": 0}

    def fsync(path: Path) -> None:
        # The disk fills up at the 7th list file: the first list is whole, the second half done.
        if path.parent.name == "lists":
            count["lists"] += 1
            if count["lists"] == 7:
                raise OSError(errno.ENOSPC, "No space left on device")
        real(path)

    monkeypatch.setattr(atomic, "_fsync", fsync)
    # one writer thread, so that the 7th list file is the second list's, whatever the machine's load
    monkeypatch.setattr(outputs, "default_workers", lambda: 1)
    first = pipeline(RunRequest(tuple(FILES), str(db), ("fide",), str(out)))
    dates = _list_dates(db)
    assert len(dates) >= 3, dates
    assert first.rating is not None and first.rating.changed["fide"]
    assert len(first.publish_failures) == 1
    failure = first.publish_failures[0]
    assert (
        failure.startswith(f"fide: cannot write {out / 'lists'}/fide_{dates[1]}.")
        and "No space left on device" in failure
    )
    assert f"{len(dates) - 1} lists left to write, the next run writes them" in failure
    assert published_dates(out, db, "fide") == {first.rating.changed["fide"][0]}
    assert not [p for p in out.rglob("*") if atomic.TMP_MARK in p.name]

    monkeypatch.undo()
    again = pipeline(RunRequest(tuple(FILES), str(db), ("fide",), str(out)))
    assert again.rating is not None and again.rating.changed["fide"] == [], "nothing changed in the store"
    assert again.publish_failures == []
    lists = {p.name for p in again.published if p.parent.name == "lists"}
    assert lists == {f"fide_{d}.{f}" for d in dates[1:] for f in FORMATS}, "exactly the missing lists"
    assert {p.name for p in (out / "lists").iterdir()} == {f"fide_{d}.{f}" for d in dates for f in FORMATS}
    assert {d.isoformat() for d in published_dates(out, db, "fide")} == set(dates)
    assert pending_dates(out, db, "fide") == set()

    third = pipeline(RunRequest(tuple(FILES), str(db), ("fide",), str(out)))
    assert third.published == [], "once finished, an unchanged store publishes nothing"


def test_run_publishes_the_lists_a_rate_on_its_own_changed(tmp_path: Path) -> None:
    """`elopipe rate` (or a run killed between rating and publishing) rewrote lists that no
    publish saw: the next run writes them, although its own rating changes nothing."""
    from typer.testing import CliRunner

    from elopipe.cli.main import app
    from elopipe.publish import write_list
    from flows.pipeline import pipeline

    db, out = tmp_path / "store.duckdb", tmp_path / "out"
    pipeline(RunRequest(tuple(FILES[:1]), str(db), ("fide",), str(out)))
    runner = CliRunner()
    for args in (["ingest", FILES[1]], ["rate", "--system", "fide"]):
        res = runner.invoke(app, [*args, "--db", str(db)])
        assert res.exit_code == 0, res.output
    stale = {p.name: p.read_bytes() for p in (out / "lists").glob("*.csv")}

    again = pipeline(RunRequest(tuple(FILES), str(db), ("fide",), str(out)))
    assert again.rating is not None and again.rating.changed["fide"] == []
    assert again.published, "the lists the rate on its own changed were not published"
    dates = _list_dates(db)
    assert {d.isoformat() for d in published_dates(out, db, "fide")} == set(dates)
    con = open_reader(db)
    try:
        for d in dates:
            fresh = write_list(con, "fide", dt.date.fromisoformat(d), tmp_path / "fresh", ["csv"])[0]
            assert (out / "lists" / fresh.name).read_bytes() == fresh.read_bytes(), f"{fresh.name} is stale"
    finally:
        con.close()
    assert any(stale.get(name) != (out / "lists" / name).read_bytes() for name in stale) or len(stale) < len(dates)
