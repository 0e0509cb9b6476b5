"""The drop folder as a library (elopipe.ingest.watcher), with the real ingest and no Prefect."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.ingest.watcher.arrival import ArrivalTracker, is_candidate, looks_complete
from elopipe.ingest.watcher.batch import WatchStats, run_batch_and_file
from elopipe.ingest.watcher.filing import file_away
from elopipe.ingest.watcher.loop import watch
from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE, FileOutcome, outcomes_by_path
from elopipe.runtime.interrupt import clear_stop, request_stop
from elopipe.store.connect import open_reader
from tests.helpers.paths import REPO

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
    [
        ("a.pgn", True),
        ("a.PGN", True),
        ("a.pgn.part", False),
        ("a.TMP", False),
        ("a.crdownload", False),
        (".a", False),
        ("a.trf.filepart", False),
        ("a.pgn.partial", False),
        ("a.pgn.download", False),
        ("a.trf~", False),
    ],  # fmt: skip
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


def test_a_batch_says_where_its_files_went(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A fresh user could not tell where `watch` had put a file: one line per batch names the
    processed ones, and the new name of one that met an earlier file of its name."""
    (tmp_path / PROCESSED).mkdir()
    (tmp_path / PROCESSED / "a.trf").write_text("earlier")
    for name in ("a.trf", "b.pgn", "c.pgn"):
        (tmp_path / name).write_text(name)
    outcomes = {
        tmp_path / "a.trf": FileOutcome("loaded", None),
        tmp_path / "b.pgn": FileOutcome("skipped", None),
        tmp_path / "c.pgn": FileOutcome("rejected", "no players"),
    }
    with caplog.at_level("INFO", logger="elopipe.ingest.watcher"):
        run_batch_and_file(tmp_path, list(outcomes), lambda files: outcomes, WatchStats())
    moved = [r.getMessage() for r in caplog.records if r.getMessage().startswith("moved to")]
    renamed = next(p.name for p in (tmp_path / PROCESSED).iterdir() if p.name not in ("a.trf", "b.pgn"))
    assert moved == [f"moved to {tmp_path / PROCESSED}: a.trf as {renamed}, b.pgn"]
    assert (tmp_path / PROCESSED / renamed).read_text() == "a.trf"


def test_a_long_or_odd_name_is_filed_and_shown_on_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A 246-byte name stopped `watch` (its `.reason.txt` and its dated twin passed the file
    system's 255 bytes); a newline or bytes that are not UTF-8 in a name reached the terminal raw
    (a forged line, surrogates). Found by a hostile tester."""
    from elopipe.ingest.watcher.filing import NAME_MAX, REASON_SUFFIX

    long_name = "z" * 246 + ".trf"
    odd = "new\nline.trf"
    not_utf8 = os.fsdecode(b"bad\xff.trf")
    names = [long_name, odd, not_utf8]
    (tmp_path / PROCESSED).mkdir()
    (tmp_path / PROCESSED / long_name).write_text("earlier")  # its twin needs a dated name too
    for name in names:
        (tmp_path / name).write_text(name if name != not_utf8 else "x")
    outcomes = {tmp_path / long_name: FileOutcome("loaded", None), tmp_path / odd: FileOutcome("loaded", None),
                tmp_path / not_utf8: FileOutcome("rejected", "no players")}  # fmt: skip
    with caplog.at_level("INFO", logger="elopipe.ingest.watcher"):
        run_batch_and_file(tmp_path, list(outcomes), lambda files: outcomes, WatchStats())
    assert not [n for n in names if (tmp_path / n).exists()]  # every file filed
    filed = [p.name for p in (tmp_path / PROCESSED).iterdir()] + [p.name for p in (tmp_path / QUARANTINE).iterdir()]
    assert all(len(os.fsencode(n)) <= NAME_MAX for n in filed)
    assert any(n.endswith(REASON_SUFFIX) for n in filed)
    said = [r.getMessage() for r in caplog.records]
    assert all("\n" not in line and line.isprintable() for line in said), said
    assert any("new\\x0aline.trf" in line for line in said) and any("bad\\xff.trf" in line for line in said)


def test_outcomes_fold_archive_members_and_earlier_rejections(tmp_path: Path) -> None:
    from elopipe.ingest.ledger import FileResult

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


def test_a_batch_whose_rating_or_publishing_stopped_leaves_its_stored_files_for_the_next_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A stop after the ingest committed: moved to processed/, nothing would bring the files'
    lists out (the next watch or serve run saw no new file; a hostile tester's finding). They
    stay in the inbox, and the rejected one is quarantined as usual."""
    inbox, db = tmp_path / "inbox", tmp_path / "store.duckdb"
    inbox.mkdir()
    shutil.copy(GOOD, inbox / "good.pgn")
    (inbox / "broken.pgn").write_bytes(b"\x00\x01garbage\x00" * 100)
    files = sorted(inbox.glob("*.pgn"))

    def stopped_after_ingest(batch: list[Path]) -> dict[Path, FileOutcome]:
        summary = ingest_paths([str(f) for f in batch], db)
        return outcomes_by_path(batch, summary.files, stopped=True)

    stats = WatchStats()
    with caplog.at_level("INFO", logger="elopipe.ingest.watcher"):
        run_batch_and_file(inbox, files, stopped_after_ingest, stats)
    assert (inbox / "good.pgn").exists() and not (inbox / PROCESSED / "good.pgn").exists()
    assert (inbox / QUARANTINE / "broken.pgn").exists()
    assert (stats.processed, stats.quarantined, stats.left) == (0, 1, 1)
    assert "left in the inbox for the next run: good.pgn" in [r.getMessage() for r in caplog.records]
    # the next run takes it again: already in the store, then processed
    run_batch_and_file(inbox, [inbox / "good.pgn"], _ingest_batch(db), stats)
    assert (inbox / PROCESSED / "good.pgn").exists()
    assert _ledger(db)["good.pgn"][0] == "loaded"


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


# -- a copy that stalls (issue 12, item 5) --

STALLING = REPO.parent / "shared" / "data" / "pgn" / "wjun19.pgn"  # 181 games


def _half_way_into_a_game(data: bytes) -> int:
    """An offset in the middle of a game's moves, about half-way through the file."""
    start = data.index(b"[Event ", len(data) // 2)
    return data.index(b"\n\n", start) + 40


def _games_in_one_store(db: Path, path: Path) -> tuple[int, int, list[str]]:
    """(games in the store, distinct games of the one file they come from, the ledger statuses of `path`)."""
    con = open_reader(db)
    try:
        n, distinct = con.execute(
            "SELECT count(*), count(DISTINCT game_index) FILTER (WHERE file_id = (SELECT max(file_id) FROM games)) "
            "FROM games"
        ).fetchone()
        rows = con.execute("SELECT status FROM source_files WHERE path = ? ORDER BY file_id", [str(path)]).fetchall()
        statuses = [s for (s,) in rows]
    finally:
        con.close()
    return n, distinct, statuses


def _reference_games(tmp_path: Path) -> int:
    ref = tmp_path / "reference.duckdb"
    ingest_paths([str(STALLING)], ref)
    con = open_reader(ref)
    try:
        return con.execute("SELECT count(*) FROM games").fetchone()[0]
    finally:
        con.close()


class _StallingCopy(threading.Thread):
    """Writes the first half of a real PGN (ending inside a game), keeps the file open like `cp`,
    and writes the rest when `resume` is set, then closes it."""

    def __init__(self, src: Path, dst: Path) -> None:
        super().__init__(daemon=True)
        self.data, self.dst = src.read_bytes(), dst
        self.cut = _half_way_into_a_game(self.data)
        self.half_written, self.resume, self.done = threading.Event(), threading.Event(), threading.Event()

    def run(self) -> None:
        with self.dst.open("wb") as fh:
            fh.write(self.data[: self.cut])
            fh.flush()
            self.half_written.set()
            self.resume.wait(120)
            fh.write(self.data[self.cut :])
        self.done.set()


def _watch_until(inbox: Path, run, *, max_batches: int, **kw) -> WatchStats:
    """`watch` with a safety stop, so a watcher that never takes the file fails instead of hanging."""
    timer = threading.Timer(120, request_stop)
    timer.start()
    try:
        return watch(inbox, run, interval=0.2, max_batches=max_batches, **kw)
    finally:
        timer.cancel()
        clear_stop()


def test_a_copy_that_stalls_mid_game_is_taken_once_it_is_complete(tmp_path: Path) -> None:
    inbox, db = tmp_path / "inbox", tmp_path / "store.duckdb"
    inbox.mkdir()
    copy = _StallingCopy(STALLING, inbox / "wjun19.pgn")
    copy.start()
    assert copy.half_written.wait(30)
    # The copy pauses for ten polls, far longer than the two that make a file look complete.
    threading.Timer(2.0, copy.resume.set).start()
    taken: list[int] = []
    ingest = _ingest_batch(db)

    def run(files: list[Path]) -> dict[Path, FileOutcome]:
        taken.append(len(files[0].read_bytes()))
        return ingest(files)

    stats = _watch_until(inbox, run, max_batches=1)
    assert copy.done.is_set() and taken == [len(copy.data)], "the truncated copy was taken"
    assert stats.processed == 1
    assert (inbox / PROCESSED / "wjun19.pgn").read_bytes() == copy.data
    n, distinct, statuses = _games_in_one_store(db, inbox.resolve() / "wjun19.pgn")
    assert n == distinct == _reference_games(tmp_path)
    assert statuses == ["loaded"]


@pytest.mark.parametrize("resume_when", ["during the batch", "after the move"])
def test_a_truncated_copy_taken_anyway_is_loaded_again_whole_as_a_correction(tmp_path: Path, resume_when: str) -> None:
    inbox, db = tmp_path / "inbox", tmp_path / "store.duckdb"
    inbox.mkdir()
    copy = _StallingCopy(STALLING, inbox / "wjun19.pgn")
    copy.start()
    assert copy.half_written.wait(30)
    ingest = _ingest_batch(db)
    sizes: list[int] = []

    def run(files: list[Path]) -> dict[Path, FileOutcome]:
        sizes.append(len(files[0].read_bytes()))
        outcomes = ingest(files)
        if resume_when == "during the batch" and len(sizes) == 1:
            copy.resume.set()
            assert copy.done.wait(30)
        return outcomes

    if resume_when == "after the move":
        # the writer still holds the file when the watcher moves it to processed/, and finishes it there
        def resume_after_move() -> None:
            while not (inbox / PROCESSED / "wjun19.pgn").exists():
                time.sleep(0.05)
            copy.resume.set()

        threading.Thread(target=resume_after_move, daemon=True).start()

    # a short wait for the missing result: the copy stalls longer than the watcher waits
    stats = _watch_until(inbox, run, max_batches=2, incomplete_wait=0.5)
    assert sizes == [copy.cut, len(copy.data)]
    assert stats.batches == 2 and stats.processed == 1 + (resume_when == "after the move")
    assert (inbox / PROCESSED / "wjun19.pgn").read_bytes() == copy.data
    assert not (inbox / "wjun19.pgn").exists()
    n, distinct, statuses = _games_in_one_store(db, inbox.resolve() / "wjun19.pgn")
    assert n == distinct == _reference_games(tmp_path)
    assert statuses[-1] in ("loaded", "partial") and statuses[:-1] == ["replaced"] * (len(statuses) - 1)


def test_real_files_look_complete_and_their_cut_copies_do_not(tmp_path: Path) -> None:
    import zipfile

    data_dir = STALLING.parents[1]
    real = sorted(data_dir.glob("pgn/*.[pP][gG][nN]")) + sorted(data_dir.glob("trf/*.trf"))
    assert len(real) > 20
    for src in real:
        data = src.read_bytes()
        (tmp_path / src.name).write_bytes(data)
        assert looks_complete(tmp_path / src.name), src.name
        # cut inside the last line or game, as a stalled copy leaves it
        cut = data.rstrip().rfind(b" ") + 1
        (tmp_path / src.name).write_bytes(data[:cut])
        assert not looks_complete(tmp_path / src.name), src.name
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as zf:
        zf.write(STALLING, "wjun19.pgn")
    assert looks_complete(tmp_path / "a.zip")
    (tmp_path / "b.zip").write_bytes((tmp_path / "a.zip").read_bytes()[:-30])
    assert not looks_complete(tmp_path / "b.zip")
    (tmp_path / "empty.pgn").write_bytes(b"")  # nothing to judge: taken and rejected as empty
    assert looks_complete(tmp_path / "empty.pgn")
    (tmp_path / "noise.pgn").write_bytes(b"\x00\x01garbage\x00" * 10)  # not chess: judged by size and mtime only
    assert looks_complete(tmp_path / "noise.pgn")


def test_a_symlink_or_fifo_in_the_inbox_is_left_alone_and_named_once(tmp_path: Path, caplog) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:$6$hash:::\n")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "notes.pgn").symlink_to(secret)
    os.mkfifo(inbox / "games.zip")
    real = inbox / "real.pgn"
    shutil.copy(GOOD, real)
    tracker = ArrivalTracker(inbox)
    with caplog.at_level("WARNING", logger="elopipe.ingest.watcher"):
        tracker.poll()
        arrived = tracker.poll()
        tracker.poll()
    assert arrived == [real]
    warned = [r.getMessage() for r in caplog.records]
    assert sum("notes.pgn" in m and "symbolic link" in m for m in warned) == 1
    assert sum("games.zip" in m and "not a regular file" in m for m in warned) == 1
    assert not is_candidate(inbox / "notes.pgn")


def test_a_folder_dropped_in_the_inbox_is_named_once_not_passed_over_in_silence(tmp_path: Path, caplog) -> None:
    """A hostile tester copied a folder of two PGNs into the inbox: nothing was said, ever."""
    inbox = tmp_path / "inbox"
    (inbox / "mybatch").mkdir(parents=True)
    shutil.copy(GOOD, inbox / "mybatch" / "a.pgn")
    (inbox / "processed").mkdir()
    (inbox / "quarantine").mkdir()
    tracker = ArrivalTracker(inbox)
    with caplog.at_level("WARNING", logger="elopipe.ingest.watcher"):
        for _ in range(3):
            assert tracker.poll() == []
    warned = [r.getMessage() for r in caplog.records]
    assert warned == [
        f"skipped {inbox / 'mybatch'}: a folder: watch takes the files at the top of the inbox"
        " (move them up, or `elopipe ingest` it)"
    ]


def test_processed_or_quarantine_as_a_symlink_stops_the_watch_before_any_move(tmp_path: Path) -> None:
    from elopipe.ingest.watcher.filing import InboxError, inbox_folder

    victim = tmp_path / "victim"
    victim.mkdir()
    for name in (PROCESSED, QUARANTINE):
        inbox = tmp_path / f"inbox_{name}"
        inbox.mkdir()
        (inbox / name).symlink_to(victim, target_is_directory=True)
        shutil.copy(GOOD, inbox / "ok.pgn")
        with pytest.raises(InboxError, match="symbolic link"):
            watch(inbox, lambda files: {f: FileOutcome("loaded") for f in files}, interval=0.01, max_batches=1)
        with pytest.raises(InboxError):
            file_away(inbox, inbox / "ok.pgn", FileOutcome("rejected" if name == QUARANTINE else "loaded", "x"))
        assert (inbox / "ok.pgn").exists()
    assert list(victim.iterdir()) == []
    assert inbox_folder(tmp_path / "fresh", PROCESSED).is_dir()


def test_arrival_needs_two_equal_polls_the_settle_time_apart(tmp_path: Path) -> None:
    """`watch()` looks more often than its interval (on a change of the folder, and when a file
    is due): a file is still taken only once two polls at least `settle` seconds apart saw it
    unchanged, however many polls came between."""
    tracker = ArrivalTracker(tmp_path, settle=3600.0)
    f = tmp_path / "a.trf"
    f.write_text("012 x\n")
    assert tracker.poll() == [] and tracker.due() is not None
    assert tracker.poll() == []  # the same signature, but seen an instant ago
    first_due = tracker.due()
    with f.open("a") as fh:
        fh.write("more\n")
    os.utime(f, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert tracker.poll() == []
    assert tracker.due() is not None and first_due is not None and tracker.due() > first_due  # seen anew
    quick = ArrivalTracker(tmp_path, settle=0.0)
    assert quick.poll() == [] and quick.poll() == [f]


def test_the_watch_looks_as_soon_as_a_file_lands(tmp_path: Path) -> None:
    """Between two looks an interval apart, the watch wakes when an entry of the inbox is added
    (the folder's modification time), so a file's first look comes when it lands."""
    from elopipe.ingest.watcher.loop import folder_stamp, wait_for_news

    woke: list[bool] = []
    stamp = folder_stamp(tmp_path)
    waiter = threading.Thread(target=lambda: woke.append(wait_for_news(tmp_path, stamp, time.monotonic() + 3600, None)))
    waiter.start()
    (tmp_path / ".landing.part").write_text("012 x\n")
    (tmp_path / ".landing.part").rename(tmp_path / "landed.trf")
    waiter.join(600)  # long before the hour it would otherwise wait
    assert woke == [False]


def test_a_zip_cut_short_waits_as_an_incomplete_file_not_read_as_the_zip_inside_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A zip cut short in its last 64 KiB, its last member a zip: `zipfile.is_zipfile` found the
    inner archive's end record and the watch took the upload at once (a hostile tester). It waits
    `incomplete_wait` like any file that looks cut short, with the reason, then is taken."""
    from elopipe.read.zips import CUT
    from tests.helpers.zips import nested_upload

    upload = nested_upload()
    up = tmp_path / "up.zip"
    for cut, why in ((upload.cut, CUT), (upload.cut_after_inner, "bytes come before the archive's start")):
        up.write_bytes(cut)
        assert not looks_complete(up)
        caplog.clear()
        with caplog.at_level("WARNING", logger="elopipe.ingest.watcher"):
            tracker = ArrivalTracker(tmp_path, incomplete_wait=60)
            assert tracker.poll() == [] and tracker.poll() == [] and tracker.poll() == []
            os.utime(up, (time.time() - 61, time.time() - 61))  # held still longer than the wait
            tracker = ArrivalTracker(tmp_path, incomplete_wait=60)
            assert tracker.poll() == [] and tracker.poll() == [up]
        waiting, taken = [r.getMessage() for r in caplog.records if "up.zip looks incomplete" in r.getMessage()]
        assert why in waiting and "waiting up to 60 s" in waiting, waiting
        assert why in taken and "taking it as it is" in taken, taken
    up.write_bytes(upload.full)
    assert looks_complete(up)


def test_a_nested_zip_cut_short_is_taken_only_once_complete_and_read_in_full(tmp_path: Path) -> None:
    """The complete file replacing the cut one under the same name is the one the watch takes:
    its own member loads, no member of the zip inside it is ever read."""
    from tests.helpers.zips import nested_upload

    upload = nested_upload()
    inbox, db = tmp_path / "inbox", tmp_path / "store.duckdb"
    inbox.mkdir()
    (inbox / "up.zip").write_bytes(upload.cut)
    threading.Timer(1.5, (inbox / "up.zip").write_bytes, [upload.full]).start()
    taken: list[bytes] = []
    ingest = _ingest_batch(db)

    def run(files: list[Path]) -> dict[Path, FileOutcome]:
        taken.extend(f.read_bytes() for f in files)
        return ingest(files)

    stats = _watch_until(inbox, run, max_batches=1)
    assert taken == [upload.full], "the cut copy was taken"
    assert stats.processed == 1 and (inbox / PROCESSED / "up.zip").read_bytes() == upload.full
    con = open_reader(db)
    try:
        rows = con.execute("SELECT member, status FROM source_files ORDER BY member").fetchall()
    finally:
        con.close()
    assert rows == [("g.trf", "loaded"), ("in.zip", "rejected")]
