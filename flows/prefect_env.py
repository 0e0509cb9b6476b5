"""How elopipe runs Prefect: quiet logs, analytics off, and knowing whether a server is there.

The one Prefect adapter, shared by the flows and the CLI (elopipe.cli), the only code that
imports Prefect; the library below them never does (an import contract in pyproject.toml).

Prefect reads its settings from `PREFECT_*` environment variables when it is first imported,
so `configure()` must run before `import prefect`; `flows/_env.py` calls it, every flow module
imports that first, and the CLI imports the flow modules only inside its commands. This module
imports Prefect only inside its functions, so `elopipe --help` stays fast.

Logging: Prefect's console handler shows warnings and errors only; its API handler still sends
every INFO line to the server, so the Prefect UI keeps the full log of a run. Our own stage lines
("ingest: 12 files loaded ...") go through the `elopipe.stages` logger, printed one per stage.

Server: with `PREFECT_API_URL` unset, `run`, `watch` and `ingest` start Prefect's API server
themselves (`prefect_api()`, flows.prefect_server: Prefect's own app, as its temporary server runs
it, storing runs in `PREFECT_HOME`, default `~/.prefect`) and point `PREFECT_API_URL` at it
before Prefect is imported. `watch` and `ingest` start a new interpreter the moment they begin
(it boots on another core while this process loads the flows, and `watch` keeps one server for
its whole life); `run` forks it once it has imported Prefect, which the server then does not
import again. Its first start on a fresh home runs the database migrations, which takes longer
than Prefect's default 20 s start-up timeout on a slow machine, so we raise it. The server ends
with this process, even after a `kill -9` (elopipe.runtime.lifeline). When Prefect starts its
temporary server itself (other commands), `temporary_server_dies_with_us()` does the same for it.
Schedules need a real server (`prefect server start`); `api_status()` says whether one is
reachable.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import types
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from flows.prefect_server import CLIENT_ENV, TemporaryServer
from flows.prefect_server import loading_prefect as loading_prefect  # the CLI's one adapter: re-exported

STAGE_LOGGER = "elopipe.stages"
# A record on STAGE_LOGGER with this attribute says a stage begins (the CLI's live status shows it).
STEP_ATTR = "elopipe_step"
# A step that only says how far a stage got (a bar): off a terminal, printed now and then.
PROGRESS_ATTR = "elopipe_progress"

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
    # What a temporary server (ours, or Prefect's for the other commands) does at start-up and
    # elopipe never uses, measured with bench/prefect_overhead.py: about 0.8 of its 4.5 CPU-s.
    # Automations (the triggers and actions services): the actions consumer builds a second copy
    # of the whole API app at start. A server that lives one command has no automations to run.
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
    # Block types registered on start (importing every installed Prefect collection first, and
    # so Dask's `distributed` through prefect-dask): elopipe stores no blocks. A `prefect server
    # start` on the same home registers them itself.
    "PREFECT_API_BLOCKS_REGISTER_ON_START": "false",
    "PREFECT_MEMOIZE_BLOCK_AUTO_REGISTRATION": "false",
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


class _NotForTheTerminal(logging.Filter):
    """On Prefect's console handler: drops the stage lines elopipe prints itself (records with
    `elopipe_stage`) and, when `everything_from_prefect`, every record of Prefect's loggers (run
    names, "Crash detected", tracebacks): the CLI ends a failed run with one line of its own.
    Prefect's background services log under their class names ("EventsWorker - Still processing
    items" after a Ctrl-C): a record is Prefect's by its logger or by the file that made it."""

    everything_from_prefect = False
    prefect_dir = ""  # Prefect's package folder, with a trailing separator (`quiet_prefect_console`)

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "elopipe_stage", False):
            return False
        if not self.everything_from_prefect:
            return True
        return not (
            record.name.split(".")[0] == "prefect"
            or bool(self.prefect_dir and record.pathname.startswith(self.prefect_dir))
        )


_console_filter = _NotForTheTerminal()


def quiet_prefect_console(everything: bool = False) -> None:
    """Keep elopipe's stage lines off Prefect's console handler (they are printed once, by the
    stage logger); with `everything`, all of Prefect's own lines too (`run`/`watch` without -v).
    Call after Prefect is imported (it sets up its logging then); safe to call again."""
    import prefect

    _console_filter.everything_from_prefect = everything
    _console_filter.prefect_dir = os.path.join(os.path.dirname(prefect.__file__), "")
    for handler in logging.getLogger().handlers:
        if type(handler).__name__ == "PrefectConsoleHandler" and _console_filter not in handler.filters:
            handler.addFilter(_console_filter)


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


@contextlib.contextmanager
def local_run_settings() -> Iterator[None]:
    """Settings for flow runs this process starts itself (`elopipe run`, `elopipe watch`).

    With a temporary server (ours from `prefect_api()`, or Prefect's), flow-run heartbeats are
    switched off: they tell a server that a run's process is alive, which a server that dies with
    this process never needs, and each flow run's heartbeat thread holds its end up by up to a
    second (four flow runs per pipeline). With a user's server (PREFECT_API_URL) heartbeats stay
    on, so the UI can mark a killed run as crashed.
    """
    if _users_server():
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


# The URL of the temporary server `prefect_api()` started, while it runs.
_own_api_url: str | None = None


def configured_api_url() -> str | None:
    """The Prefect API this process is pointed at: PREFECT_API_URL in the environment, the active
    profile, or (once Prefect is imported) Prefect's own settings. None: no server configured."""
    url = os.environ.get("PREFECT_API_URL") or _profile_api_url()
    if url or "prefect.settings" not in sys.modules:
        return url
    from prefect.settings import PREFECT_API_URL

    return PREFECT_API_URL.value() or None


def _users_server() -> bool:
    url = configured_api_url()
    return bool(url) and url != _own_api_url


def _drain_prefect_senders(timeout: float = 10) -> None:
    """Send what Prefect's background senders hold (run logs, events) to the API now."""
    if "prefect.logging.handlers" in sys.modules:
        from prefect.logging.handlers import APILogWorker

        APILogWorker.drain_all(timeout=timeout, at_exit=False)
    if "prefect.events.worker" in sys.modules:
        from prefect.events.worker import EventsWorker

        EventsWorker.drain_all(timeout=timeout, at_exit=False)


@dataclass
class PrefectApi:
    """The API a command's flows use. `server`: the temporary server `prefect_api()` started,
    None when a server was configured."""

    url: str
    server: TemporaryServer | None

    def launch(self) -> None:
        """Start a server `prefect_api(fork=True)` left to start: import Prefect, then fork it
        (flows.prefect_server). Nothing to do otherwise."""
        if self.server is not None:
            self.server.launch()

    def wait_ready(self, stop: Callable[[], bool] | None = None) -> None:
        """Wait for the temporary server (see TemporaryServer.wait_ready; a server not launched yet
        is launched first), or until `stop()` is true; at once otherwise. Imports Prefect: Prefect's
        clients of that server then make no certificate store of their own and do not check its
        version (`_clients_of_our_own_server`)."""
        if self.server is not None:
            self.server.wait_ready(stop=stop)
            _clients_of_our_own_server(self.url)


_PLAIN_HTTP = "_elopipe_plain_http"


def _clients_of_our_own_server(url: str) -> None:
    """Prefect's API clients of this process's own temporary server (`_own_api_url`, `url`: plain
    HTTP on 127.0.0.1) get one TLS context with no certificate in it, which no request to it uses,
    and take its Prefect version as checked: it is this interpreter's Prefect (Prefect checks it
    once per client kind, two requests and one more TLS context).

    Prefect makes a verifying TLS context for each API client it creates, loading certifi's ~150
    certificate authorities each time: about 0.03 CPU-s per client, three clients in a `run`
    (the engine's, the log sender's, the event sender's). The context given instead verifies
    too (hostname and certificate, against no authority): were it ever used for HTTPS, it would
    refuse the connection, never accept an unverified one. Clients of any other server, and
    clients given a `verify` of their own, are made as Prefect makes them. Safe to call again."""
    import ssl

    from prefect.client.orchestration import PrefectClient, SyncPrefectClient

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    for client_class in (PrefectClient, SyncPrefectClient):
        made_by_prefect = client_class.__init__
        if getattr(made_by_prefect, _PLAIN_HTTP, False):
            continue

        def init(self: Any, api: Any, *args: Any, _prefects: Any = made_by_prefect, **kwargs: Any) -> None:
            settings = kwargs.get("httpx_settings") or {}
            own = _own_api_url
            if own and own.startswith("http://") and api == own and "verify" not in settings:
                kwargs["httpx_settings"] = {**settings, "verify": context}
            _prefects(self, api, *args, **kwargs)

        setattr(init, _PLAIN_HTTP, True)
        client_class.__init__ = init  # type: ignore[method-assign]
    try:  # Prefect's own once-per-process record of checked servers (the HTTP clients key it with a "/")
        from prefect._internal.version_checking import _api_version_check_key, _cache_api_version_check
    except ImportError:  # another Prefect: it checks, as it always did
        return
    for checked in (url, url.rstrip("/") + "/"):
        _cache_api_version_check(_api_version_check_key(checked, prefect_version()))


def prefect_version() -> str:
    """The installed Prefect's version (imports Prefect)."""
    import prefect

    return str(prefect.__version__)


@contextlib.contextmanager
def prefect_api(fork: bool = False) -> Iterator[PrefectApi]:
    """The Prefect API for a command's whole life (see the module docstring).

    A configured server (PREFECT_API_URL, the profile) is used as it is. Otherwise a temporary
    server starts now, in the background (`PrefectApi.wait_ready()` waits for it), or with `fork`
    at `PrefectApi.launch()`, forked from this process once Prefect is imported (call it before
    this process opens its store or starts a thread: see flows.prefect_server); PREFECT_API_URL
    points at it until the block ends, when the server stops. Call it before importing Prefect;
    if Prefect is imported already, its settings are pointed there too.
    """
    global _own_api_url
    url = configured_api_url()
    if url:
        yield PrefectApi(url, None)
        return
    previous = {key: os.environ.get(key) for key in ("PREFECT_API_URL", *CLIENT_ENV)}
    os.environ.update(CLIENT_ENV)  # before a new interpreter starts, or Prefect is imported and forked
    server = TemporaryServer(fork=fork)
    os.environ["PREFECT_API_URL"] = _own_api_url = server.api_url
    try:
        with contextlib.ExitStack() as stack:
            if "prefect.settings" in sys.modules:
                from prefect.settings import PREFECT_API_URL, temporary_settings

                stack.enter_context(temporary_settings(updates={PREFECT_API_URL: server.api_url}))
            yield PrefectApi(server.api_url, server)
    finally:
        _drain_prefect_senders()  # before the server goes: they would retry it for a minute at exit
        _own_api_url = None
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


def is_termination(exc: BaseException) -> bool:
    """Whether `exc` is Prefect's TerminationSignal, or an error raised while one was handled: a
    SIGTERM came while a flow ran (Prefect's own handler then raises it, after handing the signal
    to the one it replaced). When it lands while a task run is still being created, Prefect's
    clean-up raises its own error ("Task run is not set") with the signal as its context."""
    from prefect.exceptions import TerminationSignal

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, TerminationSignal):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
