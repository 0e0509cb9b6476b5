"""Scheduled runs for real: `elopipe serve` on the session's Prefect server (`prefect_harness`),
a run triggered through the client, and Ctrl-C (SIGINT to serve's process group, as a terminal
sends it) stopping `serve` cleanly: exit 130, the schedule paused, no traceback, a run in
progress stopped at its next safe point.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO

pytestmark = pytest.mark.slow

SAMPLE = REPO / "sample_pgn"
BIN = Path(sys.executable).parent
# What a user must never see on the terminal (house rule; the Ctrl-C findings).
INTERNALS = ("Traceback", "KeyboardInterrupt", "Crash detected", "Flow run '", "Task run '")


def _serve(
    tmp_path: Path, url: str, name: str, *args: str, held: list[str] | None = None
) -> tuple[subprocess.Popen[bytes], Path]:
    """`elopipe serve` on `url`; `held`: the command of tests.flows.serve_held that holds it in
    its start-up window instead of the `elopipe` script."""
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "tests.flows.serve_held", *held] if held else [str(BIN / "elopipe")]
    python_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        [*command, "serve", str(tmp_path / "inbox"), "--name", name]
        + ["--db", str(tmp_path / "store.duckdb"), "--out", str(tmp_path / "out"), "--settle", "0.5", *args],
        # The runner asks the server for runs to start every second, not every 10 s (Prefect's
        # default): a triggered run starts at serve's next poll, and the test waits for it.
        env={**os.environ, "PREFECT_API_URL": url, "PYTHONPATH": python_path, "PREFECT_RUNNER_POLL_FREQUENCY": "1"},
        cwd=tmp_path,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the test sends it a terminal's Ctrl-C
    )
    return proc, log


def _wait_for(what: Callable[[], bool], proc: subprocess.Popen[bytes], log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop(proc)
            raise AssertionError(f"serve ended or stalled ({proc.returncode}):\n{log.read_text()[-4000:]}")
        time.sleep(0.2)


def _ctrl_c(proc: subprocess.Popen[bytes], log: Path) -> str:
    """SIGINT to serve's process group, as a terminal's Ctrl-C; its output once it has ended."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise AssertionError(f"serve did not stop on Ctrl-C:\n{log.read_text()[-4000:]}") from None
    return log.read_text()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


def _deployment(name: str):  # noqa: ANN202 - Prefect's DeploymentResponse
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_deployment_by_name(f"drop_folder/{name}")


def _serving(name: str) -> bool:
    """Registered, and its schedule active: serve registers it paused and resumes it once its
    runner has started."""
    try:
        return not _deployment(name).paused
    except Exception:  # not yet registered
        return False


def _statuses(db: Path) -> dict[str, str]:
    con = open_reader(db)
    try:
        rows = con.execute("SELECT regexp_extract(path, '[^/]+$'), status FROM source_files").fetchall()
    finally:
        con.close()
    return dict(rows)


def test_served_deployment_runs_when_triggered_and_ctrl_c_pauses_it(tmp_path: Path, prefect_harness: str) -> None:
    from prefect.deployments import run_deployment

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(SAMPLE / "wchcand22.pgn", inbox / "wchcand22.pgn")
    (inbox / "empty.pgn").write_bytes(b"")
    # A cron that will not fire during the test: the only run is the one triggered below.
    proc, log = _serve(tmp_path, prefect_harness, "triggered", "--cron", "0 0 1 1 *")
    try:
        _wait_for(lambda: _serving("triggered"), proc, log)
        deployment = _deployment("triggered")
        assert deployment.schedules and deployment.schedules[0].schedule.cron == "0 0 1 1 *"
        flow_run = run_deployment("drop_folder/triggered", timeout=300, poll_interval=1)
        assert flow_run.state is not None and flow_run.state.is_completed(), (flow_run.state, log.read_text()[-4000:])
        output = _ctrl_c(proc, log)
    finally:
        _stop(proc)

    assert proc.returncode == 130, output
    assert "stopped: the schedule of drop_folder/triggered is paused" in output
    assert not [w for w in INTERNALS if w in output], output
    # the drop folder's lines in elopipe's words, as `watch` says them: no logger name or level
    assert "| drop_folder: quarantined empty.pgn: empty file" in output, output
    assert "elopipe.ingest.watcher" not in output and "WARNING" not in output, output
    assert _deployment("triggered").paused
    assert (inbox / "processed" / "wchcand22.pgn").exists()
    assert (inbox / "quarantine" / "empty.pgn").exists()
    assert "empty file" in (inbox / "quarantine" / "empty.pgn.reason.txt").read_text(encoding="utf-8")
    # kept for the next run, or a `watch`, to move back one that a writer still held and finished
    kept = (inbox / ".elopipe" / "filed-away.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(line)["filed"] for line in kept} == {"processed/wchcand22.pgn", "quarantine/empty.pgn"}
    assert _statuses(tmp_path / "store.duckdb") == {"wchcand22.pgn": "loaded", "empty.pgn": "rejected"}
    assert any((tmp_path / "out" / "lists").glob("fide_*.csv"))


def test_ctrl_c_during_a_run_stops_it_at_a_safe_point(tmp_path: Path, prefect_harness: str) -> None:
    from prefect.deployments import run_deployment

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(SAMPLE / "wchcand22.pgn", inbox / "wchcand22.pgn")
    # The session's server creates no runs from schedules: the run is triggered, as in the UI.
    proc, log = _serve(tmp_path, prefect_harness, "busy", "--cron", "0 0 1 1 *")
    try:
        _wait_for(lambda: _serving("busy"), proc, log)
        run_deployment("drop_folder/busy", timeout=0)
        _wait_for(lambda: "ingest: 1 file" in log.read_text(), proc, log)  # the run is past its ingest
        output = _ctrl_c(proc, log)
    finally:
        _stop(proc)

    assert proc.returncode == 130, output
    assert "stopping: no new runs" in output
    assert "stopped: the schedule of drop_folder/busy is paused" in output
    assert not [w for w in INTERNALS if w in output], output
    assert _deployment("busy").paused
    # The batch's transaction was committed whole: the file is in the store. Its lists were not
    # all published, so it stays in the inbox: the next run takes it again and publishes them.
    assert _statuses(tmp_path / "store.duckdb") == {"wchcand22.pgn": "loaded"}
    assert (inbox / "wchcand22.pgn").exists() and not (inbox / "processed" / "wchcand22.pgn").exists()
    assert "left in the inbox for the next run: wchcand22.pgn" in output, output


def test_sigterm_stops_serve_in_one_line_and_pauses_its_schedule(tmp_path: Path, prefect_harness: str) -> None:
    """A service manager's stop: Prefect's runner exited 0 in silence (a hostile tester's finding);
    serve says it stopped, with the signal's name, and exits 130 as `run` and `watch` do."""
    from prefect.deployments import run_deployment

    (tmp_path / "inbox").mkdir()
    proc, log = _serve(tmp_path, prefect_harness, "termed", "--cron", "0 0 1 1 *")
    try:
        _wait_for(lambda: _serving("termed"), proc, log)
        # serving: a triggered run (of an empty inbox) has come and gone
        flow_run = run_deployment("drop_folder/termed", timeout=300, poll_interval=1)
        assert flow_run.state is not None and flow_run.state.is_completed(), log.read_text()[-4000:]
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
    finally:
        _stop(proc)
    output = log.read_text()
    assert proc.returncode == 130, output
    assert "stopped: the schedule of drop_folder/termed is paused (SIGTERM)" in output, output
    assert not [w for w in INTERNALS if w in output], output
    assert _deployment("termed").paused


def _state(flow_run_id: object):  # noqa: ANN202 - Prefect's State
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_flow_run(flow_run_id).state


def test_a_second_ctrl_c_during_a_run_ends_serve_at_once_and_pauses_its_schedule(
    tmp_path: Path, prefect_harness: str
) -> None:
    """Found by a hostile tester: it printed a CancelledError traceback from Prefect's control
    channel and left the schedule active. The run here waits for its files to settle, for an
    hour, deaf to Ctrl-C (a flow run takes it only once its stop handler is in place): it is in
    progress whenever the second Ctrl-C comes."""
    from prefect.deployments import run_deployment

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shutil.copy(SAMPLE / "wchcand22.pgn", inbox / "wchcand22.pgn")
    proc, log = _serve(tmp_path, prefect_harness, "aborted", "--cron", "0 0 1 1 *", "--settle", "3600")
    try:
        _wait_for(lambda: _serving("aborted"), proc, log)
        flow_run = run_deployment("drop_folder/aborted", timeout=0)
        _wait_for(lambda: _state(flow_run.id).is_running(), proc, log)
        os.killpg(proc.pid, signal.SIGINT)
        _wait_for(lambda: "stopping: no new runs" in log.read_text(), proc, log)
        output = _ctrl_c(proc, log)
    finally:
        _stop(proc)

    assert proc.returncode == 130, output
    assert "stopped: the run was cut short; the schedule of drop_folder/aborted is paused (Ctrl-C)" in output, output
    assert not [w for w in INTERNALS if w in output], output
    assert _deployment("aborted").paused
    assert _state(flow_run.id).is_cancelled()
    assert (inbox / "wchcand22.pgn").exists()  # not taken: the next run takes it


@pytest.mark.parametrize(
    ("where", "sig", "cause"),
    [
        ("registered", signal.SIGINT, "Ctrl-C"),
        ("registered", signal.SIGTERM, "SIGTERM"),
        ("starting", signal.SIGINT, "Ctrl-C"),
        ("starting", signal.SIGTERM, "SIGTERM"),
    ],
)
def test_a_stop_between_the_registration_and_the_runners_start_leaves_the_schedule_paused(
    tmp_path: Path, prefect_harness: str, where: str, sig: int, cause: str
) -> None:
    """Found by a hostile tester: a Ctrl-C or SIGTERM after the deployment was registered, before
    the runner had started, left its schedule active. `serve` is held there (serve_held) until
    the signal comes, sent to its process group as a terminal or a service manager would."""
    (tmp_path / "inbox").mkdir()
    marker = tmp_path / "held"
    name = f"held-{where}-{cause}"
    proc, log = _serve(tmp_path, prefect_harness, name, "--cron", "0 0 1 1 *", held=[where, str(marker)])
    try:
        _wait_for(marker.exists, proc, log)
        os.killpg(proc.pid, sig)
        proc.wait(120)
    finally:
        _stop(proc)
    output = log.read_text()
    assert proc.returncode == 130, output
    assert f"stopped: the schedule of drop_folder/{name} is paused ({cause})" in output, output
    assert not [w for w in INTERNALS if w in output], output
    assert _deployment(name).paused
