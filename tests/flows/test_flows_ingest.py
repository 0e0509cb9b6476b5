"""The `ingest_files` flow under the session's Prefect harness."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from elopipe.jobs.requests import IngestRequest
from elopipe.runtime.interrupt import clear_stop, request_stop
from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO

pytestmark = pytest.mark.usefixtures("prefect_harness")

SAMPLE = REPO / "sample_pgn"


def _store_facts(db: Path) -> tuple[list[tuple], int, int]:
    con = open_reader(db)
    try:
        ledger = con.execute(
            "SELECT path, sha256, status, n_games, n_errors FROM source_files ORDER BY path"
        ).fetchall()
        games = con.execute("SELECT count(*) FROM games").fetchone()[0]
        errors = con.execute("SELECT count(*) FROM ingest_errors").fetchone()[0]
    finally:
        con.close()
    return ledger, games, errors


def test_parallel_parse_loads_exactly_what_a_serial_parse_loads(tmp_path: Path, monkeypatch) -> None:
    import elopipe.ingest.parse_pool as pp
    import flows.ingest_files as fi

    serial = fi.ingest_files(IngestRequest((str(SAMPLE),), str(tmp_path / "serial.duckdb")))
    assert serial.parallel_workers == 0  # sample_pgn is small: processes would not pay
    monkeypatch.setattr(pp, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(pp, "BATCH_FILES", 3)  # several batches: parse of the next overlaps the write
    parallel = fi.ingest_files(IngestRequest((str(SAMPLE),), str(tmp_path / "parallel.duckdb")))
    assert parallel.parallel_workers >= 2

    assert [f.name for f in parallel.files] == [f.name for f in serial.files]
    assert parallel.count("loaded") + parallel.count("partial") == len(parallel.files) > 0
    assert _store_facts(tmp_path / "parallel.duckdb") == _store_facts(tmp_path / "serial.duckdb")
    assert parallel.games == _store_facts(tmp_path / "parallel.duckdb")[1] > 0


def test_stop_request_ends_after_the_current_batchs_transaction(tmp_path: Path, monkeypatch) -> None:
    import elopipe.ingest.driver as ingest
    import elopipe.ingest.parse_pool as pp
    import flows.ingest_files as fi

    monkeypatch.setattr(pp, "BATCH_FILES", 1)  # one file per batch: the stop falls between files
    inbox = tmp_path / "in"
    inbox.mkdir()
    names = [
        "wchcand22.pgn",
        "fide_candidates_2022_madrid_spain.pgn",
        "irl_irish_intermediate_champs_2011_latin1_crlf.trf",
    ]
    for name in names:
        shutil.copy(SAMPLE / name, inbox / name)
    real_load = ingest.load_batch

    def load_then_ctrl_c(con, parsed):
        result = real_load(con, parsed)
        request_stop()  # as if Ctrl-C arrived while this batch was being written
        return result

    monkeypatch.setattr(ingest, "load_batch", load_then_ctrl_c)
    db = tmp_path / "store.duckdb"
    try:
        summary = fi.ingest_files(IngestRequest((str(inbox),), str(db)))
    finally:
        clear_stop()
    assert summary.stopped
    assert len(summary.files) == 1 and summary.files[0].status == "loaded"
    ledger, games, _ = _store_facts(db)
    assert len(ledger) == 1 and ledger[0][2] == "loaded"
    assert games == summary.files[0].n_games > 0

    monkeypatch.setattr(ingest, "load_batch", real_load)
    rest = fi.ingest_files(IngestRequest((str(inbox),), str(db)))  # the next run picks up the others, skips the first
    assert [f.status for f in rest.files].count("skipped") == 1
    assert len(_store_facts(db)[0]) == len(names)


def test_a_dead_parser_process_rejects_its_file_with_the_reason_and_the_rest_still_load(tmp_path: Path, monkeypatch):
    import concurrent.futures as cf
    from concurrent.futures.process import BrokenProcessPool

    import elopipe.ingest.parse_pool as pp
    import flows.ingest_files as fi

    class DeadPool:
        """Stands in for a process pool whose worker is killed (e.g. by the OOM killer) while it
        reads the first file submitted; files submitted later are parsed normally."""

        def __init__(self) -> None:
            self.calls = 0
            self.lock = threading.Lock()

        def submit(self, fn, *args):
            with self.lock:
                self.calls += 1
                first = self.calls == 1
            fut: cf.Future = cf.Future()
            if first:
                fut.set_exception(BrokenProcessPool("A process in the process pool was terminated abruptly"))
            else:
                fut.set_result(fn(*args))
            return fut

        def shutdown(self, **kwargs) -> None:
            pass

    inbox = tmp_path / "in"
    inbox.mkdir()
    for name in ("wchcand22.pgn", "irl_irish_intermediate_champs_2011_latin1_crlf.trf"):
        shutil.copy(SAMPLE / name, inbox / name)
    monkeypatch.setattr(pp, "pool_size", lambda sources: 2)
    monkeypatch.setattr(pp, "make_pool", lambda workers: DeadPool())
    summary = fi.ingest_files(IngestRequest((str(inbox),), str(tmp_path / "store.duckdb")))
    dead = [f for f in summary.files if f.status == "rejected"]
    alive = [f for f in summary.files if f.status == "loaded"]
    assert len(dead) == 1 and "parser process died" in (dead[0].reason or "")
    assert len(alive) == 1 and alive[0].n_games > 0


def test_run_and_watch_say_an_event_in_progress_as_ingest_does(monkeypatch) -> None:
    """`run` and `watch` (the ingest stage of their flows) give the line `elopipe ingest` gives
    for a file whose event is still in progress: it is missing from the lists until complete."""
    import flows.ingest_files as stage
    from elopipe.ingest.ledger import FileResult

    said: list[tuple[str, str]] = []
    monkeypatch.setattr(stage, "stage_warning", lambda name, line: said.append((name, line)))
    monkeypatch.setattr(stage, "stage_progress", lambda name, line: None)
    lines = stage._FileLines()
    lines.file_done(FileResult(name="a.trf", status="loaded", in_progress="round 2 of 3 is paired with no result"))
    lines.file_done(FileResult(name="b.trf", status="loaded"))
    assert said == [
        (
            "ingest",
            "in progress: a.trf: round 2 of 3 is paired with no result; "
            "not rated until a file with its results is loaded",
        )
    ]
