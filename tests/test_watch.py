"""The drop folder as a library (elopipe.watcher), with the real ingest and no Prefect."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from elopipe.ingest import ingest_paths
from elopipe.store import open_reader
from elopipe.watcher import (
    PROCESSED,
    QUARANTINE,
    ArrivalTracker,
    FileOutcome,
    file_away,
    is_candidate,
    outcomes_by_path,
    watch,
)

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_pgn"
GOOD = SAMPLE / "wchcand22.pgn"
SLOW = SAMPLE / "fide_candidates_2022_madrid_spain.pgn"

# Copies a file in small pieces, like a download in progress, then exits.
SLOW_COPY = textwrap.dedent(
    """
    import sys, time
    src, dst, piece, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    data = open(src, 'rb').read()
    with open(dst, 'wb') as fh:
        for i in range(0, len(data), piece):
            fh.write(data[i:i + piece]); fh.flush()
            if i == 0:
                print('STARTED', flush=True)
            time.sleep(pause)
    """
)


def _ingest_batch(db: Path):
    def run(files: list[Path]) -> dict[Path, FileOutcome]:
        summary = ingest_paths([str(f) for f in files], db)
        return outcomes_by_path(files, summary.files)

    return run


def _ledger(db: Path) -> dict[str, tuple[str, int, str | None]]:
    con = open_reader(db)
    try:
        rows = con.execute("SELECT path, status, n_games, reason FROM source_files").fetchall()
    finally:
        con.close()
    return {Path(p).name: (status, n, reason) for p, status, n, reason in rows}


def test_watcher_takes_finished_files_quarantines_broken_and_waits_for_growing(tmp_path: Path) -> None:
    inbox, db = tmp_path / "inbox", tmp_path / "store.duckdb"
    inbox.mkdir()
    shutil.copy(GOOD, inbox / "good.pgn")
    (inbox / "broken.pgn").write_bytes(b"\x00\x01garbage\x00" * 100)
    for ignored in ("download.pgn.part", "x.pgn.tmp", "y.pgn.crdownload", ".hidden.pgn"):
        shutil.copy(GOOD, inbox / ignored)
    grower = subprocess.Popen(
        [sys.executable, "-c", SLOW_COPY, str(SLOW), str(inbox / "growing.pgn"), "400", "0.1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert grower.stdout is not None and grower.stdout.readline().strip() == "STARTED"
        stats = watch(inbox, _ingest_batch(db), interval=0.3, max_batches=1)
        assert grower.poll() is None, "the slow copy ended before the first batch; the test proves nothing"
    finally:
        grower.wait(60)

    assert (stats.batches, stats.processed, stats.quarantined) == (1, 1, 1)
    assert (inbox / PROCESSED / "good.pgn").read_bytes() == GOOD.read_bytes()
    assert (inbox / QUARANTINE / "broken.pgn").exists()
    reason = (inbox / QUARANTINE / "broken.pgn.reason.txt").read_text(encoding="utf-8")
    assert reason.startswith("broken.pgn: ") and "binary" in reason
    assert (inbox / "growing.pgn").exists(), "a file still being written must stay in the inbox"
    ledger = _ledger(db)
    assert ledger["good.pgn"][0] == "loaded" and ledger["good.pgn"][1] > 0
    assert ledger["broken.pgn"][0] == "rejected" and "binary" in (ledger["broken.pgn"][2] or "")
    assert "growing.pgn" not in ledger

    # The copy has finished: the next run takes it whole.
    stats = watch(inbox, _ingest_batch(db), interval=0.2, max_batches=1)
    assert (stats.processed, stats.quarantined) == (1, 0)
    assert (inbox / PROCESSED / "growing.pgn").read_bytes() == SLOW.read_bytes()
    ledger = _ledger(db)
    assert ledger["growing.pgn"][0] == "loaded" and ledger["growing.pgn"][1] > 0
    for ignored in ("download.pgn.part", "x.pgn.tmp", "y.pgn.crdownload", ".hidden.pgn"):
        assert (inbox / ignored).exists(), ignored


def test_restarted_watcher_never_loads_the_same_file_twice(tmp_path: Path) -> None:
    inbox, db = tmp_path / "inbox", tmp_path / "store.duckdb"
    inbox.mkdir()
    shutil.copy(GOOD, inbox / "good.pgn")
    (inbox / "broken.pgn").write_bytes(b"\x00" * 64)
    watch(inbox, _ingest_batch(db), interval=0.2, max_batches=1)
    # The same bytes dropped again (a user copies the folder twice, or a watcher restarted
    # before moving them): processed or quarantined again, never loaded a second time.
    shutil.copy(GOOD, inbox / "good.pgn")
    (inbox / "broken.pgn").write_bytes(b"\x00" * 64)
    stats = watch(inbox, _ingest_batch(db), interval=0.2, max_batches=1)
    assert (stats.processed, stats.quarantined) == (1, 1)
    names = {p.name for p in (inbox / PROCESSED).iterdir()}
    assert len(names) == 2 and "good.pgn" in names
    assert all(n.startswith("good.") and n.endswith(".pgn") for n in names)
    con = open_reader(db)
    try:
        n_loaded = con.execute("SELECT count(*) FROM source_files WHERE status = 'loaded'").fetchone()[0]
        n_games = con.execute("SELECT count(*) FROM games").fetchone()[0]
    finally:
        con.close()
    assert n_loaded == 1
    assert n_games == _ledger(db)["good.pgn"][1]


def test_arrival_needs_two_equal_polls(tmp_path: Path) -> None:
    tracker = ArrivalTracker(tmp_path)
    f = tmp_path / "a.trf"
    f.write_text("012 x\n")
    assert tracker.poll() == []
    with f.open("a") as fh:
        fh.write("more\n")
    assert tracker.poll() == []  # size changed since the last poll
    assert tracker.poll() == [f]
    assert tracker.poll() == []  # handed out once
    os.utime(f, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert tracker.poll() == []
    assert tracker.poll() == [f]


@pytest.mark.parametrize(
    ("name", "taken"),
    [("a.pgn", True), ("a.PGN", True), ("a.pgn.part", False), ("a.TMP", False), ("a.crdownload", False), (".a", False)],
)
def test_temporary_and_hidden_names_are_ignored(tmp_path: Path, name: str, taken: bool) -> None:
    (tmp_path / name).write_text("x")
    assert is_candidate(tmp_path / name) is taken


def test_file_away_keeps_earlier_files_with_the_same_name(tmp_path: Path) -> None:
    (tmp_path / "t.trf").write_text("one")
    first = file_away(tmp_path, tmp_path / "t.trf", FileOutcome("rejected", "no players"))
    (tmp_path / "t.trf").write_text("two")
    second = file_away(tmp_path, tmp_path / "t.trf", FileOutcome("rejected", "no rounds"))
    assert first != second
    assert first.read_text() == "one" and second.read_text() == "two"
    assert "no players" in Path(str(first) + ".reason.txt").read_text()
    assert "no rounds" in Path(str(second) + ".reason.txt").read_text()


def test_outcomes_fold_archive_members_and_earlier_rejections(tmp_path: Path) -> None:
    from elopipe.loader import FileResult

    z, p, q = tmp_path / "a.zip", tmp_path / "b.pgn", tmp_path / "c.pgn"
    results = [
        FileResult(f"{z}!x.pgn", "loaded"),
        FileResult(f"{z}!y.trf", "rejected", reason="no players"),
        FileResult(str(p), "skipped", reason="already ingested (rejected)"),
    ]
    out = outcomes_by_path([z, p, q], results)
    assert out[z] == FileOutcome("partial", "no players")
    assert out[p].status == "rejected"
    assert q not in out  # no result: the batch did not reach it, it stays in the inbox


def test_file_dropped_during_a_batch_goes_to_the_next_batch(tmp_path: Path) -> None:
    inbox, db = tmp_path / "inbox", tmp_path / "store.duckdb"
    inbox.mkdir()
    shutil.copy(GOOD, inbox / "first.pgn")
    batches: list[list[str]] = []
    ingest = _ingest_batch(db)

    def run(files: list[Path]) -> dict[Path, FileOutcome]:
        batches.append([f.name for f in files])
        if len(batches) == 1:  # a user drops another file while the first batch runs
            shutil.copy(SLOW, inbox / "second.pgn")
        return ingest(files)

    stats = watch(inbox, run, interval=0.2, max_batches=2)
    assert batches == [["first.pgn"], ["second.pgn"]]
    assert stats.processed == 2
    assert {p.name for p in (inbox / PROCESSED).iterdir()} == {"first.pgn", "second.pgn"}
