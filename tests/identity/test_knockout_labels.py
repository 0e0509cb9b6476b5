"""A knockout round from two sources: its games have one main round and different round labels.

A World-Cup-style round between two players is written '1.1' .. '1.6' (the games and tiebreaks,
colours alternating): '1.3' and '1.5' have the same White and may repeat one short draw, '1.2'
and '1.4' may both be draws of the same length, and a results-only export holds the same result
for several of them. Two such rows are two games whatever the rule that pairs rows of two
tournaments (`game_links.labels_conflict`): each source alone and both together count the six
games once.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from elopipe.identity.game_links import labels_conflict
from elopipe.ingest.driver import ingest_paths
from tests.helpers.store_rows import db_rows
from tests.identity.test_event_date_games import _event_pgn, _list

# label, day of play, White, Black, result, plies, last move (empty: the line's own)
_KO = [
    ("1.1", 0, "Carlsen, Magnus", "Ding, Liren", "1-0", 50, "Kf8"),
    ("1.2", 0, "Ding, Liren", "Carlsen, Magnus", "1/2-1/2", 46, ""),
    ("1.3", 1, "Carlsen, Magnus", "Ding, Liren", "1/2-1/2", 24, ""),
    ("1.4", 1, "Ding, Liren", "Carlsen, Magnus", "1/2-1/2", 48, ""),
    ("1.5", 1, "Carlsen, Magnus", "Ding, Liren", "1/2-1/2", 24, ""),
    ("1.6", 1, "Ding, Liren", "Carlsen, Magnus", "0-1", 44, ""),
]
# two draws of 50 plies with Ding White, different last moves: '1.2' and '1.4'
_KO_SAME_LENGTH = [
    ("1.1", 0, "Carlsen, Magnus", "Ding, Liren", "1-0", 50, "Kf8"),
    ("1.2", 0, "Ding, Liren", "Carlsen, Magnus", "1/2-1/2", 50, "g5"),
    ("1.4", 1, "Ding, Liren", "Carlsen, Magnus", "1/2-1/2", 50, "a6"),
    ("1.6", 1, "Ding, Liren", "Carlsen, Magnus", "0-1", 50, "h5"),
]


def _organiser(games: list) -> str:
    return _event_pgn(games, None)


def _database(games: list) -> str:
    """The same games with one more header (a database's copy: same rows, another file)."""
    return _event_pgn(games, None).replace('[TimeControl "5400+30"]', '[TimeControl "5400+30"]\n[Annotator "db"]')


def _results_only(games: list) -> str:
    """The same games without moves (a results export)."""
    return re.sub(r"\n\n1\.[^\n]*? (1-0|0-1|1/2-1/2)\n", r"\n\n\1\n", _event_pgn(games, None))


def _canonical(db: Path) -> int:
    return int(db_rows(db, "SELECT count(*) FROM canonical_games")[0][0])


def _files(tmp_path: Path, texts: dict[str, str]) -> list[Path]:
    (tmp_path / "in").mkdir()
    out = []
    for name, text in texts.items():
        path = tmp_path / "in" / f"{name}.pgn"
        path.write_text(text, encoding="utf-8")
        out.append(path)
    return out


_CASES = {
    # the same 24-ply draw as '1.3' and '1.5' (was: `round_players+hash`)
    "same_short_draw": ([_organiser, _database], _KO, 6),
    # two 50-ply draws of one White, different moves (was: `round_players+plies`)
    "same_length_draws": ([_organiser, lambda g: _event_pgn(g, "2022.05.12")], _KO_SAME_LENGTH, 4),
    # a results-only source: '1.4' a draw, '1.6' 0-1 (was: `round_players;result_differs`)
    "results_only": ([_organiser, _results_only], _KO, 6),
}


@pytest.mark.parametrize("case", sorted(_CASES))
@pytest.mark.parametrize("batches", ["one_batch_a_file", "one_batch", "reversed"])
def test_the_games_of_one_knockout_round_from_two_sources_count_once_each(
    tmp_path: Path, case: str, batches: str
) -> None:
    makers, games, expected = _CASES[case]
    files = _files(tmp_path, {f"src{i}": make(games) for i, make in enumerate(makers)})
    db = tmp_path / "store.duckdb"
    if batches == "one_batch":
        ingest_paths(files, db)
    else:
        for f in files if batches == "one_batch_a_file" else files[::-1]:
            ingest_paths([f], db)
    assert _canonical(db) == expected


def test_two_sources_of_a_knockout_round_rate_as_one(tmp_path: Path) -> None:
    """The FIDE list from the organiser's file and a database's copy is the organiser's alone."""
    org, copy = _files(tmp_path, {"org": _organiser(_KO), "db": _database(_KO)})
    alone = tmp_path / "alone.duckdb"
    ingest_paths([org], alone)
    both = tmp_path / "both.duckdb"
    for f in (org, copy):
        ingest_paths([f], both)
    expected = _list(alone)
    assert expected[0] == (6,)
    assert _list(both) == expected


@pytest.mark.parametrize(
    ("a", "b", "conflict"),
    [("1.3", "1.5", True), ("1.3", "1.3", False), ("1", None, False), (None, None, False), ("", "1.5", False),
     ("?", "1.5", False), ("01", "1", False), ("3.01", "03.1", False), ("3", "3.1", True)],
)  # fmt: skip
def test_labels_conflict_when_both_are_given_and_differ(a: str | None, b: str | None, conflict: bool) -> None:
    assert labels_conflict(a, b) is conflict


@pytest.mark.parametrize(("a", "b", "conflict"), [("3", "3.1", False), ("3.1", "03", False), ("1.3", "1.5", True)])
def test_a_sub_part_on_one_side_only_is_no_conflict_when_allowed(a: str, b: str, conflict: bool) -> None:
    assert labels_conflict(a, b, one_sided=True) is conflict
