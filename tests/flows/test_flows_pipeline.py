"""The main job: `pipeline` on sample_pgn/ under the session's Prefect harness, and `elopipe run`."""

from __future__ import annotations

from pathlib import Path

import pytest

from elopipe.jobs.requests import RunRequest
from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO

pytestmark = pytest.mark.usefixtures("prefect_harness")

SAMPLE = REPO / "sample_pgn"


def _flow_runs_by_name() -> dict[str, list[str]]:
    """Flow name -> state types of its runs, from the Prefect API."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(limit=200)
        names = {f.id: f.name for f in client.read_flows(limit=200)}
    out: dict[str, list[str]] = {}
    for r in runs:
        out.setdefault(names.get(r.flow_id, "?"), []).append(r.state_type.value if r.state_type else "?")
    return out


def test_pipeline_on_sample_pgn_writes_lists_and_reports(tmp_path: Path) -> None:
    from flows.pipeline import pipeline

    db, out = tmp_path / "store.duckdb", tmp_path / "out"
    # 12 lists keep the test short; the default (every changed list) runs in the CLI tests.
    summary = pipeline(RunRequest((str(SAMPLE),), str(db), ("fide",), str(out), max_lists=12))

    assert summary.ingest.count("loaded") + summary.ingest.count("partial") == len(summary.ingest.files) > 0
    assert summary.ingest.games > 1000
    assert summary.rating is not None and summary.rating.changed["fide"], "a fresh store must produce lists"
    lists = sorted((out / "lists").glob("fide_*.csv"))
    assert lists, f"no list written; got {sorted(p.name for p in out.rglob('*'))[:20]}"
    assert (out / "index-fide.html").exists()
    assert any((out / "reports" / "fide").glob("*.html"))
    # Each list file has players; the store agrees with what was published.
    header, *rows = lists[-1].read_text(encoding="utf-8").splitlines()
    assert rows and "rating" in header.lower()
    con = open_reader(db)
    try:
        n_lists = con.execute("SELECT count(DISTINCT list_date) FROM rating_lists WHERE system = 'fide'").fetchone()[0]
    finally:
        con.close()
    assert n_lists >= 1
    by_name = _flow_runs_by_name()
    for name in ("pipeline", "ingest_files", "rate_lists", "publish"):
        assert "COMPLETED" in by_name.get(name, []), (name, by_name)

    # Same files again: nothing new is loaded, no list changes, and outputs are left as they are.
    mtimes = {p: p.stat().st_mtime_ns for p in lists}
    again = pipeline(RunRequest((str(SAMPLE),), str(db), ("fide",), str(out), max_lists=12))
    assert again.ingest.count("skipped") == len(again.ingest.files)
    assert again.rating is not None and again.rating.changed["fide"] == []
    assert again.published == []
    assert {p: p.stat().st_mtime_ns for p in lists} == mtimes
