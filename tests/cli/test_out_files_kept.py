"""`player`, `report` and `publish --diff` never overwrite a file elopipe did not write: as
`publish`, they keep it under `.elopipe-kept/` first and say so in one line; a file they wrote
themselves (the output folder's manifest records it) is written over as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.manifest import KEPT
from tests.helpers.scenario_store import to_file, two_rules_store

MINE = b"the user's own file\n"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return to_file(two_rules_store(), tmp_path_factory.mktemp("kept") / "s.duckdb")


def _run(args: list[str]) -> str:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["player", "1001"], "players/fide/1_player-1.svg"),
        (["player", "1001"], "players/fide/1_player-1.html"),
        (["report", "--all"], "reports/fide/2_event-2.html"),
        (["report", "--all"], "reports/fide/2_event-2.players.csv"),
        (["publish", "--diff", "2025-12-01", "2026-01-01"], "diff_fide_2025-12-01_2026-01-01.csv"),
    ],
)
def test_a_users_file_under_the_name_is_kept_and_said(db: Path, tmp_path: Path, args: list[str], name: str) -> None:
    out = tmp_path / "out"
    (out / name).parent.mkdir(parents=True)
    (out / name).write_bytes(MINE)
    said = _run([*args, "--db", str(db), "--out", str(out)])
    assert (out / KEPT / name).read_bytes() == MINE
    assert (out / name).read_bytes() != MINE
    assert f"kept before writing over it: {name} -> {KEPT}/{name}" in said.replace("\n", "")
    # what elopipe wrote there is its own: written over again, nothing more kept
    mine_now = (out / name).read_bytes()
    (out / name).unlink()
    (out / name).write_bytes(mine_now)  # the same bytes, another inode: still not rewritten
    said = _run([*args, "--db", str(db), "--out", str(out)])
    assert "kept" not in said
    assert sorted(p.name for p in (out / KEPT / name).parent.iterdir()) == [Path(name).name]


def test_a_page_a_command_wrote_over_is_made_again_by_the_next_publish(db: Path, tmp_path: Path) -> None:
    """`player --all-months` writes the name of the page a full publish made, other bytes: the
    next publish makes the page again (not taken as fresh), and keeps nothing (elopipe wrote it)."""
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    _run(["publish", "--full", "--db", str(db), "--out", str(out)])
    _run(["publish", "--full", "--db", str(db), "--out", str(fresh)])
    page = "players/fide/1_player-1.html"
    _run(["player", "1001", "--all-months", "--db", str(db), "--out", str(out)])
    assert (out / page).read_bytes() != (fresh / page).read_bytes()
    _run(["publish", "--full", "--db", str(db), "--out", str(out)])
    assert (out / page).read_bytes() == (fresh / page).read_bytes()
    assert not (out / KEPT).exists()


def test_a_report_of_games_without_rounds_prints_its_norms_section(tmp_path: Path) -> None:
    """`report --tournament 2` of a store whose games have no round (a PGN without Round tags)
    failed in the norms section's opponent lines (an unsupported format for None)."""
    db = to_file(two_rules_store(scenario=False), tmp_path / "s.duckdb")
    res = CliRunner().invoke(app, ["report", "--tournament", "2", "--db", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
