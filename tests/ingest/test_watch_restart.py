"""A restarted watch does with a file it filed away what a watch that kept running does: the
files it keeps an eye on are kept in `INBOX/.elopipe/filed-away.jsonl`, not in memory alone (a
stalled copy that finished in processed/ after a restart was never loaded whole). No test here
waits on a clock: each waits on an event or a file."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from elopipe.ingest.watcher.arrival import signature
from elopipe.ingest.watcher.filed_log import ELOPIPE_FOLDER, FILED_AWAY, SLACK_LINES
from elopipe.ingest.watcher.filing import InboxError, file_away
from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE, FileOutcome
from elopipe.ingest.watcher.recheck import FiledAway
from elopipe.runtime.interrupt import request_stop
from tests.ingest.test_watch import (
    STALLING,
    _games_in_one_store,
    _ingest_batch,
    _reference_games,
    _StallingCopy,
    _watch_until,
)

HOUR_NS = 3600 * 10**9


@pytest.mark.parametrize("restart", [False, True], ids=["running", "restarted"])
def test_a_copy_finished_in_processed_is_loaded_again_whole_with_or_without_a_restart(
    tmp_path: Path, restart: bool
) -> None:
    """A copy stalls mid-game; the watch takes it as it is, and moves it to processed/; the
    writer, still holding it, finishes it there. A watch restarted in between loads it again
    whole, as a correction, as the watch that kept running does."""
    inbox, db = tmp_path / "inbox", tmp_path / "store.duckdb"
    inbox.mkdir()
    copy = _StallingCopy(STALLING, inbox / "wjun19.pgn")
    copy.start()
    assert copy.half_written.wait(30)
    ingest = _ingest_batch(db)
    sizes: list[int] = []

    def run(files: list[Path]) -> dict[Path, FileOutcome]:
        sizes.append(len(files[0].read_bytes()))
        return ingest(files)

    def finish_the_copy() -> None:
        if (inbox / PROCESSED / "wjun19.pgn").exists() and not copy.resume.is_set():
            copy.resume.set()
            assert copy.done.wait(30)

    def stop_if_missed() -> None:  # idle with nothing back in the inbox: the changed file was forgotten
        if not (inbox / "wjun19.pgn").exists():
            request_stop()

    if restart:
        _watch_until(inbox, run, max_batches=1, incomplete_wait=0.0)
        finish_the_copy()
        stats = _watch_until(inbox, run, max_batches=1, on_idle=stop_if_missed)
    else:
        stats = _watch_until(inbox, run, max_batches=2, incomplete_wait=0.0, on_idle=finish_the_copy)
    assert sizes == [copy.cut, len(copy.data)], "the finished copy was not loaded again"
    assert stats.returned == 1
    assert (inbox / PROCESSED / "wjun19.pgn").read_bytes() == copy.data
    assert not (inbox / "wjun19.pgn").exists()
    n, distinct, statuses = _games_in_one_store(db, inbox.resolve() / "wjun19.pgn")
    assert n == distinct == _reference_games(tmp_path)
    assert statuses[-1] in ("loaded", "partial") and statuses[:-1] == ["replaced"]


def _file_away(inbox: Path, filed: FiledAway, name: str, text: str, status: str = "loaded") -> Path:
    (inbox / name).write_text(text)
    sig = signature(inbox / name)
    assert sig is not None
    target = file_away(inbox, inbox / name, FileOutcome(status, "no players"))
    filed.add(target, inbox / name, sig)
    return target


def _append(path: Path, text: str, mtime_ns: int | None = None) -> None:
    with path.open("a") as fh:
        fh.write(text)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


@pytest.mark.parametrize("restart", [False, True], ids=["running", "restarted"])
def test_what_happens_to_a_filed_file_does_not_depend_on_a_restart(tmp_path: Path, restart: bool) -> None:
    """Changed within the hour after its move: back to the inbox (its reason file gone). Changed
    later (its mtime says when, also for a change made while no watch ran): left where it is.
    Unchanged: still watched. Moved away by the user: forgotten, also what later takes its name."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    filed = FiledAway(inbox)
    changed = _file_away(inbox, filed, "changed.trf", "012 a\n", status="rejected")
    late = _file_away(inbox, filed, "late.trf", "012 b\n")
    still = _file_away(inbox, filed, "still.trf", "012 c\n")
    gone = _file_away(inbox, filed, "gone.trf", "012 d\n")
    _append(changed, "013 rest\n")
    _append(late, "013 rest\n", mtime_ns=time.time_ns() + 2 * HOUR_NS)  # changed after the hour
    gone.unlink()
    if restart:
        filed = FiledAway(inbox)
    assert filed.return_changed() == 1
    assert (inbox / "changed.trf").read_text() == "012 a\n013 rest\n"
    assert sorted(p.name for p in (inbox / QUARANTINE).iterdir()) == []  # its reason file went with it
    assert sorted(p.name for p in (inbox / PROCESSED).iterdir()) == ["late.trf", "still.trf"]
    gone.write_text("the user's own file, put there after")

    # every later watch still watches `still.trf`, and only it
    _append(still, "013 rest\n")
    assert FiledAway(inbox).return_changed() == 1
    assert (inbox / "still.trf").exists() and not still.exists()
    assert late.exists() and gone.read_text() == "the user's own file, put there after"
    assert os.listdir(inbox / ELOPIPE_FOLDER) == [FILED_AWAY]


def test_lines_elopipe_does_not_write_move_nothing_from_elsewhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Whoever can write to the inbox can edit the file: a line naming a file outside processed/
    or quarantine/, or an inbox name with a folder in it, is left out with a warning."""
    inbox, outside = tmp_path / "inbox", tmp_path / "outside"
    (inbox / ELOPIPE_FOLDER).mkdir(parents=True)
    (inbox / PROCESSED).mkdir()
    outside.mkdir()
    (outside / "secret.pgn").write_text("x")
    (inbox / PROCESSED / "ok.pgn").write_text("changed")
    line = {"size": 1, "mtime_ns": 1, "at_ns": time.time_ns(), "ino": 1}
    lines = [
        {"filed": "../outside/secret.pgn", "from": "secret.pgn", **line},
        {"filed": "processed/../../outside/secret.pgn", "from": "secret.pgn", **line},
        {"filed": "processed/ok.pgn", "from": "../outside/ok.pgn", **line},
        {"filed": "processed/ok.pgn", "from": "ok.pgn", "size": True, "mtime_ns": 1, "at_ns": 1, "ino": 1},
        {"forget": "/etc/passwd"},
    ]
    text = "".join(json.dumps(x) + "\n" for x in lines) + "not json\n" + "[" * 100_000 + "\n"
    (inbox / ELOPIPE_FOLDER / FILED_AWAY).write_text(text)
    with caplog.at_level("WARNING", logger="elopipe.ingest.watcher"):
        assert FiledAway(inbox).return_changed() == 0
    assert [r.getMessage() for r in caplog.records] == [
        f"{inbox / ELOPIPE_FOLDER / FILED_AWAY}: 7 lines not understood, left out (lines 1, 2, 3, 4, 5, ...)"
    ]
    assert (outside / "secret.pgn").read_text() == "x" and (inbox / PROCESSED / "ok.pgn").exists()
    assert sorted(os.listdir(inbox)) == [ELOPIPE_FOLDER, PROCESSED]


@pytest.mark.parametrize("link", [ELOPIPE_FOLDER, f"{ELOPIPE_FOLDER}/{FILED_AWAY}"])
def test_a_symbolic_link_in_place_of_elopipes_folder_or_file_stops_the_watch(tmp_path: Path, link: str) -> None:
    inbox, victim = tmp_path / "inbox", tmp_path / "victim"
    (inbox / ELOPIPE_FOLDER).mkdir(parents=True)
    victim.mkdir()
    (victim / FILED_AWAY).write_text("the user's\n")
    if link == ELOPIPE_FOLDER:
        (inbox / ELOPIPE_FOLDER).rmdir()
        (inbox / ELOPIPE_FOLDER).symlink_to(victim, target_is_directory=True)
    else:
        (inbox / link).symlink_to(victim / FILED_AWAY)
    with pytest.raises(InboxError, match=ELOPIPE_FOLDER):
        FiledAway(inbox)
    assert os.listdir(victim) == [FILED_AWAY] and (victim / FILED_AWAY).read_text() == "the user's\n"


def test_the_file_holds_the_watched_files_and_a_few_stale_lines_at_most(tmp_path: Path) -> None:
    """Each file filed or let go appends one line; the file is rewritten with the watched files
    alone once its stale lines outnumber them: its size follows the files watched, not every file
    ever filed."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    filed = FiledAway(inbox)
    state = inbox / ELOPIPE_FOLDER / FILED_AWAY
    kept = _file_away(inbox, filed, "kept.trf", "012 k\n")
    for round_ in range(3):
        targets = [_file_away(inbox, filed, f"f{round_}-{i}.trf", "012 x\n") for i in range(SLACK_LINES)]
        for target in targets:
            target.unlink()  # the user empties processed/
        assert len(state.read_text().splitlines()) == 1 + len(targets)
        assert filed.return_changed() == 0
        assert len(state.read_text().splitlines()) == 1  # 64 stale lines more than the one watched: rewritten
    _append(kept, "013 rest\n")
    assert FiledAway(inbox).return_changed() == 1 and (inbox / "kept.trf").exists()
