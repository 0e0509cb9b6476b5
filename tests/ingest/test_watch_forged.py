"""What a watch moves back to the inbox, or removes, after a file it filed away changed: only
the regular file it filed (its inode), within the real processed/ and quarantine/ of the inbox,
and only a reason file it wrote itself. Whoever can write to the inbox can drop a file named like
a reason file, forge a line of `filed-away.jsonl`, or swap a folder for a link: none of these
moves or removes a file elopipe did not write. No test here waits on a clock."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from elopipe.ingest.watcher.filed_log import ELOPIPE_FOLDER, FILED_AWAY, SLACK_LINES
from elopipe.ingest.watcher.filing import REASON_SUFFIX, InboxError
from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE
from elopipe.ingest.watcher.recheck import FiledAway
from tests.ingest.test_watch_restart import _append, _file_away


def test_a_users_file_named_like_a_reason_file_stays_when_the_file_goes_back(tmp_path: Path) -> None:
    """`a.trf` and the user's `a.trf.reason.txt` were both loaded to processed/, where elopipe
    writes no reason file: `a.trf` changed and goes back, the user's file stays. In quarantine/,
    a reason file the user put in place of elopipe's stays too; elopipe's own goes."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    filed = FiledAway(inbox)
    loaded = _file_away(inbox, filed, "a.trf", "012 a\n")
    users = _file_away(inbox, filed, "a.trf.reason.txt", "the user's notes\n")
    assert users == inbox / PROCESSED / "a.trf.reason.txt"
    rejected = _file_away(inbox, filed, "b.trf", "012 b\n", status="rejected")
    swapped = _file_away(inbox, filed, "c.trf", "012 c\n", status="rejected")
    (inbox / QUARANTINE / f"c.trf{REASON_SUFFIX}").unlink()
    (inbox / QUARANTINE / f"c.trf{REASON_SUFFIX}").write_text("the user's own\n")
    for target in (loaded, rejected, swapped):
        _append(target, "013 rest\n")
    assert FiledAway(inbox).return_changed() == 3
    assert sorted(os.listdir(inbox / PROCESSED)) == ["a.trf.reason.txt"]
    assert users.read_text() == "the user's notes\n"
    assert os.listdir(inbox / QUARANTINE) == [f"c.trf{REASON_SUFFIX}"]
    assert (inbox / QUARANTINE / f"c.trf{REASON_SUFFIX}").read_text() == "the user's own\n"


def _forge(inbox: Path, *lines: dict[str, object]) -> Path:
    (inbox / ELOPIPE_FOLDER).mkdir(parents=True, exist_ok=True)
    state = inbox / ELOPIPE_FOLDER / FILED_AWAY
    state.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return state


def test_a_forged_line_moves_no_folder_link_or_file_elopipe_did_not_file(tmp_path: Path) -> None:
    """Lines naming the user's folder, a link and a file in processed/ (each with its true inode
    number, which `ls -i` shows, and a signature that differs from the file's, as a changed
    file's does): none is a regular file elopipe filed there, nothing moves."""
    inbox = tmp_path / "inbox"
    (inbox / PROCESSED / "archive-2023").mkdir(parents=True)
    (inbox / PROCESSED / "archive-2023" / "notes.txt").write_text("2023\n")
    (inbox / PROCESSED / "mine.pgn").write_text("the user's\n")
    (inbox / PROCESSED / "link.pgn").symlink_to(inbox / PROCESSED / "mine.pgn")
    before = sorted(os.listdir(inbox / PROCESSED))
    now = time.time_ns()

    def line(name: str, ino: int) -> dict[str, object]:
        return {"filed": f"{PROCESSED}/{name}", "from": name, "size": 1, "mtime_ns": 1, "at_ns": now, "ino": ino}

    folder_ino = os.lstat(inbox / PROCESSED / "archive-2023").st_ino
    link_ino = os.lstat(inbox / PROCESSED / "link.pgn").st_ino
    mine_ino = os.lstat(inbox / PROCESSED / "mine.pgn").st_ino
    _forge(inbox, line("archive-2023", folder_ino), line("link.pgn", link_ino), line("mine.pgn", mine_ino + 1))
    assert FiledAway(inbox).return_changed() == 0
    assert sorted(os.listdir(inbox / PROCESSED)) == before
    assert sorted(os.listdir(inbox)) == [ELOPIPE_FOLDER, PROCESSED]
    assert (inbox / PROCESSED / "archive-2023" / "notes.txt").read_text() == "2023\n"


def test_a_line_no_file_system_can_hold_is_left_out_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A name with a lone surrogate (\\ud800: no bytes stand for it) stopped every start of the
    watch with Python's 'surrogates not allowed'; it is left out, as other forged lines are, and
    the good line after it is still watched."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    filed = FiledAway(inbox)
    kept = _file_away(inbox, filed, "kept.trf", "012 k\n")
    state = inbox / ELOPIPE_FOLDER / FILED_AWAY
    forged = '{"filed":"processed/\\ud800x.pgn","from":"a.pgn","size":1,"mtime_ns":1,"at_ns":1,"ino":1}\n'
    state.write_text(forged + state.read_text())
    _append(kept, "013 rest\n")
    with caplog.at_level("WARNING", logger="elopipe.ingest.watcher"):
        assert FiledAway(inbox).return_changed() == 1
    warnings = [r.getMessage() for r in caplog.records if "not understood" in r.getMessage()]
    assert warnings == [f"{state}: line 1 not understood, left out"]
    assert (inbox / "kept.trf").read_text() == "012 k\n013 rest\n"


def test_a_folder_swapped_for_a_link_moves_nothing_from_where_it_leads(tmp_path: Path) -> None:
    """quarantine/ renamed and replaced by a link to another folder while the watch runs: the
    file of the same name there is not moved into the inbox; the watch says so, as filing does."""
    inbox, victim = tmp_path / "inbox", tmp_path / "victim"
    inbox.mkdir()
    victim.mkdir()
    filed = FiledAway(inbox)
    target = _file_away(inbox, filed, "notes.txt", "dropped junk\n", status="rejected")
    (victim / "notes.txt").write_text("not the inbox's\n")
    os.rename(inbox / QUARANTINE, inbox / "q.old")
    (inbox / QUARANTINE).symlink_to(victim, target_is_directory=True)
    _append(victim / "notes.txt", "changed\n")
    with pytest.raises(InboxError, match=QUARANTINE):
        filed.return_changed()
    assert sorted(os.listdir(victim)) == ["notes.txt"] and not (inbox / "notes.txt").exists()
    assert (victim / "notes.txt").read_text() == "not the inbox's\nchanged\n"
    assert (inbox / "q.old" / target.name).exists()


def test_the_rewritten_file_keeps_the_mode_of_the_one_it_replaces(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    filed = FiledAway(inbox)
    state = inbox / ELOPIPE_FOLDER / FILED_AWAY
    targets = [_file_away(inbox, filed, f"f{i}.trf", "012 x\n") for i in range(SLACK_LINES + 1)]
    state.chmod(0o640)
    for target in targets:
        target.unlink()
    assert filed.return_changed() == 0
    assert state.read_text() == ""  # rewritten
    assert stat.S_IMODE(state.stat().st_mode) == 0o640
