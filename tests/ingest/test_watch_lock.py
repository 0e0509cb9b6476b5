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


def test_a_file_gone_between_listing_and_reading_is_no_rejection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process moved the dropped file after the ingest listed it: it was recorded as
    rejected, 'cannot read file: [Errno 2] No such file or directory: ...' in `source_files` and
    `v_ingest_errors`. It is skipped in plain words, nothing recorded, and nothing to file."""
    import elopipe.ingest.driver as driver
    from elopipe.ingest.driver import ingest_paths
    from elopipe.ingest.watcher.outcomes import outcomes_by_path
    from elopipe.read.sources import GONE
    from elopipe.store.connect import open_reader
    from tests.helpers.paths import REPO

    inbox, elsewhere, db = tmp_path / "inbox", tmp_path / "elsewhere", tmp_path / "s.duckdb"
    inbox.mkdir()
    elsewhere.mkdir()
    dropped = inbox / "g.pgn"
    dropped.write_bytes((REPO / "sample_pgn" / "fide_candidates_2022_madrid_spain.pgn").read_bytes())
    listed = driver.discover

    def listed_then_taken(paths: list[str | os.PathLike[str]]) -> object:
        found = listed(paths)
        os.rename(dropped, elsewhere / dropped.name)  # as a second watch's first did
        return found

    monkeypatch.setattr(driver, "discover", listed_then_taken)
    summary = ingest_paths([str(dropped)], db)
    assert [(f.status, f.reason) for f in summary.files] == [("skipped", GONE)]
    assert summary.line().startswith("1 file: 0 loaded, 0 partial, 0 rejected, 0 already in store;")
    assert summary.line().endswith(f"; 1 file {GONE}") and "Errno" not in summary.line()
    assert outcomes_by_path([dropped], summary.files) == {}
    con = open_reader(db)
    try:
        assert con.execute("SELECT count(*) FROM source_files").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM ingest_errors").fetchone() == (0,)
    finally:
        con.close()
