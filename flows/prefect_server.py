"""Prefect's temporary API server, as `run`, `watch` and `ingest` start it (flows.prefect_env.prefect_api).

It is Prefect's own app (`server_app()`: uvicorn with the app Prefect's temporary server runs,
no UI, the services an ephemeral server needs) in a child process that ends with this one, even
after a `kill -9` (elopipe.runtime.lifeline), in its own session: a Ctrl-C in the terminal is the
command's to handle, and the server must answer until the run has stopped.

Two ways to start it:

- **a new interpreter** (`python -m elopipe.runtime.lifeline PID -m uvicorn ...`), at once: it boots
  on another core while the command loads its flows. It imports Prefect itself.
- **forked** from the command once it has imported Prefect (`TemporaryServer(fork=True)`, then
  `launch()`): the child starts with Prefect (and FastAPI) loaded, so their import (about 0.9
  CPU-s, the part of the server's start-up the command shares) is paid once instead of twice; it
  then loads only the server's own code. The fork happens before the command opens its store or starts a thread
  of its own; the child keeps none of the command's open files (the store's lock file included:
  only its log, /dev/null and its listening socket) nor its signal handlers. A status line that
  animates on a terminal pauses across the fork (elopipe.cli.commands.live_status).

This module imports Prefect only inside its functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import IO, Any, NoReturn, Protocol

from elopipe.runtime import lifeline
from elopipe.runtime.errors import ElopipeError
from flows import prefect_logging, prefect_migrations

# What Prefect's own temporary server runs with (prefect.server.api.server.SubprocessASGIServer):
# no UI, the services an ephemeral server needs only. Read from the environment by the server
# itself, after the fork.
_SERVER_ENV = {
    "PREFECT_UI_ENABLED": "0",
    "PREFECT__SERVER_EPHEMERAL": "1",
    "PREFECT__SERVER_FINAL": "1",
    # docket's key-value store (py-key-value) checks the types of its own calls at run time with
    # beartype, which rewrites each of its modules as it is imported: off, a few hundredths of a
    # CPU second of every server start (warnings it would give are for its own developers).
    "PY_KEY_VALUE_DISABLE_BEARTYPE": "true",
}
# Set in the command's environment while it uses its own temporary server, before Prefect is
# imported (Prefect's settings are read then; the forked server has them from there, a new
# interpreter from its environment). They concern that server only, which has no UI: nobody
# looks at its runs while they happen.
CLIENT_ENV = {
    # A browser's CSRF token means nothing to it, so Prefect's clients need not ask for one (each
    # new client asked: five requests of a warm `run`, each answered "CSRF protection is disabled").
    "PREFECT_SERVER_CSRF_PROTECTION_ENABLED": "false",
    "PREFECT_CLIENT_CSRF_SUPPORT_ENABLED": "false",
    # Task runs (recorded from the events a flow run sends) and events written to its database
    # in one transaction every flush interval (5 s) and when it stops, not one per task-run event
    # (Prefect's default batch for task runs is 1: 21 SQLite transactions in a warm `run`).
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "1000",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE": "1000",
    # No stream of events out to websocket subscribers (the UI's live feed): one consumer of
    # every event less.
    "PREFECT_SERVER_EVENTS_STREAM_OUT_ENABLED": "false",
}
_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception): (.+)$")  # "sqlite3.OperationalError: ..."
# The forked server's exit status when uvicorn returned without having started (as `uvicorn` exits).
_NOT_STARTED = 3


class PrefectServerError(ElopipeError, RuntimeError):
    """Prefect's temporary API server did not start."""


@contextlib.contextmanager
def loading_prefect() -> Iterator[None]:
    """Import Prefect (and what else the block imports) with Python's cyclic garbage collector
    paused, then freeze what was loaded.

    Importing Prefect builds thousands of Pydantic models and FastAPI routes: the collector, run
    every 700 new objects, walks that growing heap again and again, and every full collection
    after it (during the job, at exit) walks it once more. Frozen (`gc.freeze`), those
    long-lived objects are left out of all later collections (and a forked server does not copy
    the pages a collection would touch). Measured with bench/prefect_overhead.py: about 0.4 CPU-s
    of `run`'s import of the flows and 0.5 of the temporary server's start. The price: cycles made
    during the import stay in memory (a few MB).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def server_app() -> Any:
    """The ASGI app `TemporaryServer` runs (uvicorn's factory): Prefect's own, imported and built
    in `loading_prefect()`: two blocks, so that the full collection `create_app` runs at its end
    (PREFECT__SERVER_FINAL) walks only what building the app made, not the frozen server code.

    Built for the one command it serves, with what it never uses left undone (measured with
    bench/prefect_ab.py): its routers ordered so that a request finds its route before the
    routers the command never calls (`_routers_used_first`), no cache key for an app built
    once (`_one_app`), its background tasks' queue looked at less often and no listener for
    cancellations (`_patient_worker`), a route's request handling built when a request first
    comes to its router (`_routes_built_when_used`); forked by `run`, no database migrations
    when a start that ran them left the database as it is (flows.prefect_migrations); its logging
    set up without serializing every setting (flows.prefect_logging)."""
    with loading_prefect(), _routes_built_when_used():
        # a new interpreter's first logging set-up is create_app's (a forked server's, its second)
        prefect_logging.fill_placeholders_lazily()
        from prefect.server.api import background_workers, server
    server.API_ROUTERS = _routers_used_first(server.API_ROUTERS)
    background_workers.Worker = _patient_worker()  # type: ignore[attr-defined]  # its `from docket import Worker`
    with loading_prefect(), _one_app():
        return server.create_app()


_DEFERRED = "_elopipe_deferred_route"


@contextlib.contextmanager
def _routes_built_when_used() -> Iterator[None]:
    """FastAPI routes made in the block (Prefect's 186, as its API modules are imported) keep
    their arguments and build the rest (parameters, body and response models, request handler)
    the first time anything but their path or name is read.

    FastAPI (0.137 and later) builds each route twice: when it is declared, and again, for the
    app that includes its router, the first time a request is matched against that router
    (`_routers_used_first`). The first build is never used by an included route: deferred, only
    the routes of the routers a command calls (about 50) build it, as its router's requests read
    them; the others never do. About 0.2 of the 1.3 CPU-s of the server's start. Reading `path`
    and `name` builds nothing (FastAPI checks them when a router is included, as given or
    derived from the endpoint as FastAPI does). Left as FastAPI is when it lacks the internals
    this relies on (another FastAPI version)."""
    from fastapi import routing
    from starlette.routing import get_name

    if not hasattr(routing, "_IncludedRouter"):
        yield
        return
    route_class = routing.APIRoute
    declared = route_class.__init__

    def deferred(self: Any, path: str, endpoint: Any, **options: Any) -> None:
        self.__dict__[_DEFERRED] = (path, endpoint, options)
        self.path = path
        name = options.get("name")
        self.name = get_name(endpoint) if name is None else name

    def build_when_read(self: Any, attribute: str) -> Any:
        arguments = self.__dict__.pop(_DEFERRED, None)
        if arguments is None:  # built (or never deferred): an attribute it does not have
            raise AttributeError(attribute)
        path, endpoint, options = arguments
        declared(self, path, endpoint, **options)
        return getattr(self, attribute)

    route_class.__init__ = deferred  # type: ignore[method-assign]
    route_class.__getattr__ = build_when_read  # type: ignore[attr-defined]
    try:
        yield
    finally:
        # routes made from now on are built at once; those made in the block build when read
        route_class.__init__ = declared  # type: ignore[method-assign]


# The routers of Prefect's API that a command's flow runs call (the paths under /api), the most
# called first.
_ROUTERS_USED = ("/flow_runs", "/logs", "/flows", "/task_runs", "/admin", "/events")


def _routers_used_first(routers: tuple[Any, ...]) -> tuple[Any, ...]:
    """Prefect's API routers, those in `_ROUTERS_USED` first, the others after them in their order.

    FastAPI (0.137 and later) prepares a router's routes (their parameters' validators) the
    first time a request is matched against it, and matches a request against the routers in
    order: a request to /api/admin/version or /api/events/in, near the end, prepared every route
    of the 31 routers, about 0.5 CPU-s of the server's 3.4 in a warm `run`. Each router has a
    prefix of its own (two have none, and paths no other router has), so the order changes no
    request's route."""
    rank = {prefix: i for i, prefix in enumerate(_ROUTERS_USED)}
    return tuple(sorted(routers, key=lambda r: rank.get(str(getattr(r, "prefix", "")), len(rank))))


# How often the server's background worker looks for due and new tasks (docket's default: 4 times
# a second each).
_WORKER_CHECK_SECONDS = 2.0


def _patient_worker() -> Any:
    """docket's `Worker`, as Prefect's server starts it (`Worker(docket)`), looking for due and new
    tasks every `_WORKER_CHECK_SECONDS` instead of every 0.25 s. Its tasks are clean-ups (the logs
    of a deleted run, old events) and the services a temporary server does not run; none is
    waited for by a flow run. Each look runs a script on docket's in-memory queue: an idle
    server used about 0.9% of a core, 0.55% so (so a `run` that lasts a minute on a loaded
    machine spends about 0.2 CPU-s less); without the cancellation listener, about 0.3%."""
    import docket

    class _Worker(docket.Worker):
        async def _cancellation_listener(self) -> None:
            """No listener for cancellations: Prefect's server never cancels a docket task, and the
            listener looks for one 10 times a second through a thread (about 2 ms of CPU per second
            of a run). Says it is ready and waits for the worker to stop; docket's own listener when
            the worker is not as this expects (another docket version)."""
            session = getattr(self, "_processing_session", None)
            ready, stopping = getattr(session, "cancellation_ready", None), getattr(session, "stopping", None)
            if not (isinstance(ready, asyncio.Event) and isinstance(stopping, asyncio.Event)):
                await super()._cancellation_listener()
                return
            ready.set()
            await stopping.wait()

    every = timedelta(seconds=_WORKER_CHECK_SECONDS)
    return functools.partial(_Worker, minimum_check_interval=every, scheduling_resolution=every)


@contextlib.contextmanager
def _one_app() -> Iterator[None]:
    """Prefect's `create_app` and `create_api_app` key their cache of apps with
    `Settings.hash_key()`, which serializes every setting (about 0.1 CPU-s each time); a server
    that builds one app needs no such key: the block gives every settings object one."""
    from prefect.settings import Settings

    original = Settings.hash_key
    Settings.hash_key = lambda self: "elopipe-temporary-server"  # type: ignore[method-assign]
    try:
        yield
    finally:
        Settings.hash_key = original  # type: ignore[method-assign]


class _Process(Protocol):
    """What TemporaryServer asks of its child: subprocess.Popen's, or `_ForkedServer`'s."""

    pid: int

    def poll(self) -> int | None: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...
    def wait(self, timeout: float | None = None) -> int: ...


class _ForkedServer:
    """The forked server process, with the part of subprocess.Popen's interface TemporaryServer uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: gone, status unknown
                self.returncode = -1
            else:
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def _signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"forked server {self.pid}", timeout or 0)
            time.sleep(0.05)
        return code


class TemporaryServer:
    """Prefect's API server in a child process (see the module docstring). Without `fork`, the
    child starts now; with `fork`, at `launch()`, which imports Prefect first (on Linux only:
    elsewhere a fork after such imports is not safe, as multiprocessing says on macOS)."""

    def __init__(self, fork: bool = False) -> None:
        fork = fork and sys.platform == "linux"
        self._log: IO[bytes] = tempfile.TemporaryFile()
        # The port is taken now: the command points PREFECT_API_URL at it before Prefect is imported.
        self._socket: socket.socket | None = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self.process: _Process | None = None
        # a forked server that ran the migrations: once it answers, say so (flows.prefect_migrations)
        self._record_migrated = False
        if not fork:
            self._socket.close()  # the new interpreter binds the port itself
            self._socket = None
            self.process = self._launch()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def _launch(self) -> subprocess.Popen[bytes]:
        command = ["-m", "uvicorn", "--factory", "flows.prefect_server:server_app", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--log-level", "error", "--lifespan", "on"]
        return subprocess.Popen(
            [sys.executable, "-m", "elopipe.runtime.lifeline", str(os.getpid()), *command],
            env={**os.environ, **_SERVER_ENV},
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            start_new_session=True,
        )

    def launch(self) -> None:
        """Start a forked server: import Prefect here (in `loading_prefect()`), then fork the child
        that serves (it inherits the loaded modules and the bound port). Nothing to do when the
        server was started at construction or already launched."""
        if self.process is not None or self._socket is None:
            return
        with loading_prefect():
            # What the server shares with this process, loaded once: Prefect, and FastAPI (the
            # server's web framework; Prefect's client encodes a flow's parameters with it); and
            # what both import later (the server's templates and a flow run's parameter checks,
            # elopipe's HTML): Jinja and Pydantic's v1 API (about 0.1 CPU-s of the server's start).
            import fastapi  # noqa: F401
            import jinja2  # noqa: F401
            import prefect  # noqa: F401
            import pydantic.v1  # noqa: F401
        # the database as a start that migrated it left it: this start need not migrate it again
        migrate = not prefect_migrations.at_head()
        for stream in (sys.stdout, sys.stderr):  # nothing of ours left in a buffer the child copies
            with contextlib.suppress(Exception):
                stream.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            _serve_forked(self._socket, self._log.fileno(), parent, migrate)
        self._record_migrated = migrate
        self._socket.close()
        self._socket = None
        self.process = _ForkedServer(pid)

    def wait_ready(self, timeout: float | None = None, stop: Callable[[], bool] | None = None) -> None:
        """Wait until the server answers GET /health, or `stop()` is true (a Ctrl-C or a SIGTERM
        while it starts: nothing waits on it then). Raises PrefectServerError, with the last line
        of the server's output, if it exits or does not answer within `timeout` seconds (default
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS)."""
        self.launch()
        assert self.process is not None
        limit = timeout or float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS") or 120)
        deadline = time.monotonic() + limit
        while stop is None or not stop():
            code = self.process.poll()
            if code is not None:  # 3: its port was taken between our look and its start
                why = self._last_line()
                raise PrefectServerError(f"Prefect's temporary server stopped at start-up (exit {code}): {why}")
            if answers(self.api_url + "/health"):
                if self._record_migrated:
                    prefect_migrations.record_at_head()
                    self._record_migrated = False
                return
            if time.monotonic() > deadline:
                raise PrefectServerError(
                    f"Prefect's temporary server did not answer within {limit:g} s "
                    "(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS)"
                )
            time.sleep(0.1)

    def _last_line(self) -> str:
        """The message of the last error the server printed, without its traceback or class."""
        self._log.seek(0)
        lines = self._log.read().decode("utf-8", "replace").splitlines()
        for line in reversed(lines):
            if found := _ERROR_LINE.match(line.strip()):
                return re.sub(r"^\([\w.]+\)\s*", "", found[1])  # SQLAlchemy's "(sqlite3.OperationalError) ..."
        return "it gave no reason"

    def stop(self) -> None:
        """End the server (SIGTERM, then SIGKILL after 5 s) and wait for it."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


def _serve_forked(sock: socket.socket, log_fd: int, parent: int, migrate: bool) -> NoReturn:
    """The forked server's whole life: its own session, output into `log_fd`, no file of the
    command's open but `sock`, the command's signal handlers gone; uvicorn serves `server_app()`
    on `sock` until it is stopped or the command ends (elopipe.runtime.lifeline); without
    `migrate`, it does not run the database migrations. Never returns."""
    code = 1
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        keep = sock.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, 1 << 20)
        os.environ.update(_SERVER_ENV)
        lifeline.exit_with(parent)
        import uvicorn
        from prefect.settings import get_current_settings

        if not migrate:
            # set on this process's own copy of the command's settings: a `temporary_settings` block
            # would build all of them again (about 0.03 CPU-s)
            get_current_settings().server.database.migrate_on_start = False
        server = uvicorn.Server(uvicorn.Config(server_app, factory=True, log_level="error", lifespan="on"))
        server.run(sockets=[sock])
        code = 0 if server.started else _NOT_STARTED
    except BaseException:  # noqa: B036 - the child must never return into the command's code
        with contextlib.suppress(Exception):
            traceback.print_exc()  # into the log, where wait_ready finds the reason
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def answers(url: str) -> bool:
    """True when GET `url` answers 200 within a second."""
    try:
        with urllib.request.urlopen(url, timeout=1) as resp:  # noqa: S310 - our own loopback server
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False
