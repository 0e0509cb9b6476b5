"""flows.prefect_env: Prefect's environment set before Prefect is imported."""

from __future__ import annotations

import os

import pytest

from flows import prefect_env

LEVEL = "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL"


def test_verbose_survives_the_quiet_call_that_importing_flows_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """`elopipe run -v` calls configure(quiet=False); importing `flows` then calls configure()
    again. Prefect's INFO log must stay on (it was switched back to WARNING)."""
    monkeypatch.setenv(LEVEL, "-")  # so that monkeypatch restores the variable, set or not
    monkeypatch.delenv(LEVEL)
    prefect_env.configure(quiet=False)
    prefect_env.configure()
    assert os.environ[LEVEL] == "INFO"


def test_quiet_by_default_and_a_user_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LEVEL, "-")  # so that monkeypatch restores the variable, set or not
    monkeypatch.delenv(LEVEL)
    prefect_env.configure()
    assert os.environ[LEVEL] == "WARNING"
    monkeypatch.setenv(LEVEL, "DEBUG")
    prefect_env.configure(quiet=False)
    assert os.environ[LEVEL] == "DEBUG"


def test_loading_prefect_pauses_the_collector_then_freezes_what_was_loaded() -> None:
    """Prefect's import runs without cyclic collections, and what it built is left out of every
    later one (frozen); the collector is back on afterwards, and stays off if it was off."""
    import gc

    assert gc.isenabled()
    before = gc.get_freeze_count()
    with prefect_env.loading_prefect():
        assert not gc.isenabled()
        loaded = [[] for _ in range(10)]  # objects the collector tracks, made while loading
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(loaded)
    gc.unfreeze()  # the test process's heap back as it was for the other tests
    gc.disable()
    try:
        with prefect_env.loading_prefect():
            pass
        assert not gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


SERVER_APP = """
import gc, sys
from flows import prefect_env

app = prefect_env.server_app()
assert "prefect.server.api.server" in sys.modules and type(app).__name__ == "FastAPI"
assert gc.isenabled() and gc.get_freeze_count() > 100_000  # Prefect's server code, frozen
print("ok")
"""


@pytest.mark.slow
def test_the_temporary_servers_app_is_prefects_built_with_the_collector_paused(tmp_path) -> None:
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_PROFILE")}
    env["PREFECT_HOME"] = str(tmp_path / "home")
    proc = subprocess.run([sys.executable, "-c", SERVER_APP], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


TEMPORARY_SERVER = """
import json, os, sys, urllib.request
from elopipe.runtime import lifeline
from flows import prefect_env

with prefect_env.prefect_api() as api:
    assert "prefect" not in sys.modules  # started before Prefect is imported, without its server code
    assert os.environ["PREFECT_API_URL"] == api.url and api.server is not None
    api.wait_ready()
    assert prefect_env._answers(api.url + "/health")
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:  # Prefect's client finds it through PREFECT_API_URL
        assert client.api_url.host == "127.0.0.1" and client.hello().status_code == 200
        # what elopipe never uses is off on it (configure()'s defaults): automations, block types
        assert not client.read_block_types()
    with urllib.request.urlopen(api.url + "/admin/settings") as resp:
        assert json.load(resp)["server"]["services"]["triggers"]["enabled"] is False
    pid = api.server.process.pid
assert "PREFECT_API_URL" not in os.environ
assert not lifeline.alive(pid)
print("ok")
"""


@pytest.mark.slow
def test_prefect_api_starts_a_temporary_server_at_once_and_stops_it(tmp_path) -> None:
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_PROFILE")}
    env["PREFECT_HOME"] = str(tmp_path / "home")
    proc = subprocess.run(
        [sys.executable, "-c", TEMPORARY_SERVER], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_a_server_that_cannot_start_is_one_line(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(prefect_env, "configured_api_url", lambda: None)
    # A database URL Prefect's server cannot open: it stops at start-up.
    monkeypatch.setenv("PREFECT_API_DATABASE_CONNECTION_URL", "sqlite+aiosqlite:////nonexistent/folder/prefect.db")
    with pytest.raises(prefect_env.PrefectServerError) as failed, prefect_env.prefect_api() as api:
        api.wait_ready()
    message = str(failed.value)
    assert message.startswith("Prefect's temporary server stopped at start-up (exit ")
    assert message.endswith("): unable to open database file"), message  # no traceback, no class name
