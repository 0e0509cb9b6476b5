"""A stop request (Ctrl-C) after ingest: `pipeline` stops at the next safe point, between two
systems' rating, and publishes nothing, but records the lists it changed for the next run, which
publishes them; `elopipe run` then exits 130. And a publish whose changed
lists are not in the store says so, instead of "no list". Under the session's Prefect harness."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import typer

from elopipe.jobs.requests import PublishListsRequest, RunRequest
from elopipe.publish.plan import LEDGER, pending_dates
from elopipe.runtime.interrupt import clear_stop, request_stop
from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO

pytestmark = pytest.mark.usefixtures("prefect_harness")

SMALL = REPO / "sample_pgn" / "wchcand22.pgn"
EARLIER = REPO / "sample_pgn" / "wjun19.pgn"  # with SMALL, the fide lists from 2019-11 to 2022-08 change


def test_a_stop_during_rating_ends_the_run_before_the_next_system_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import elopipe.rating.run as rating
    from elopipe.cli.commands.run import Timing, _report
    from flows.pipeline import pipeline

    real_rate = rating.rate

    def rate_then_ctrl_c(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        summary = real_rate(*args, **kwargs)
        request_stop()  # as if Ctrl-C came while the first system was being rated
        return summary

    monkeypatch.setattr(rating, "rate", rate_then_ctrl_c)
    db, out = tmp_path / "store.duckdb", tmp_path / "out"
    try:
        summary = pipeline(RunRequest((str(EARLIER), str(SMALL)), str(db), ("fide", "fide-rapid"), str(out)))
    finally:
        clear_stop()

    assert summary.interrupted and summary.stopped
    assert summary.ingest.count("loaded") == 2
    assert summary.rating is not None and list(summary.rating.changed) == ["fide"]  # fide-rapid not reached
    # nothing published; the changed lists are recorded pending in the folder's ledger, for the next run
    assert summary.published == [] and [p.name for p in out.iterdir()] == [LEDGER]
    changed = summary.rating.changed["fide"]
    assert len(changed) >= 2 and pending_dates(out, db, "fide") == set(changed)
    con = open_reader(db)
    try:
        systems = {r[0] for r in con.execute("SELECT DISTINCT system FROM rating_lists").fetchall()}
    finally:
        con.close()
    assert systems == {"fide"}  # the first system's rating was committed whole

    with pytest.raises(typer.Exit) as stopped:
        _report(summary, db, Timing(0.0, 0.0, 0.0, 1.0))
    assert stopped.value.exit_code == 130

    # The next run rates the rest and publishes what the stopped one did not.
    monkeypatch.setattr(rating, "rate", real_rate)
    again = pipeline(RunRequest((str(EARLIER), str(SMALL)), str(db), ("fide", "fide-rapid"), str(out)))
    assert not again.interrupted and again.published
    assert again.rating is not None and again.rating.changed["fide"] == []  # fide was rated before
    # every list the stopped run changed, not only the latest (a new folder's first publish)
    assert {f"fide_{d}.csv" for d in changed} <= {p.name for p in again.published}
    assert pending_dates(out, db, "fide") == set()


def pipeline_run(db: Path, out: Path):  # noqa: ANN201 - flows.pipeline.PipelineSummary
    """`pipeline` on EARLIER and SMALL, FIDE standard only: its rating changes many lists."""
    from flows.pipeline import pipeline

    summary = pipeline(RunRequest((str(EARLIER), str(SMALL)), str(db), ("fide",), str(out)))
    assert summary.rating is not None
    return summary


def test_a_publish_whose_changed_list_is_not_in_the_store_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from flows.pipeline import pipeline
    from flows.publish import publish

    db, out = tmp_path / "store.duckdb", tmp_path / "out"
    pipeline(RunRequest((str(SMALL),), str(db), ("fide",), str(out)))
    missing = dt.date(2001, 1, 1)
    with caplog.at_level("INFO", logger="elopipe.stages"):
        written, failures = publish(
            PublishListsRequest(str(db), ("fide", "fide-blitz"), str(out), {"fide": [missing], "fide-blitz": []})
        )

    assert written == [] and failures == []
    lines = [r.getMessage() for r in caplog.records if r.name == "elopipe.stages"]
    said = f"publish: fide: the rating changed 1 list, but no rating list for system 'fide' dated {missing}; its "
    assert any(line.startswith(said) for line in lines), lines
    assert f"publish: fide: not published; fide-blitz: no list in the store -> {out}" in lines


def test_an_abort_in_one_systems_publish_leaves_the_others_lists_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by a hostile test: a second Ctrl-C while the first system was published lost the
    changed lists of the systems after it (the next run's rating changed nothing, and they were
    never published). Every system's changed lists are pending before the first is written."""
    import flows.publish as publish_flow

    db = tmp_path / "store.duckdb"
    first = pipeline_run(db, tmp_path / "first")
    changed = first.rating.changed["fide"]
    assert len(changed) >= 2

    def aborted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt  # a second Ctrl-C while this system's lists are written

    monkeypatch.setattr(publish_flow, "publish_system", aborted)
    out = tmp_path / "out"
    request = PublishListsRequest(str(db), ("fide-rapid", "fide"), str(out), {"fide-rapid": [], "fide": changed})
    with pytest.raises(KeyboardInterrupt):
        publish_flow.publish(request)
    assert pending_dates(out, db, "fide") == set(changed)
