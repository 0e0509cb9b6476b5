"""The publish stage of `run` and `watch` removes a list `rate` removed from the store (no game
is rated on it any more) from the output folder, and says so in a warning line: also when the
rating changed no list left in the store (issue #27, hx3). Under the session's Prefect harness."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from elopipe.jobs.requests import PublishListsRequest
from tests.helpers.publish_store import FEB, JAN, build_store

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_the_publish_stage_removes_a_list_the_store_no_longer_holds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from flows.publish import publish

    db, out = build_store(tmp_path / "s.duckdb"), tmp_path / "out"
    publish(PublishListsRequest(str(db), ("fide",), str(out), {"fide": [JAN, FEB]}))
    assert (out / "lists" / f"fide_{FEB}.html").exists()
    con = duckdb.connect(str(db))
    try:  # what `rate` leaves when no game is rated on the February list any more
        for table in ("rating_lists", "rating_changes", "tournament_ratings"):
            con.execute(f"DELETE FROM {table} WHERE system = 'fide' AND list_date = ?", [FEB])
    finally:
        con.close()
    with caplog.at_level("INFO", logger="elopipe.stages"):
        publish(PublishListsRequest(str(db), ("fide",), str(out), {"fide": []}))
    lines = [r.getMessage() for r in caplog.records if r.name == "elopipe.stages"]
    assert f"publish: fide: 1 list removed from {out} ({FEB}): no game is rated on it any more" in lines
    assert f"publish: fide: unchanged -> {out}" in lines
    assert not list((out / "lists").glob(f"fide_{FEB}.*"))
    assert f"fide_{FEB}" not in (out / "index-fide.html").read_text(encoding="utf-8")
