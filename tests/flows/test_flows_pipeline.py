"""The main job: `pipeline` on sample_pgn/ under the session's Prefect harness, and `elopipe run`."""

from __future__ import annotations

import time
from pathlib import Path
from uuid import UUID

import pytest

from elopipe.jobs.requests import RunRequest
from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO

pytestmark = pytest.mark.usefixtures("prefect_harness")

SAMPLE = REPO / "sample_pgn"


def _task_runs_of(flow_run_id: UUID, names: set[str]) -> dict[str, str]:
    """Task-run name -> state type of the task runs of flow run `flow_run_id`, once `names` are all
    there in a final state (the server records task runs from their events, a moment after
    the flow run ends); what it holds after a minute otherwise."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    only_this_run = FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
    deadline = time.monotonic() + 60
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_task_runs(flow_run_filter=only_this_run, limit=200)
            found = {r.name: r.state_type.value if r.state_type else "?" for r in runs}
            if names <= found.keys() and all(found[n] in ("COMPLETED", "FAILED", "CRASHED") for n in names):
                return found
            if time.monotonic() > deadline:
                return found
            time.sleep(0.2)


def test_pipeline_on_sample_pgn_writes_lists_and_reports(tmp_path: Path) -> None:
    from flows.pipeline import pipeline

    db, out = tmp_path / "store.duckdb", tmp_path / "out"
    # 12 lists keep the test short; the default (every changed list) runs in the CLI tests.
    state = pipeline(RunRequest((str(SAMPLE),), str(db), ("fide",), str(out), max_lists=12), return_state=True)
    assert state.is_completed(), state
    summary = state.result()

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
    # One flow run: its stages are its task runs (no subflow, which would add a task run of its own).
    flow_run_id = state.state_details.flow_run_id
    assert flow_run_id is not None
    stages = {"ingest", "rate fide", "publish fide"}
    assert _task_runs_of(flow_run_id, stages) == dict.fromkeys(stages, "COMPLETED")

    # Same files again: nothing new is loaded, no list changes, and outputs are left as they are.
    mtimes = {p: p.stat().st_mtime_ns for p in lists}
    again = pipeline(RunRequest((str(SAMPLE),), str(db), ("fide",), str(out), max_lists=12))
    assert again.ingest.count("skipped") == len(again.ingest.files)
    assert again.rating is not None and again.rating.changed["fide"] == []
    assert again.published == []
    assert {p: p.stat().st_mtime_ns for p in lists} == mtimes
