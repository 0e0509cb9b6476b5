"""One process at a time takes files from a drop folder (`INBOX/.elopipe/watch.lock`): two
watches on one inbox took the same files, and the second recorded them as rejected ('No such
file or directory') or, with another store, loaded them again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elopipe.ingest.watcher.filed_log import ELOPIPE_FOLDER
from elopipe.ingest.watcher.filing import InboxError
from elopipe.ingest.watcher.lock import LOCK_FILE, InboxBusyError, inbox_lock


def test_a_second_taker_is_refused_naming_the_first_and_the_lock_goes_with_it(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    with inbox_lock(inbox):
        with pytest.raises(InboxBusyError) as refused, inbox_lock(inbox):
            pass
        assert refused.value.pid == os.getpid()
        assert str(refused.value) == f"{inbox} is watched by another process (pid {os.getpid()})"
    with inbox_lock(inbox):  # released with the first holder
        pass
    assert os.listdir(inbox / ELOPIPE_FOLDER) == [LOCK_FILE]


def test_a_link_in_place_of_the_lock_file_is_not_written_through(tmp_path: Path) -> None:
    inbox, victim = tmp_path / "inbox", tmp_path / "victim.txt"
    (inbox / ELOPIPE_FOLDER).mkdir(parents=True)
    victim.write_text("the user's\n")
    (inbox / ELOPIPE_FOLDER / LOCK_FILE).symlink_to(victim)
    with pytest.raises(InboxError, match=LOCK_FILE), inbox_lock(inbox):
        pass
    assert victim.read_text() == "the user's\n"
