"""A small PGN text is read one by one, not as columns (issue 26, item 5: the column path's fixed
cost, about 12 ms a file, was most of a live board's thousand one-game files); the result is the
column path's."""

import re

import pytest

from elopipe.read.pgn import read_loop
from elopipe.read.pgn import reader as pgn_reader
from elopipe.read.pgn.reader import read_pgn
from elopipe.read.textio import decode_bytes
from tests.helpers.paths import SHARED_DATA


@pytest.mark.parametrize("n_games", [1, 8, 60])
def test_a_small_text_is_read_one_by_one_with_the_column_paths_result(
    monkeypatch: pytest.MonkeyPatch, n_games: int
) -> None:
    text = decode_bytes((SHARED_DATA / "pgn" / "tata2018.pgn").read_bytes()).text.lstrip("\ufeff")
    text = "\n".join([g for g in re.split(r"\n(?=\[Event )", text) if g.strip()][:n_games])
    monkeypatch.setattr(pgn_reader, "COLUMNS_MIN_BYTES", 0)
    columns = read_pgn(text)
    monkeypatch.setattr(pgn_reader, "COLUMNS_MIN_BYTES", 256 * 1024)  # the default, over these texts
    started: list[bool] = []
    real = read_loop.ReadLoop._start_columns

    def spy(self):  # type: ignore[no-untyped-def]
        started.append(True)
        return real(self)

    monkeypatch.setattr(read_loop.ReadLoop, "_start_columns", spy)
    small = read_pgn(text)
    assert started == []
    for part in ("tournaments", "players", "unplayed", "issues", "rejected_reason"):
        assert getattr(small, part) == getattr(columns, part), part
    assert list(small.games) == list(columns.games) and len(small.games) == n_games
