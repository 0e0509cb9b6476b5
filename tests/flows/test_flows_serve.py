"""Scheduled runs for real: `prefect server start`, `elopipe serve`, a run triggered by the client.

Slow (a real server runs its database migrations on a fresh PREFECT_HOME) but it runs in CI.
The server gets its own PREFECT_HOME in a temporary folder, so its SQLite database is used by
nobody else, and the fixture always stops it (and its children) however the test ends.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO

pytestmark = pytest.mark.slow

SAMPLE = REPO / "sample_pgn"
BIN = Path(sys.executable).parent
DEPLOYMENT = "drop_folder/elopipe-inbox"

# Services the test does not need; fewer writers on the server's SQLite file.
QUIET_SERVER = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_UI_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_LATE_RUNS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_PAUSE_EXPIRATIONS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_CANCELLATION_CLEANUP_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_FOREMAN_ENABLED": "false",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, grace: float = 20) -> None:
    """Stop `proc` and its process group: `sig`, then SIGKILL after `grace` seconds."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(grace)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


@pytest.fixture
def prefect_server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A real `prefect server start` on a free loopback port; yields (api_url, env for clients)."""
    port = _free_port()
    home = tmp_path / "prefect-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(QUIET_SERVER, PREFECT_HOME=str(home))
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so the fixture can stop all of it
    )
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 240
        while not _healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"prefect server did not start: {(tmp_path / 'server.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield url, {**env, "PREFECT_API_URL": url}
    finally:
        _stop(proc, signal.SIGTERM)
        log.close()


def test_served_deployment_runs_when_triggered_through_the_client(
    tmp_path: Path, prefect_server: tuple[str, dict[str, str]]
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    url, env = prefect_server
    inbox, db, out = tmp_path / "inbox", tmp_path / "store.duckdb", tmp_path / "out"
    inbox.mkdir()
    shutil.copy(SAMPLE / "wchcand22.pgn", inbox / "wchcand22.pgn")
    (inbox / "empty.pgn").write_bytes(b"")
    serve_log = (tmp_path / "serve.log").open("w")
    serve = subprocess.Popen(
        # A cron that will not fire during the test: the only run is the one triggered below.
        [str(BIN / "elopipe"), "serve", str(inbox), "--cron", "0 0 1 1 *", "--db", str(db), "--out", str(out)]
        + ["--settle", "0.5"],
        env=env,
        cwd=tmp_path,
        stdout=serve_log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        with temporary_settings(updates={PREFECT_API_URL: url}):
            deadline = time.monotonic() + 120
            with get_client(sync_client=True) as client:
                while True:
                    try:
                        deployment = client.read_deployment_by_name(DEPLOYMENT)
                        break
                    except Exception:
                        if serve.poll() is not None or time.monotonic() > deadline:
                            raise AssertionError((tmp_path / "serve.log").read_text()) from None
                        time.sleep(0.5)
            assert deployment.schedules and deployment.schedules[0].schedule.cron == "0 0 1 1 *"
            flow_run = run_deployment(DEPLOYMENT, timeout=300, poll_interval=1)
        assert flow_run.state is not None and flow_run.state.is_completed(), (
            flow_run.state,
            (tmp_path / "serve.log").read_text()[-4000:],
        )
    finally:
        _stop(serve, signal.SIGINT)
        serve_log.close()

    assert (inbox / "processed" / "wchcand22.pgn").exists()
    assert (inbox / "quarantine" / "empty.pgn").exists()
    assert "empty file" in (inbox / "quarantine" / "empty.pgn.reason.txt").read_text(encoding="utf-8")
    con = open_reader(db)
    try:
        statuses = dict(con.execute("SELECT regexp_extract(path, '[^/]+$'), status FROM source_files").fetchall())
        n_lists = con.execute("SELECT count(*) FROM rating_lists WHERE system = 'fide'").fetchone()[0]
    finally:
        con.close()
    assert statuses == {"wchcand22.pgn": "loaded", "empty.pgn": "rejected"}
    assert n_lists > 0
    assert any((out / "lists").glob("fide_*.csv"))
