"""`elopipe rate --system ffe` counts in one line the players whose first-rating loop cycled."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from elopipe.cli.main import app
from tests.helpers.ffe_store import build_store, d


def _store(path: Path, cycle: bool) -> Path:
    """Player 1, unrated, meets four rated players. With `cycle`, Karl-Mala 2005's Holloway
    (L2346 D2107 D2153 L2147: the A.6 loop alternates between 4 and 3 games)."""
    opp = {2: 2346 if cycle else 2100, 3: 2107, 4: 2153, 5: 2147}
    res = {2: "0-1", 3: "1/2-1/2", 4: "1/2-1/2", 5: "0-1"}
    ev = dict(tournament_id=1, name="E", start=d("2005-07-23"), end=d("2005-07-29"), time_control="5400",
              entries={1: (None, None, None), **{k: (v, None, None) for k, v in opp.items()}},
              games=[(k, 1, k, res[k], d("2005-07-23"), True) for k in opp])  # fmt: skip
    return build_store(path, [(i, f"P{i}", 1980) for i in range(1, 6)], [ev])


def test_rate_counts_the_players_whose_loop_cycled(tmp_path: Path) -> None:
    db = _store(tmp_path / "c.duckdb", cycle=True)
    out = CliRunner().invoke(app, ["rate", "--system", "ffe", "--db", str(db)])
    assert out.exit_code == 0, out.output
    lines = [x for x in out.output.splitlines() if "cycle" in x]
    assert len(lines) == 1 and lines[0].startswith("first rating of 1 player: "), out.output
    # words an officer reads, and the query that lists the players, not a column name or a spec section
    assert "spec A.6" not in out.output and "(ffe_details.cycled)" not in out.output
    assert (
        f"(`elopipe sql \"SELECT * FROM ffe_details WHERE system = 'ffe' AND cycled\" --db {db}` lists them)"
        in (lines[0])
    )
    assert "rating_discrepancies)" not in out.output  # the table's name in brackets: words now


def test_no_line_when_no_loop_cycled(tmp_path: Path) -> None:
    db = _store(tmp_path / "n.duckdb", cycle=False)
    out = CliRunner().invoke(app, ["rate", "--system", "ffe", "--db", str(db)])
    assert out.exit_code == 0 and "cycle" not in out.output, out.output
