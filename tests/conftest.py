"""Shared test fixtures.

Prefect: ONE temporary Prefect API server for the whole session (`prefect_harness`), started
only when a test asks for it; most tests exercise the library and never import Prefect. Prefect's
home (profiles, its SQLite database, the ephemeral server's state) lives in a temporary folder so
tests never touch `~/.prefect` nor share a SQLite file with a user's server ("database is locked").
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile
from collections import Counter
from collections.abc import Iterator

import pytest

# A suite started in the background (`nohup ... &`, some CI runners) inherits SIGINT ignored, and
# Python then raises no KeyboardInterrupt, in this process or in the processes it starts: the
# tests of Ctrl-C would fail for a reason not theirs. Restored here, in every xdist worker too; a
# handler (not SIG_IGN) is reset to the default in the processes the tests start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

_PREFECT_HOME = tempfile.mkdtemp(prefix="elopipe-test-prefect-home-")
atexit.register(shutil.rmtree, _PREFECT_HOME, True)
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ.pop("PREFECT_API_URL", None)  # a user's server must not receive test runs
os.environ.pop("PREFECT_PROFILE", None)

from flows.prefect_env import configure  # noqa: E402  (after PREFECT_HOME is set)

configure()


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[str]:
    """A temporary Prefect API server (prefect_test_harness) for the session; yields its API URL."""
    from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    # None: use PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS (raised by configure()), since a
    # fresh database runs its migrations first and that is slow on a loaded CI machine.
    with prefect_test_harness(server_startup_timeout=None):
        # As `elopipe run` does on a temporary server: no flow-run heartbeats (see
        # flows.prefect_env.local_run_settings); each would hold a flow run's end up ~1 s.
        with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
            yield str(PREFECT_API_URL.value())


@pytest.fixture(scope="module")
def dask_cluster(prefect_harness: str) -> Iterator[str]:
    """ONE local Dask cluster of 2 worker processes for the `--dask` tests (all in one module,
    tests/ingest/test_dask_scaleout.py, and one worker: see pytest_collection_modifyitems); yields
    its scheduler's address. It ends with the module's last test, not with the session: an idle
    cluster (a scheduler, 2 nannies and their workers) uses about 0.1 CPU-s a second, minutes of
    a core over the rest of a session. Skips when the optional `elopipe[dask]` packages are not
    installed."""
    pytest.importorskip("distributed")
    pytest.importorskip("prefect_dask")
    from elopipe.ingest.scaleout import local_cluster

    with local_cluster(2) as address:
        yield address


_ONE_PROCESS = {"prefect_harness", "dask_cluster"}
# Modules grouped with another one: their tests share what a test process keeps for the next test.
# The Prefect servers the tests start on homes of their own: the database the first one migrates
# serves the others (tests.helpers.prefect_home).
_GROUPED_WITH = {"tests/flows/test_prefect_server_tuning.py": "tests/flows/test_prefect_env.py"}


def pytest_configure(config: pytest.Config) -> None:
    """Under `--dist loadgroup`, xdist gives the groups to the workers in the order the workers
    collected them (`pytest_collection_modifyitems` below orders them), not by their number of
    tests alone."""
    if getattr(config.option, "dist", None) == "loadgroup":  # the controller (its workers: dist "no")
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`-n 2 --dist loadgroup`, as scripts/test.sh runs), every test that needs
    the Prefect server or the Dask cluster runs in one worker, so the session still starts ONE
    of each; the other tests run in the worker that runs the rest of their module (a group a
    module), so that a module's fixtures and what a test process keeps for the next test (the
    stores of `tests.helpers.ingested`, the browser of `tests.helpers.chromium`) are made once,
    not once a worker: tests given one by one alternate between the workers. It runs first:
    xdist's own hook turns the mark into the `@prefect` (`@<module>`) suffix that groups the
    tests, and sees only marks already added.

    The groups are then given out in this order: those holding a `slow` test first, then the
    others, each by its number of tests (xdist's own order). Sorted by size alone, the groups of
    one long test came last, and a worker given two of them (it takes the next group while its
    last test runs) ran on alone at the end: 30 s of a run at load 7 with the other worker idle."""
    groups: dict[pytest.Item, str] = {}
    for item in items:
        if _ONE_PROCESS & set(getattr(item, "fixturenames", ())):
            groups[item] = "prefect"
        else:
            module = item.nodeid.split("::", 1)[0]
            groups[item] = _GROUPED_WITH.get(module, module)
        item.add_marker(pytest.mark.xdist_group(groups[item]))
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        size = Counter(groups.values())
        slow = {group for item, group in groups.items() if item.get_closest_marker("slow")}
        first = {group: n for n, group in reversed(list(enumerate(groups.values())))}
        items.sort(key=lambda item: (groups[item] not in slow, -size[groups[item]], first[groups[item]]))


@pytest.fixture(autouse=True)
def _watcher_logger_as_it_was() -> Iterator[None]:
    """A `drop_folder` flow run in a test's process gives the drop folder's logger a handler for
    good (`flows._stages.watcher_lines_as`, as `elopipe serve` wants): later tests of the same
    worker then saw its lines twice. Each test leaves the logger as it found it."""
    import logging

    logger = logging.getLogger("elopipe.ingest.watcher")
    handlers, propagate, level = logger.handlers[:], logger.propagate, logger.level
    yield
    logger.handlers[:] = handlers
    logger.propagate = propagate
    logger.setLevel(level)


@pytest.fixture(autouse=True, scope="session")
def _new_stores_from_the_schema_template() -> Iterator[None]:
    """In the test processes, a store `open_writer` creates (a new file: nearly every ingest of
    a test) gets the schema as a copy of the one `ensure_schema` made once for the process
    (`tests.helpers.schema_store`), then `ensure_schema` as always (it finds it current). The
    same tables, views, sequences and rows, without 51 fsyncs a store; `ensure_schema` from
    nothing is tested on its own (tests/store/test_schema_docs.py) and by every command the
    tests run in a process of its own."""
    from elopipe.store import connect
    from tests.helpers.schema_store import copy_schema_into, holds_nothing

    real = connect.ensure_schema

    def ensure_schema(con):  # type: ignore[no-untyped-def]
        if holds_nothing(con):
            copy_schema_into(con)
        real(con)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(connect, "ensure_schema", ensure_schema)
        yield
