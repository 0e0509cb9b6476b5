"""A publish killed before it saved its manifest (kill -9, a SIGTERM) left files no manifest
recorded: the next publish took them for the user's (`found`), never removed them with their
lists, and kept copies of them before writing over them. The folder's journal records each file
as it is written (elopipe.publish.journal); the next publish adopts them as elopipe's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from elopipe.publish.journal import JOURNAL
from elopipe.publish.manifest import KEPT, MANIFEST, Manifest, recording
from tests.helpers.paths import REPO

# a publish that writes two files, then dies before saving its manifest, as a kill -9 leaves it
KILLED = """
import os, sys
from pathlib import Path
from elopipe.publish.manifest import Manifest
root = Path(sys.argv[1])
m = Manifest(root)
for rel in ("lists/a.csv", "lists/b.csv"):
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    m.write(root / rel, rel.encode(), rel)
m.made("report:fide:7", "d1", [root / "lists/b.csv"])  # a page of one of them
os._exit(9)
"""


def _killed_publish(root: Path) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED, str(root)], cwd=REPO, check=False)
    assert done.returncode == 9
    assert not (root / MANIFEST).exists() and (root / JOURNAL).is_file()


def test_the_files_of_a_killed_publish_stay_elopipes(tmp_path: Path) -> None:
    root = tmp_path / "out"
    _killed_publish(root)
    with recording(root) as m:
        assert set(m.entries) == {"lists/a.csv", "lists/b.csv"} and not m.found
        assert not m.write(root / "lists/a.csv", b"lists/a.csv", "lists/a.csv")  # unchanged, and ours
        assert m.write(root / "lists/b.csv", b"new", "lists/b.csv")  # written over, nothing kept
    assert not (root / KEPT).exists()
    saved = json.loads((root / MANIFEST).read_text())
    assert set(saved["files"]) == {"lists/a.csv", "lists/b.csv"} and "found" not in saved
    assert not (root / JOURNAL).exists()  # cleared once the manifest is saved


def test_a_file_touched_since_the_kill_is_not_adopted(tmp_path: Path) -> None:
    root = tmp_path / "out"
    _killed_publish(root)
    (root / "lists/a.csv").write_text("the user's")
    m = Manifest(root)
    assert set(m.entries) == {"lists/b.csv"}


def test_a_file_of_the_users_under_the_journals_name_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "out"
    root.mkdir()
    (root / JOURNAL).write_text("my notes\nabout this folder\n")
    with recording(root) as m:
        m.write(root / "a.csv", b"x", "a.csv")
    assert (root / KEPT / JOURNAL).read_text() == "my notes\nabout this folder\n"
    assert not (root / JOURNAL).exists()
    assert m.set_aside == [(JOURNAL, f"{KEPT}/{JOURNAL}")]


def test_the_pages_of_a_killed_publish_are_known_to_the_next(tmp_path: Path) -> None:
    """A killed publish's pages were unknown to the next publish (only its files were adopted):
    a report of an event rated no more was never removed, still linked from the index (hostile
    tester, round 2). The journal records each page made; the next publish knows it and can
    retire it, removing its files."""
    root = tmp_path / "out"
    _killed_publish(root)
    with recording(root) as m:
        assert m.inputs["report:fide:7"] == ("d1", ["lists/b.csv"])
        assert m.retire("report:fide:7") == ["lists/b.csv"]
    assert not (root / "lists/b.csv").exists() and (root / "lists/a.csv").exists()
