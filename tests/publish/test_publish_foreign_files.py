"""`publish` never deletes, moves or overwrites what elopipe did not write, nor writes outside
`--out` (docs/commands.md, The output folder: "Files elopipe did not write are never moved, removed
or overwritten"). Each test is a hostile tester's finding:

- a user's file holding the very bytes elopipe publishes under its name was recorded as
  elopipe's own, then removed with its list;
- a folder inside `--out` that is a symbolic link was written through (files outside `--out`,
  the user's files moved out of the linked folder);
- a file where a folder is expected failed the publish half way (exit 1), after the ledger was
  written;
- a publish with nothing new rewrote the ledger (and the folder's time with it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.atomic import WriteError, write_bytes
from elopipe.publish.manifest import KEPT, MANIFEST, recording
from elopipe.publish.plan import LEDGER
from tests.helpers.publish_store import FEB, build_store, remove_feb

RUNNER = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_store(tmp_path / "s.duckdb")


def _publish(db: Path, out: Path, *more: str, code: int = 0) -> str:
    args = ["publish", "--system", "fide", "--db", str(db), "--out", str(out), *more]
    res = RUNNER.invoke(app, args)
    assert res.exit_code == code, res.output
    return " ".join(res.output.split())


def _manifest_files(out: Path) -> dict[str, object]:
    files: dict[str, object] = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    return files


def _raise_feb(db: Path) -> None:
    """The February list changes: one player's rating is a point higher."""
    con = duckdb.connect(str(db))
    try:
        con.execute(
            "UPDATE rating_lists SET rating = rating + 1 WHERE system = 'fide' AND list_date = ? AND player_id = 1",
            [FEB],
        )
    finally:
        con.close()


def _users_copy(db: Path, tmp_path: Path) -> tuple[Path, bytes]:
    """Folder B holding the user's own copy of the February CSV that a publish into A wrote."""
    a, b = tmp_path / "A", tmp_path / "B"
    _publish(db, a, "--format", "csv")
    mine = (a / "lists" / f"fide_{FEB}.csv").read_bytes()
    (b / "lists").mkdir(parents=True)
    (b / "lists" / f"fide_{FEB}.csv").write_bytes(mine)
    return b, mine


def test_a_users_identical_file_is_left_as_it_is_and_never_removed(db: Path, tmp_path: Path) -> None:
    b, mine = _users_copy(db, tmp_path)
    name = f"lists/fide_{FEB}.csv"
    before = (b / name).stat()
    said = _publish(db, b, "--format", "csv")
    assert f"0 files written under {b} (1 unchanged)" in said
    after = (b / name).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert name not in _manifest_files(b), "a file elopipe did not write is not recorded as its own"

    remove_feb(db)
    said = _publish(db, b, "--format", "csv")
    assert (b / name).read_bytes() == mine, "the user's file was removed"
    assert "removed" not in said
    assert not (b / KEPT).exists()


def test_a_users_identical_file_is_kept_before_its_list_changes(db: Path, tmp_path: Path) -> None:
    b, mine = _users_copy(db, tmp_path)
    name = f"lists/fide_{FEB}.csv"
    _publish(db, b, "--format", "csv")  # found identical: left as it is
    _raise_feb(db)
    said = _publish(db, b, "--format", "csv")
    assert (b / KEPT / name).read_bytes() == mine, "kept as any file elopipe did not write"
    assert (b / name).read_bytes() != mine
    assert f"kept before writing over it: {name} -> {KEPT}/{name}" in said
    assert name in _manifest_files(b)  # now elopipe's: it wrote it


def test_a_folder_published_before_manifests_is_published_again_as_the_users(db: Path, tmp_path: Path) -> None:
    """The upgrade path: a folder an older elopipe published has no manifest. Its files are left
    as they are while they hold what elopipe publishes (nothing is rewritten), but elopipe cannot
    show it wrote them: a file the new publish changes is kept first, and none is removed."""
    out = tmp_path / "out"
    _publish(db, out, "--all", "--full")
    (out / MANIFEST).unlink()
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file() and p.name not in (LEDGER, MANIFEST)}
    said = _publish(db, out, "--all", "--full")
    assert "0 files written" in said
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert _manifest_files(out) == {}
    old_csv = (out / "lists" / f"fide_{FEB}.csv").read_bytes()
    _raise_feb(db)
    said = _publish(db, out, "--all", "--full")
    assert (out / KEPT / "lists" / f"fide_{FEB}.csv").read_bytes() == old_csv
    assert "kept before writing over" in said


@pytest.mark.parametrize("folder", ["reports/fide", "players/fide", "lists", "reports", "players"])
def test_a_folder_inside_out_that_is_a_link_is_refused_before_anything_is_written(
    db: Path, tmp_path: Path, folder: str
) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim"
    victim.mkdir()
    (victim / "9_x.html").write_text("MINE\n", encoding="utf-8")
    (out / folder).parent.mkdir(parents=True, exist_ok=True)
    (out / folder).symlink_to(victim)
    for more in (["--full"], ["--format", "csv"]):
        said = _publish(db, out, *more, code=2)
        assert said == (
            f"elopipe publish: error: cannot publish to {out}: {out / folder} is a symbolic link (to {victim});"
            f" elopipe writes only into real folders inside {out}: make {out / folder} a folder"
        )
    assert sorted(p.name for p in victim.iterdir()) == ["9_x.html"]
    assert (victim / "9_x.html").read_text(encoding="utf-8") == "MINE\n"
    assert os.listdir(out) == [folder.split("/")[0]], "nothing is written into --out (no ledger, no manifest)"
    if "/" in folder:
        assert os.listdir(out / folder.split("/")[0]) == [folder.split("/")[1]]


def test_run_and_watch_refuse_such_a_folder_before_they_start(db: Path, tmp_path: Path) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim"
    victim.mkdir()
    (out / "players").mkdir(parents=True)
    (out / "players" / "fide").symlink_to(victim)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for args in (["run", str(inbox)], ["watch", str(inbox)]):
        res = RUNNER.invoke(app, [*args, "--system", "fide", "--db", str(db), "--out", str(out)])
        assert res.exit_code == 2, res.output
        assert f"{out / 'players' / 'fide'} is a symbolic link" in " ".join(res.output.split())
    assert list(victim.iterdir()) == []


def test_the_manifest_never_writes_through_a_folder_linked_during_a_publish(tmp_path: Path) -> None:
    """A folder made a link after the command's check: the write is refused, not followed."""
    out, victim = tmp_path / "out", tmp_path / "victim"
    victim.mkdir()
    out.mkdir()
    (out / "lists").symlink_to(victim)
    with recording(out), pytest.raises(WriteError, match="is a symbolic link"):
        write_bytes(out / "lists" / "fide_2024-01-01.csv", b"x\n")
    assert list(victim.iterdir()) == []


def test_a_file_where_a_folder_is_expected_is_refused_before_anything_is_written(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "players").write_text("mine\n", encoding="utf-8")
    said = _publish(db, out, "--full", code=2)
    assert said == f"elopipe publish: error: cannot publish to {out}: {out / 'players'} is a file, not a folder"
    assert sorted(p.name for p in out.iterdir()) == ["players"], "the ledger or the manifest was written"
    assert (out / "players").read_text(encoding="utf-8") == "mine\n"


def test_a_publish_with_nothing_new_leaves_the_folder_as_it_was(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(db, out, "--all", "--full")
    past = 1_000_000_000_000_000_000  # a time no publish writes: any write shows
    for p in (out / LEDGER, out / MANIFEST, out):
        os.utime(p, ns=(past, past))
    said = _publish(db, out, "--all", "--full")
    assert "0 files written" in said
    for p in (out / LEDGER, out / MANIFEST, out):
        assert p.stat().st_mtime_ns == past, f"{p.name} was written again"
    _publish(db, out, "--format", "csv")  # a plain publish with nothing new, likewise
    for p in (out / LEDGER, out / MANIFEST, out):
        assert p.stat().st_mtime_ns == past, f"{p.name} was written again"


@pytest.mark.parametrize("kind", ["note", "json", "link"])
def test_a_users_file_under_the_ledgers_name_is_kept(db: Path, tmp_path: Path, kind: str) -> None:
    """A file of the user's named `.elopipe-published.json` was written over in silence (a JSON
    object was merged into): it is kept under `.elopipe-kept/` first, and the ledger starts afresh."""
    out, outside = tmp_path / "out", tmp_path / "outside.txt"
    out.mkdir()
    outside.write_text("the user's\n", encoding="utf-8")
    mine = {"note": "not json\n", "json": '{"mine": [1, 2]}\n'}
    if kind == "link":
        (out / LEDGER).symlink_to(outside)
    else:
        (out / LEDGER).write_text(mine[kind], encoding="utf-8")
    said = _publish(db, out)
    kept = out / KEPT / LEDGER
    if kind == "link":
        assert kept.is_symlink() and os.readlink(kept) == str(outside)
    else:
        assert kept.read_text(encoding="utf-8") == mine[kind]
    assert outside.read_text(encoding="utf-8") == "the user's\n"
    ledger = json.loads((out / LEDGER).read_text(encoding="utf-8"))
    assert "mine" not in ledger and ledger["db"] == os.path.realpath(db)
    assert LEDGER in " ".join(said.split())
