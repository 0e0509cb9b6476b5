"""`elopipe player NAME --compare B`: both sides' ratings per list in the terminal, the chart and page."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.scenario_store import to_file, two_rules_store


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return to_file(two_rules_store(), tmp_path_factory.mktemp("pc") / "s.duckdb")


def _rows(output: str) -> list[list[str]]:
    """The body rows of the table printed (cells of the lines starting with a list date)."""
    return [[c.strip() for c in line.strip("│ ").split("│")] for line in output.splitlines() if line.startswith("│ 20")]


def test_compared_with_the_same_system_prints_zero_differences(db: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["player", "Player 1", "--compare", "fide", "--db", str(db), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "Player 1: fide (A) against fide (B)" in res.output
    assert _rows(res.output) == [
        ["2025-12-01", "2701", "2701", "0", "2", "2"],
        ["2026-01-01", "2696", "2696", "0", "1", "1"],
    ]
    assert "lists rating the player on both sides: 2; B − A not zero on 0" in res.output
    # the default chart is the SVG published pages have
    assert (tmp_path / "players" / "fide" / "1_player-1-vs-fide.svg").exists()
    assert not list((tmp_path / "players" / "fide").glob("*.png"))


def test_fide_against_a_scenario_in_the_terminal(db: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["player", "1001", "--compare", "fide@v2017", "--chart", "svg", "--db", str(db), "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    assert _rows(res.output) == [
        ["2025-12-01", "2701", "2702", "+1", "2", "2"],
        ["2026-01-01", "2696", "2698", "+2", "1", "1"],
    ]
    assert "B − A not zero on 2; largest: +2 on 2026-01-01" in res.output
    args = ["player", "1003", "--compare", "fide@v2017", "--db", str(db), "--out", str(tmp_path)]
    res = CliRunner().invoke(app, args)
    assert _rows(res.output) == [["2025-12-01", "delisted", "1303", "", "2", "2"]]
    svg = (tmp_path / "players" / "fide" / "1_player-1-vs-fide-v2017.svg").read_text(encoding="utf-8")
    assert "<title>fide</title>" in svg and "<title>fide@v2017</title>" in svg


@pytest.mark.parametrize("b", ["nope", "ffe", "fide@ghost"])
def test_a_side_the_store_does_not_hold_is_one_line(db: Path, tmp_path: Path, b: str) -> None:
    res = CliRunner().invoke(app, ["player", "Player 1", "--compare", b, "--db", str(db), "--out", str(tmp_path)])
    assert res.exit_code == 2
    assert res.output.splitlines() == [
        f"elopipe player: error: the store has no list for '{b}'; sides it has: fide, fide@v2017, official:fide"
    ]
    assert not (tmp_path / "players").exists()


def test_all_months_shows_the_lists_without_games(db: Path, tmp_path: Path) -> None:
    args = ["player", "1002", "--compare", "fide@v2017", "--db", str(db), "--out", str(tmp_path)]
    out = CliRunner().invoke(app, args).output
    assert [r[0] for r in _rows(out)] == ["2025-12-01"]
    # the count is of the rows the table shows with a B − A, and says how many more --all-months adds
    assert sum(1 for r in _rows(out) if r[3]) == 1
    assert "lists rating the player on both sides: 1; B − A not zero on 0; 1 more without a game on either side" in out
    every_out = CliRunner().invoke(app, [*args, "--all-months"]).output
    every = _rows(every_out)
    assert [r[0] for r in every] == ["2025-12-01", "2026-01-01"]
    assert "lists rating the player on both sides: 2; B − A not zero on 0\n" in every_out
