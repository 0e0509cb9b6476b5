"""Scale-out on Dask (issue 14): parse tasks on a cluster through Prefect's DaskTaskRunner, one
writer. One local cluster of 2 worker processes for the module (conftest `dask_cluster`)."""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import elopipe.ingest.units as pu
from elopipe.cli.commands.dask_opts import optional_dask_value
from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.ingest.scaleout import ScaleOutError, check_reachable, spec_from
from elopipe.ingest.units import Unit, UnitParser, WorkerCannotSee, run_unit
from elopipe.jobs.requests import Cluster, IngestRequest
from elopipe.read.sources import Source
from tests.helpers.paths import REPO
from tests.helpers.store_rows import store_tables

# the store and the summary name a file by its real path (`discover` resolves links): ../shared
# may be a symbolic link (issue 26, item 9)
DATA = (REPO.parent / "shared" / "data").resolve()
ALL_FILES = (
    sorted((DATA / "trf").glob("*.trf"))
    + sorted((DATA / "pgn").glob("*.pgn"))
    + [DATA / "pgn" / "candidates_zurich_1953.PGN"]
)
# The staged and the killed-worker ingests: the largest tournament file (cut into pieces), a Swiss
# PGN and two TRFs; the store's equality on all of ../shared/data is the first test's.
SOME_FILES = [
    DATA / "pgn" / "olym22.pgn",
    DATA / "pgn" / "wjun19.pgn",
    *sorted((DATA / "trf").glob("*.trf"))[:2],
]
# Small enough that the larger real PGN files (Carlsen.pgn, olym22.pgn: about 4 MB) are cut into
# a dozen pieces or more, each parsed by some worker.
SMALL_PIECES = 300_000


def _local(tmp_path_factory, files: list[Path]) -> dict[str, list[tuple]]:
    db = tmp_path_factory.mktemp("local") / "local.duckdb"
    summary = ingest_paths(files, db)
    assert summary.count("loaded") + summary.count("partial") == len(files)
    return store_tables(db)


@pytest.fixture(scope="module")
def local_store(tmp_path_factory) -> dict[str, list[tuple]]:
    return _local(tmp_path_factory, ALL_FILES)


@pytest.fixture(scope="module")
def local_subset(tmp_path_factory) -> dict[str, list[tuple]]:
    return _local(tmp_path_factory, SOME_FILES)


def _on_cluster(address: str, db: Path, stage: str | None = None, files=ALL_FILES):
    from flows.ingest_files import ingest_flow

    cluster = Cluster(address, stage, 2)
    return ingest_flow(cluster)(IngestRequest(tuple(str(p) for p in files), str(db), cluster=cluster))


def _assert_same_store(db: Path, expected: dict[str, list[tuple]]) -> None:
    got = store_tables(db)
    assert got.keys() == expected.keys()
    for table in expected:
        assert got[table] == expected[table], table


@pytest.mark.slow
def test_the_store_built_on_the_cluster_equals_the_local_one(dask_cluster, local_store, tmp_path, monkeypatch):
    monkeypatch.setattr(pu, "PIECE_BYTES", SMALL_PIECES)
    units: list[Unit] = []
    real_plan = pu.plan_units

    def plan_units(*args, **kwargs):
        planned = real_plan(*args, **kwargs)
        units.extend(planned)
        return planned

    monkeypatch.setattr(pu, "plan_units", plan_units)
    summary = _on_cluster(dask_cluster, tmp_path / "dask.duckdb")
    assert summary.failure is None
    split = {u.plan.source.path for u in units if u.plan is not None}
    assert {str(DATA / "pgn" / "Carlsen.pgn"), str(DATA / "pgn" / "olym22.pgn")} <= split
    assert sum(1 for u in units if u.plan is not None) >= 20  # many pieces, spread over both workers
    assert summary.count("loaded") + summary.count("partial") == len(ALL_FILES)
    _assert_same_store(tmp_path / "dask.duckdb", local_store)


@pytest.mark.slow
def test_games_staged_as_parquet_in_a_shared_folder_give_the_same_store(
    dask_cluster, local_subset, tmp_path, monkeypatch
):
    monkeypatch.setattr(pu, "PIECE_BYTES", SMALL_PIECES)
    stage = tmp_path / "stage"
    stage.mkdir()
    written: list[str] = []
    real_land = pu.Shipped.land

    def land(self):
        written.append(self.parquet)
        assert self.ipc is None and self.parquet is not None and os.path.exists(self.parquet)
        return real_land(self)

    monkeypatch.setattr(pu.Shipped, "land", land)
    summary = _on_cluster(dask_cluster, tmp_path / "staged.duckdb", stage=str(stage), files=SOME_FILES)
    assert summary.failure is None
    assert len(written) >= len(SOME_FILES) + 10  # a shard per file and per piece
    _assert_same_store(tmp_path / "staged.duckdb", local_subset)
    assert list(stage.iterdir()) == []  # the ingest's shards are removed once it is done


@pytest.mark.slow
def test_a_worker_killed_mid_batch_has_its_tasks_retried_and_the_store_is_whole(
    dask_cluster, local_subset, tmp_path, monkeypatch
):
    from distributed import Client

    monkeypatch.setattr(pu, "PIECE_BYTES", SMALL_PIECES)
    killed: list[int] = []

    def kill_a_busy_worker() -> None:
        with Client(dask_cluster, timeout="10s") as client:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                busy = [w for w, tasks in client.processing().items() if tasks]
                if busy:
                    pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
                time.sleep(0.02)

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    summary = _on_cluster(dask_cluster, tmp_path / "killed.duckdb", files=SOME_FILES)
    killer.join()
    assert killed, "no worker was busy: nothing was killed"
    assert summary.failure is None
    _assert_same_store(tmp_path / "killed.duckdb", local_subset)


def test_an_unreachable_scheduler_fails_at_once_in_one_line_naming_it(tmp_path):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    result = CliRunner().invoke(
        app, ["ingest", str(DATA / "pgn" / "wjun19.pgn"), "--db", str(tmp_path / "x.duckdb"), "--dask", address]
    )
    assert result.exit_code == 1
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    # the refusal of the first connection, not a client's retries until its own timeout
    assert lines == [f"elopipe ingest: error: cannot reach the Dask scheduler at {address}: Connection refused"]
    assert not (tmp_path / "x.duckdb").exists()  # nothing was started, not even the store


def test_a_service_that_is_not_a_scheduler_is_refused_in_one_line(tmp_path):
    """An HTTP server (Dask's own dashboard, a proxy) answers bytes Dask's protocol cannot read."""
    import http.server
    import socketserver

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # the server's own log is not the command's output
            pass

    with socketserver.TCPServer(("127.0.0.1", 0), Quiet) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        address = f"tcp://127.0.0.1:{server.server_address[1]}"
        result = CliRunner().invoke(
            app, ["ingest", str(DATA / "pgn" / "wjun19.pgn"), "--db", str(tmp_path / "x.duckdb"), "--dask", address]
        )
        server.shutdown()
    assert result.exit_code == 1
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(
        f"elopipe ingest: error: {address} answers, but not as a Dask scheduler"
    )


def test_without_the_dask_packages_dask_says_how_to_install_them(tmp_path, monkeypatch):
    import elopipe.ingest.scaleout as so

    monkeypatch.setattr(so, "dask_installed", lambda: False)
    result = CliRunner().invoke(app, ["ingest", str(DATA / "pgn" / "wjun19.pgn"), "--dask", "local"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "elopipe ingest: error: --dask needs the optional Dask packages: .venv/bin/pip install --require-hashes -r"
        " requirements/dev.txt (the locked versions; pip install 'elopipe[dask]' outside a clone)"
    )


def test_without_prefect_dask_dask_says_how_to_install_it(tmp_path, monkeypatch):
    """Dask alone is not enough: the flows submit the parse tasks through prefect-dask, which the
    CLI checks (the library, elopipe.ingest.scaleout, knows nothing of Prefect)."""
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name, *rest):
        return None if name == "prefect_dask" else real(name, *rest)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    result = CliRunner().invoke(app, ["ingest", str(DATA / "pgn" / "wjun19.pgn"), "--dask", "local"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "elopipe ingest: error: --dask needs the optional Dask packages: .venv/bin/pip install --require-hashes -r"
        " requirements/dev.txt (the locked versions; pip install 'elopipe[dask]' outside a clone)"
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "a.pgn", "--dask"], ["run", "a.pgn", "--dask", "local"]),
        (["run", "--dask", "a.pgn"], ["run", "--dask", "local", "a.pgn"]),
        (["run", "--dask", "-q", "a.pgn"], ["run", "--dask", "local", "-q", "a.pgn"]),
        (["run", "--dask", "tcp://h:8786", "a.pgn"], ["run", "--dask", "tcp://h:8786", "a.pgn"]),
        (["run", "--dask", "h:8786", "a.pgn"], ["run", "--dask", "h:8786", "a.pgn"]),
        (["run", "--dask", "local", "a.pgn"], ["run", "--dask", "local", "a.pgn"]),
    ],
)
def test_a_bare_dask_flag_means_a_local_cluster(argv, expected):
    assert optional_dask_value(argv) == expected


@pytest.mark.parametrize("value", ["0", "-5", "abc", "1000"])
def test_a_piece_size_that_cannot_work_is_a_usage_error(value, monkeypatch):
    monkeypatch.setenv("ELOPIPE_PIECE_BYTES", value)
    result = CliRunner().invoke(app, ["ingest", str(DATA / "pgn" / "wjun19.pgn"), "--dask", "local"])
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == f"elopipe ingest: error: ELOPIPE_PIECE_BYTES={value}: give a number of bytes, at least 1048576"
    )


def test_a_lost_task_is_told_in_words_not_dask_keys():
    class KilledWorker(Exception):  # distributed's, as far as the message goes
        pass

    killed = KilledWorker("Attempted to run task 'parse_unit-5f66' on 4 different workers, but all died")
    assert pu._why(killed).startswith("every worker that ran it died")
    lost = Exception("parse_unit-7bba cancelled for reason: scheduler-connection-lost.")
    assert pu._why(lost) == "the connection to the Dask scheduler was lost"
    assert pu._why(Exception("worker w does not see f.pgn")) == "worker w does not see f.pgn"


def test_dask_values():
    assert spec_from(None) is None and spec_from("0") is None and spec_from("") is None
    assert spec_from("local").address is None
    assert spec_from("h:8786").address == "tcp://h:8786"
    assert spec_from("tls://h:8786").address == "tls://h:8786"
    with pytest.raises(ScaleOutError, match="not a scheduler address"):
        spec_from("archive.pgn")
    with pytest.raises(ScaleOutError, match="cannot reach the Dask scheduler at tcp://nonexistent.invalid:8786"):
        check_reachable("tcp://nonexistent.invalid:8786", timeout=2)


def test_a_worker_that_does_not_see_a_file_fails_its_unit_rather_than_rejecting_it(tmp_path):
    unit = Unit((Source(str(tmp_path / "not-on-this-machine.pgn")),))
    with pytest.raises(WorkerCannotSee, match="does not see .*not-on-this-machine.pgn"):
        run_unit(unit)


def test_a_unit_that_fails_for_good_fails_its_whole_batch_and_no_later_one(tmp_path, monkeypatch):
    """The batches before the failed one stay loaded; nothing of its batch is written."""
    import elopipe.ingest.parse_pool as pp

    monkeypatch.setattr(pp, "BATCH_FILES", 3)
    files = sorted((DATA / "trf").glob("*.trf"))[:9]
    doomed = files[4]  # in the second batch
    pool = cf.ThreadPoolExecutor(2)

    def submit(unit: Unit):
        if any(s.path == str(doomed) for s in unit.sources):
            fut: cf.Future = cf.Future()
            fut.set_exception(RuntimeError("worker killed 4 times (KilledWorker)"))
            return fut
        return pool.submit(run_unit, unit)

    db = tmp_path / "s.duckdb"
    with pool:
        summary = ingest_paths(files, db, parser=lambda sources: UnitParser(sources, False, submit))
    # the unit holds the batch's three small files: the message names them all
    batch2 = ", ".join(str(p) for p in files[3:6])
    assert summary.failure == f"the cluster could not parse {batch2}: worker killed 4 times (KilledWorker)"
    assert [f.name for f in summary.files] == [str(p) for p in files[:3]]
    stored = store_tables(db)["source_files"]
    assert sorted(r[2] for r in stored) == sorted(str(p) for p in files[:3])
