"""How elopipe runs Prefect: quiet logs, analytics off, and knowing whether a server is there.

Prefect reads its settings from `PREFECT_*` environment variables when it is first imported,
so `configure()` must run before `import prefect`; `flows/__init__.py` calls it, and the CLI
imports `flows` only inside its commands. Everything here is plain Python and never imports
Prefect itself, so `elopipe --help` stays fast.

Logging: Prefect's console handler shows warnings and errors only; its API handler still sends
every INFO line to the server, so the Prefect UI keeps the full log of a run. Our own stage lines
("ingest: 12 files loaded ...") go through the `elopipe.stages` logger, printed one per stage.

Server: with `PREFECT_API_URL` unset, Prefect starts a temporary ("ephemeral") API server in a
subprocess for the life of the process, storing runs in `PREFECT_HOME` (default `~/.prefect`).
Its first start on a fresh home runs the database migrations, which takes longer than Prefect's
default 20 s start-up timeout on a slow machine, so we raise it. Prefect stops that server only
at a normal exit: `temporary_server_dies_with_us()` makes it end with this process after a
`kill -9` too. Schedules need a real server (`prefect server start`); `api_status()` says
whether one is reachable.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading
import types
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

STAGE_LOGGER = "elopipe.stages"

# Always forced: nobody asked elopipe to send usage data anywhere.
_FORCED = {
    "DO_NOT_TRACK": "1",  # Prefect's client-side SDK analytics
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",  # the server's start-up ping
}

# Defaults a user may override in their environment.
_DEFAULTS = {
    "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "WARNING",
    "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_TELEMETRY_ENABLE_RESOURCE_METRICS": "false",
    # The ephemeral server's SQLite waits for a lock instead of failing with "database is locked"
    # when the flow's event and log writers hit it at the same time.
    "PREFECT_SERVER_DATABASE_TIMEOUT": "30",
    "PREFECT_SERVER_DATABASE_CONNECTION_TIMEOUT": "30",
}


def configure(quiet: bool = True) -> None:
    """Set Prefect's environment before Prefect is imported.

    `quiet` False sets the console log level to INFO (unless the environment sets it); a later
    quiet call keeps it. Safe to call twice. If Prefect
    was already imported, the forced analytics switches still apply to anything that reads the
    environment later, and the rest is ignored by Prefect's cached settings (a warning says so).
    """
    # When Prefect itself loads a flow (a worker, `prefect deploy`), it was imported first: the
    # analytics switches still reach it through the environment, the log levels are its own.
    os.environ.update(_FORCED)
    if not quiet:
        # set, not left unset: importing `flows` calls configure() again, quiet, and would set WARNING
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "INFO")
    for key, value in _DEFAULTS.items():
        os.environ.setdefault(key, value)
    _install_stage_handler()


def _install_stage_handler() -> None:
    logger = logging.getLogger(STAGE_LOGGER)
    if any(getattr(h, "_elopipe_stage", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s | %(message)s", datefmt="%H:%M:%S"))
    handler._elopipe_stage = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    # Stage lines are ours; Prefect's root handler must not print them a second time.
    logger.propagate = False


@dataclass(frozen=True)
class ApiStatus:
    """Whether a Prefect API server is configured and answering."""

    url: str | None  # PREFECT_API_URL, None when unset (ephemeral mode)
    reachable: bool
    detail: str  # one line for the user


def api_status(timeout: float = 3.0) -> ApiStatus:
    """Check `PREFECT_API_URL` (environment, else the active Prefect profile) with GET /health.

    Never raises; never starts a temporary server.
    """
    url = os.environ.get("PREFECT_API_URL") or _profile_api_url()
    if not url:
        return ApiStatus(None, False, "PREFECT_API_URL is not set (Prefect would use a temporary server)")
    health = url.rstrip("/") + "/health"
    try:
        with urllib.request.urlopen(health, timeout=timeout) as resp:  # noqa: S310 - a user-set URL
            ok = resp.status == 200
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return ApiStatus(url, False, f"no Prefect server answers at {url} ({_reason(exc)})")
    if not ok:
        return ApiStatus(url, False, f"the Prefect server at {url} is not healthy")
    return ApiStatus(url, True, f"Prefect server at {url}")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return str(exc)


def _profile_api_url() -> str | None:
    """PREFECT_API_URL from the active profile in `$PREFECT_HOME/profiles.toml`, read without
    importing Prefect (set by `prefect config set PREFECT_API_URL=...`)."""
    import tomllib

    home = os.environ.get("PREFECT_HOME") or os.path.join(os.path.expanduser("~"), ".prefect")
    path = os.environ.get("PREFECT_PROFILES_PATH") or os.path.join(home, "profiles.toml")
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return None
    active = os.environ.get("PREFECT_PROFILE") or data.get("active")
    profile = data.get("profiles", {}).get(active or "", {})
    value = profile.get("PREFECT_API_URL")
    return str(value) if value else None


class _LifelineSubprocess:
    """`subprocess`, as Prefect's server module sees it, with a Popen that starts uvicorn under
    `python -m elopipe.runtime.lifeline OUR_PID`: the server then ends with this process (see
    elopipe.runtime.lifeline). Any other command, and every other name, is the real module's."""

    def __init__(self, real: types.ModuleType) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def Popen(self, args: Any, *rest: Any, **kwargs: Any) -> subprocess.Popen[Any]:  # noqa: N802 - the module's name
        if isinstance(args, list) and args[1:3] == ["-m", "uvicorn"]:
            args = [args[0], "-m", "elopipe.runtime.lifeline", str(os.getpid()), *args[1:]]
            # Out of the terminal's process group: a Ctrl-C is ours to handle (finish the batch,
            # then exit); the server must answer until then. It still ends with us (lifeline).
            kwargs.setdefault("start_new_session", True)
        proc: subprocess.Popen[Any] = self._real.Popen(args, *rest, **kwargs)
        return proc


def temporary_server_dies_with_us() -> None:
    """Make Prefect's temporary API server end with this process, even on `kill -9` (Prefect
    stops it only at a normal exit). Imports Prefect's server module; call it after
    `configure()` and before any flow runs. Does nothing when a server is configured
    (PREFECT_API_URL) or if already done."""
    if os.environ.get("PREFECT_API_URL") or _profile_api_url():
        return
    # Prefect starts uvicorn with subprocess.Popen from whichever thread first needs the API; the
    # only hook is the module's `subprocess` name (a parent-death signal would follow the thread).
    from prefect.server.api import server

    # `server.subprocess` is the stdlib module as Prefect's server module imported it (no re-export to
    # type-check against): the ignores cover reading and replacing that module-level name
    if not isinstance(server.subprocess, _LifelineSubprocess):  # type: ignore[attr-defined]
        server.subprocess = _LifelineSubprocess(server.subprocess)  # type: ignore[assignment, attr-defined]


def start_api_early() -> Callable[[], None]:
    """Boot Prefect's temporary API server in the background; return a function that waits for it.

    With no server configured, Prefect starts its temporary server only when the first flow run
    needs it. Starting it now lets its subprocess boot on another core while this process is
    still importing the flows. Call the returned function before running a flow. Failures are
    swallowed here: the flow run then starts the server itself and reports any error properly.
    With a server configured (PREFECT_API_URL) this does nothing.
    """
    if os.environ.get("PREFECT_API_URL") or _profile_api_url():
        return lambda: None

    def boot() -> None:
        try:
            temporary_server_dies_with_us()
            from prefect.server.api.server import SubprocessASGIServer

            SubprocessASGIServer().start()  # the same instance the flow's client will use
        except Exception:  # noqa: BLE001 - reported by the flow run, which retries the start
            logging.getLogger(__name__).debug("early start of Prefect's server failed", exc_info=True)

    thread = threading.Thread(target=boot, name="prefect-api-boot", daemon=True)
    thread.start()
    return thread.join


@contextlib.contextmanager
def local_run_settings() -> Iterator[None]:
    """Settings for flow runs this process starts itself (`elopipe run`, `elopipe watch`).

    With Prefect's temporary server, flow-run heartbeats are switched off: they tell a server
    that a run's process is alive, which the temporary server (it dies with this process) never
    needs, and each flow run's heartbeat thread holds its end up by up to a second (four flow runs
    per pipeline). With a real server (PREFECT_API_URL) heartbeats stay on, so the UI can mark a
    killed run as crashed.
    """
    if os.environ.get("PREFECT_API_URL") or _profile_api_url():
        yield
        return
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield


@contextlib.contextmanager
def api_for_workers() -> Iterator[None]:
    """Give task runs on other processes (Dask workers) this process's Prefect API.

    With no server configured, Prefect's temporary server is this process's own: a Dask worker,
    which starts from the flow's settings, would start a temporary server of its own (seconds
    per worker, its runs out of sight). Here the temporary server is started (if not yet) and
    its address put in the settings the tasks carry to the workers. It listens on 127.0.0.1, so
    only workers on this machine reach it: workers on other machines need a server they can
    reach (PREFECT_API_URL), see docs/scaling.md. Does nothing when a server is configured."""
    if os.environ.get("PREFECT_API_URL") or _profile_api_url():
        yield
        return
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, temporary_settings

    temporary_server_dies_with_us()
    server = SubprocessASGIServer()
    server.start()
    with temporary_settings(updates={PREFECT_API_URL: server.api_url}):
        yield
