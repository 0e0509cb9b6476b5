"""flows.prefect_env: Prefect's environment set before Prefect is imported."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flows import prefect_env, prefect_server
from tests.helpers.paths import REPO
from tests.helpers.prefect_home import keep_migrated, new_home

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
from flows import prefect_server

from datetime import timedelta

app = prefect_server.server_app()
assert "prefect.server.api.server" in sys.modules and type(app).__name__ == "FastAPI"
assert gc.isenabled() and gc.get_freeze_count() > 100_000  # Prefect's server code, frozen
from prefect.server.api import background_workers, server
from prefect.settings import Settings

# the routers a command calls come first, and every router of Prefect's API is still there
used = list(prefect_server._ROUTERS_USED)
assert [r.prefix for r in server.API_ROUTERS[: len(used)]] == used
assert len({id(r) for r in server.API_ROUTERS}) == len(server.API_ROUTERS) > len(used) + 20
# the background worker looks every 2 s; the settings' cache key is Prefect's own again
assert background_workers.Worker.keywords == {
    "minimum_check_interval": timedelta(seconds=2), "scheduling_resolution": timedelta(seconds=2)
}
# docket's worker, without its cancellation listener (Prefect's server cancels no docket task)
import docket
assert issubclass(background_workers.Worker.func, docket.Worker)
assert background_workers.Worker.func._cancellation_listener is not docket.Worker._cancellation_listener
assert Settings().hash_key() != "elopipe-temporary-server"
print("ok")
"""


class _Router:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix


def test_the_routers_a_command_calls_come_first_the_others_keep_their_order() -> None:
    routers = tuple(_Router(p) for p in ["/flows", "/deployments", "/logs", "", "/events", "/ui/flows", "", "/admin"])
    ordered = prefect_server._routers_used_first(routers)
    assert sorted(map(id, ordered)) == sorted(map(id, routers))  # the same routers, none lost or added
    assert [r.prefix for r in ordered] == ["/logs", "/flows", "/admin", "/events", "/deployments", "", "/ui/flows", ""]
    assert [r for r in ordered if r.prefix == ""] == [routers[3], routers[6]]  # in Prefect's order


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
from flows import prefect_env, prefect_server

with prefect_env.prefect_api() as api:
    assert "prefect" not in sys.modules  # started before Prefect is imported, without its server code
    assert os.environ["PREFECT_API_URL"] == api.url and api.server is not None
    api.wait_ready()
    assert prefect_server.answers(api.url + "/health")
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
    env["PREFECT_HOME"] = str(home := new_home(tmp_path / "home"))
    proc = subprocess.run(
        [sys.executable, "-c", TEMPORARY_SERVER], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    keep_migrated(home)


def test_a_server_that_cannot_start_is_one_line(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(prefect_env, "configured_api_url", lambda: None)
    # A database URL Prefect's server cannot open: it stops at start-up.
    monkeypatch.setenv("PREFECT_API_DATABASE_CONNECTION_URL", "sqlite+aiosqlite:////nonexistent/folder/prefect.db")
    with pytest.raises(prefect_server.PrefectServerError) as failed, prefect_env.prefect_api() as api:
        api.wait_ready()
    message = str(failed.value)
    assert message.startswith("Prefect's temporary server stopped at start-up (exit ")
    assert message.endswith("): unable to open database file"), message  # no traceback, no class name


FORKED_SERVER = """
import fcntl, os, sys
from elopipe.runtime import lifeline
from flows import prefect_env, prefect_server

lock = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)  # as the store's write lock is held during `run`
fcntl.flock(lock, fcntl.LOCK_EX)
with prefect_env.prefect_api(fork=True) as api:
    assert api.server is not None and api.server.process is None  # not started before launch()
    assert os.environ["PREFECT_API_URL"] == api.url and "prefect" not in sys.modules
    api.launch()
    pid = api.server.process.pid
    assert "prefect" in sys.modules and "fastapi" in sys.modules and "prefect.server.api.server" not in sys.modules
    api.wait_ready()
    assert prefect_server.answers(api.url + "/health")
    # the child keeps none of this process's files: the lock file's description is ours alone
    held = {os.path.realpath(f"/proc/{pid}/fd/" + fd) for fd in os.listdir(f"/proc/{pid}/fd")}
    assert os.path.realpath(sys.argv[1]) not in held, held
    assert os.getsid(pid) == pid != os.getsid(0)  # its own session: a Ctrl-C in the terminal is ours
    from prefect.client.orchestration import get_client

    from prefect.settings import PREFECT_CLIENT_CSRF_SUPPORT_ENABLED

    with get_client(sync_client=True) as client:
        assert client.hello().status_code == 200
    # a server with no UI: Prefect's clients ask it for no CSRF token (a request each)
    assert PREFECT_CLIENT_CSRF_SUPPORT_ENABLED.value() is False
assert not lifeline.alive(pid) and "PREFECT_API_URL" not in os.environ
assert "PREFECT_CLIENT_CSRF_SUPPORT_ENABLED" not in os.environ
print("ok")
"""

FORKED_SERVER_FAILS = """
from flows import prefect_env, prefect_server

try:
    with prefect_env.prefect_api(fork=True) as api:
        api.wait_ready()
except prefect_server.PrefectServerError as exc:
    print(exc)
"""


@pytest.mark.slow
def test_run_forks_its_server_after_importing_prefect_and_the_server_keeps_none_of_its_files(tmp_path) -> None:
    """`prefect_api(fork=True)` (elopipe run): the server is forked once Prefect is imported, and
    does not import it again; the fork keeps no file of the command (the store's lock would
    outlive a killed run), runs in its own session and ends with the block; a failed start is
    one line, as with a new interpreter."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_PROFILE")}
    env["PREFECT_HOME"] = str(home := new_home(tmp_path / "home"))
    run = {"env": env, "capture_output": True, "text": True, "timeout": 300}
    proc = subprocess.run([sys.executable, "-c", FORKED_SERVER, str(tmp_path / "s.duckdb.lock")], **run)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    keep_migrated(home)
    # A database URL Prefect's server cannot open: it stops at start-up.
    env["PREFECT_API_DATABASE_CONNECTION_URL"] = "sqlite+aiosqlite:////nonexistent/folder/prefect.db"
    proc = subprocess.run([sys.executable, "-c", FORKED_SERVER_FAILS], **run)
    message = proc.stdout.strip()
    assert message.startswith("Prefect's temporary server stopped at start-up (exit "), proc.stdout + proc.stderr
    assert message.endswith("): unable to open database file"), message  # no traceback, no class name


def test_an_error_raised_while_prefect_handled_a_sigterm_counts_as_the_sigterm() -> None:
    """A SIGTERM landing while Prefect creates a task run: its clean-up raises "Task run is not
    set" with the TerminationSignal as context; `run` must still say "stopped (SIGTERM)", exit 130
    (CI saw "pipeline failed: Task run is not set", exit 1)."""
    from prefect.exceptions import TerminationSignal

    from flows.prefect_env import is_termination

    def clean_up_after_signal() -> None:
        try:
            raise TerminationSignal(signal=15)
        except TerminationSignal:
            raise ValueError("Task run is not set")  # noqa: B904 - Prefect's own code does this

    with pytest.raises(ValueError) as caught:
        clean_up_after_signal()
    assert is_termination(caught.value)
    assert is_termination(TerminationSignal(signal=15))
    assert not is_termination(ValueError("Task run is not set"))
    unrelated = ValueError("outer")
    unrelated.__context__ = KeyError("inner")
    assert not is_termination(unrelated)


def test_prefects_service_lines_stay_off_the_terminal() -> None:
    """Prefect's background services log under their class names ('EventsWorker - Still
    processing items' after a Ctrl-C): off the terminal as Prefect's other lines, and elopipe's
    own records still shown."""
    import logging

    import prefect

    def record(name: str, path: str) -> logging.LogRecord:
        return logging.LogRecord(name, logging.WARNING, path, 1, "Still processing items", None, None)

    services = record("EventsWorker", str(Path(prefect.__file__).parent / "_internal" / "concurrency" / "services.py"))
    ours = record("elopipe.ingest.watcher.batch", str(REPO / "elopipe" / "ingest" / "watcher" / "batch.py"))
    keep = prefect_env._console_filter.everything_from_prefect
    try:
        prefect_env.quiet_prefect_console(everything=True)
        assert not prefect_env._console_filter.filter(services)
        assert not prefect_env._console_filter.filter(record("prefect.flow_runs", "x.py"))
        assert prefect_env._console_filter.filter(ours)
        prefect_env.quiet_prefect_console(everything=False)  # -v: Prefect's lines shown
        assert prefect_env._console_filter.filter(services)
    finally:
        prefect_env.quiet_prefect_console(everything=keep)
