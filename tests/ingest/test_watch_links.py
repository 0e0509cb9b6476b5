"""The drop folder never writes through, nor replaces, a symbolic link of the user's in
`INBOX/quarantine/` or `INBOX/processed/`, a link to nothing included (`Path.exists` is False
for one: its name was reused, the reason file written through it outside the inbox, the link
replaced by the file moved)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elopipe.ingest.watcher import filing
from elopipe.ingest.watcher.arrival import signature
from elopipe.ingest.watcher.filing import REASON_SUFFIX, file_away
from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE, FileOutcome
from elopipe.ingest.watcher.recheck import FiledAway


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    inbox = tmp_path / "inbox"
    (inbox / QUARANTINE).mkdir(parents=True)
    (inbox / PROCESSED).mkdir()
    (tmp_path / "victim").mkdir()
    return inbox


def _victim(inbox: Path, name: str) -> Path:
    return inbox.parent / "victim" / name


def test_a_dangling_link_under_the_reason_files_name_is_not_written_through(inbox: Path) -> None:
    planted = _victim(inbox, "planted.txt")
    link = inbox / QUARANTINE / f"evil.pgn{REASON_SUFFIX}"
    link.symlink_to(planted)
    (inbox / "evil.pgn").write_text("<html>404</html>")
    target = file_away(inbox, inbox / "evil.pgn", FileOutcome("rejected", "not a chess file"))
    assert not os.path.lexists(planted)
    assert link.is_symlink() and os.readlink(link) == str(planted)
    assert target.parent == inbox / QUARANTINE and target.name != "evil.pgn"
    assert target.read_text() == "<html>404</html>"
    assert "not a chess file" in Path(str(target) + REASON_SUFFIX).read_text(encoding="utf-8")


@pytest.mark.parametrize("outcome", [FileOutcome("loaded"), FileOutcome("rejected", "no games")])
def test_a_dangling_link_under_the_files_name_is_left_as_it_is(inbox: Path, outcome: FileOutcome) -> None:
    gone = _victim(inbox, "gone.pgn")
    link = inbox / outcome.goes_to / "ok.pgn"
    link.symlink_to(gone)
    (inbox / "ok.pgn").write_text("1. e4 e5 1-0\n")
    target = file_away(inbox, inbox / "ok.pgn", outcome)
    assert link.is_symlink() and os.readlink(link) == str(gone)
    assert not os.path.lexists(gone)
    assert target != link and target.read_text() == "1. e4 e5 1-0\n"
    assert not os.path.lexists(inbox / "ok.pgn")


def test_a_link_made_after_the_name_was_chosen_is_neither_replaced_nor_written_through(
    inbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name is free when `unique_destination` looks, and a link takes it (and its reason
    file's name) before the move: another name is chosen."""
    chosen = iter([inbox / QUARANTINE / "race.pgn"])
    real = filing.unique_destination

    def racing(folder: Path, name: str) -> Path:
        target = next(chosen, None)
        if target is None:
            return real(folder, name)
        target.symlink_to(_victim(inbox, "moved-over"))
        Path(str(target) + REASON_SUFFIX).symlink_to(_victim(inbox, "written-through"))
        return target

    monkeypatch.setattr(filing, "unique_destination", racing)
    (inbox / "race.pgn").write_text("x")
    target = file_away(inbox, inbox / "race.pgn", FileOutcome("rejected", "no games"))
    assert target.name != "race.pgn" and target.read_text() == "x"
    assert (inbox / QUARANTINE / "race.pgn").is_symlink()
    assert not os.listdir(inbox.parent / "victim")


def test_a_changed_file_is_not_moved_back_over_a_link_in_the_inbox(inbox: Path) -> None:
    """A filed-away file that changes goes back to its inbox name only when nothing, not even a
    link to nothing, holds that name."""
    (inbox / "b.pgn").write_text("one")
    sig = signature(inbox / "b.pgn")
    assert sig is not None
    target = file_away(inbox, inbox / "b.pgn", FileOutcome("loaded"))
    filed = FiledAway(inbox)
    filed.add(target, inbox / "b.pgn", sig)
    (inbox / "b.pgn").symlink_to(_victim(inbox, "b.pgn"))
    target.write_text("one, and more")
    assert filed.return_changed() == 0
    assert (inbox / "b.pgn").is_symlink() and target.read_text() == "one, and more"
