"""`publish` says when the list it wrote holds two players suspected to be one person: an
abbreviated name without a FIDE ID ('Svidler,P', a file of one player's games) beside the full
name with the ID from another file stay two players (identity merges only on evidence), and both
are rated (a fresh user found 45 such grandmasters on the list of the shared data)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.list_suspects import suspects_line


def _game(white: str, black: str, day: int, result: str, fide: str = "") -> str:
    ids = f'[WhiteFideId "{fide}"]\n' if fide else ""
    return (
        f'[Event "Open {day}"]\n[Site "Oslo NOR"]\n[Date "2023.05.{day:02d}"]\n[Round "1"]\n'
        f'[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n[WhiteElo "2700"]\n[BlackElo "2650"]\n'
        f'{ids}[TimeControl "5400+30"]\n\n1. e4 e5 2. Nf3 Nc6 {result}\n\n'
    )


def test_publish_says_the_list_may_hold_a_player_twice(tmp_path: Path) -> None:
    short = tmp_path / "short.pgn"
    short.write_text(_game("Svidler,P", "Aronian,L", 3, "1-0") + _game("Svidler,P", "Giri,A", 4, "1/2-1/2"))
    full = tmp_path / "full.pgn"
    full.write_text(
        _game("Svidler, Peter", "Karjakin, Sergey", 17, "0-1", "4102142")
        + _game("Svidler, Peter", "Nepomniachtchi, Ian", 18, "1-0", "4102142")
    )
    db = str(tmp_path / "s.duckdb")
    runner = CliRunner()
    for args in (["ingest", str(short), str(full)], ["rate", "--system", "fide"]):
        assert runner.invoke(app, [*args, "--db", db]).exit_code == 0
    res = runner.invoke(app, ["publish", "--system", "fide", "--db", db, "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    said = [line for line in res.output.splitlines() if "may hold a player twice" in line]
    assert said == [
        "the list of 2023-06-01 may hold a player twice: 1 pair of players on it is suspected to be one person"
        f" ('Svidler,P' / 'Svidler, Peter'); `elopipe players suspects --db {db}` gives the evidence,"
        f" `elopipe players merge --db {db}` joins a pair"
    ], res.output


def test_the_line_shows_three_pairs_and_counts_them_all() -> None:
    import datetime as dt

    pairs = [(f"P{i},A", f"P{i}, Anna") for i in range(5)]
    line = suspects_line(dt.date(2024, 1, 1), pairs)
    assert "5 pairs of players on it are suspected" in line
    assert "('P0,A' / 'P0, Anna'; 'P1,A' / 'P1, Anna'; 'P2,A' / 'P2, Anna'; ...)" in line
