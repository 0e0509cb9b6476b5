"""A game whose Result tag and movetext marker disagree is never rated (pgn-faults.md 8: "keep the
game out of the rating until it is resolved"), in any system: on the real Candidates 2022 PGN,
two of its games given a marker other than their tag. The lists are those of the file without the
two games (which removes nothing else: every player keeps other games)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.paths import SHARED_DATA

PGN = SHARED_DATA / "pgn" / "fide_candidates_2022_madrid_spain.pgn"

pytestmark = pytest.mark.skipif(not PGN.exists(), reason="../shared/data is not available")

# the marker a game of the file ends with, after its last move
_MARKER = re.compile(r"(1-0|0-1|1/2-1/2)(\s*)$")
_OTHER = {"1-0": "1/2-1/2", "0-1": "1-0", "1/2-1/2": "0-1"}


def _games(text: str) -> list[str]:
    return ["[Event" + g for g in text.split("[Event")[1:]]


def _conflicting(game: str) -> str:
    """`game` with its movetext's marker replaced by another result (the Result tag kept)."""
    head, _, moves = game.partition("\n\n")
    m = _MARKER.search(moves)
    assert m is not None, "a game of the file ends without a marker"
    return f"{head}\n\n{moves[: m.start()]}{_OTHER[m.group(1)]}{m.group(2)}"


def _lists(db: Path, system: str) -> list[tuple]:
    with open_writer(db) as con:
        rate(con, system)
        return con.execute(
            "SELECT list_date, p.name, l.rating, l.games FROM rating_lists l JOIN players p USING (player_id) "
            "WHERE l.system = ? ORDER BY ALL",
            [system],
        ).fetchall()


@pytest.mark.parametrize("system", ["fide", "elo", "ffe"])
def test_a_game_whose_tag_and_marker_disagree_is_not_rated(tmp_path: Path, system: str) -> None:
    games = _games(PGN.read_text(encoding="utf-8"))
    conflicted = {3, 17}
    mixed = tmp_path / "mixed" / "candidates.pgn"
    without = tmp_path / "without" / "candidates.pgn"
    for path, body in (
        (mixed, [_conflicting(g) if i in conflicted else g for i, g in enumerate(games)]),
        (without, [g for i, g in enumerate(games) if i not in conflicted]),
    ):
        path.parent.mkdir()
        path.write_text("".join(body), encoding="utf-8")
        ingest_paths([path], path.with_suffix(".duckdb"))
    db = mixed.with_suffix(".duckdb")
    with open_writer(db) as con:
        flagged = con.execute("SELECT count(*) FROM games WHERE list_contains(flags, 'result_conflict')").fetchall()[0][
            0
        ]
    assert flagged == len(conflicted)
    lists = _lists(db, system)
    assert lists and lists == _lists(without.with_suffix(".duckdb"), system)
    with open_writer(db) as con:
        reasons = con.execute(
            "SELECT reason, count(*) FROM rating_changes WHERE system = ? AND game_id IN "
            "(SELECT game_id FROM games WHERE list_contains(flags, 'result_conflict')) GROUP BY ALL",
            [system],
        ).fetchall()
    assert reasons == [("result_conflict", 2 * len(conflicted))]
