"""`--system` of `player` and `report`: a scenario name is checked before it names a folder under
--out, and `player` refuses a system the store holds no list of (it wrote an empty page)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.publish_store import build_store


@pytest.mark.parametrize("command", [["player", "1"], ["report", "-t", "1"]])
@pytest.mark.parametrize("system", ["fide@../../escaped", "fide@a/b", "fide@"])
def test_a_scenario_name_that_is_not_valid_is_refused_before_anything_is_written(
    tmp_path: Path, command: list[str], system: str
) -> None:
    db = build_store(tmp_path / "s.duckdb")
    out = tmp_path / "deep" / "out"
    res = CliRunner().invoke(app, [*command, "--system", system, "--db", str(db), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "is not valid" in res.output and len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "deep").exists() and not (tmp_path / "escaped").exists()


def test_player_refuses_a_system_the_store_holds_no_list_of(tmp_path: Path) -> None:
    db = build_store(tmp_path / "s.duckdb")
    res = CliRunner().invoke(
        app, ["player", "1", "--system", "fide@nosuch", "--db", str(db), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2, res.output
    assert (
        " ".join(res.output.split())
        == "elopipe player: error: the store has no list for 'fide@nosuch'; systems it has: fide"
    )
    assert not (tmp_path / "o").exists()
