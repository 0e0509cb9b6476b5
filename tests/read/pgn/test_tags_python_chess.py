"""The PGN reader finds the games and tags python-chess's own header reading finds, on every real file.

`chess.pgn.read_headers` until None is python-chess's cheapest walk over a file (the baseline of
`bench/ingest.py`). On every PGN of shared/data/pgn the reader, as the ingest calls it (the column
path on large files, one by one on small ones), gives the same games in the same order with the
same tags, names and values, except where python-chess has the fault the spec documents: without
a blank line between games it reads the next game's tags as moves and gives a game with no tags
(shared/specs/pgn-faults.md, fault 26, the real `cancer0707.pgn`), which the reader reads as the
game it is.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import chess.pgn
import pytest

from elopipe.read.pgn.reader import read_pgn
from elopipe.read.records import GameTable, ParsedFile
from elopipe.read.textio import decode_bytes
from tests.helpers.paths import REPO

DATA = REPO.parent / "shared" / "data" / "pgn"
FILES = sorted(p for p in DATA.iterdir() if p.suffix.lower() == ".pgn") if DATA.is_dir() else []
pytestmark = pytest.mark.skipif(not FILES, reason="shared/data/pgn not present")


def _python_chess_tags(text: str) -> list[dict[str, str]]:
    handle = io.StringIO(text)
    out = []
    while (headers := chess.pgn.read_headers(handle)) is not None:
        out.append(dict(headers))
    return out


def _reader_tags(parsed: ParsedFile) -> list[dict[str, str]]:
    """Each game's tags as the store receives them (the `headers` JSON of the games frame)."""
    if isinstance(parsed.games, GameTable):
        frame = parsed.games.frame.sort("game_index")
        return [json.loads(h) if h else {} for h in frame.get_column("headers").to_list()]
    return [g.headers or {} for g in parsed.games]


def _no_blank_line_before(text: str, line: int) -> bool:
    """Whether the line before `line` (1-based) is not blank: two games with no blank line between."""
    lines = text.split("\n")
    return line >= 2 and lines[line - 2].strip() != ""


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_same_games_and_tags_as_python_chess(path: Path) -> None:
    text = decode_bytes(path.read_bytes()).text
    parsed = read_pgn(text, source_name=path.name)
    ours, theirs = _reader_tags(parsed), _python_chess_tags(text)
    assert len(ours) == len(theirs)
    lines = sorted(g.line for g in parsed.games)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a == b:
            continue
        # python-chess's fault 26: a game after one with no blank line lost its tags there
        assert b == {}, f"game {i} (line {lines[i]}): {a} != {b}"
        assert a.get("Event") and _no_blank_line_before(text, lines[i]), f"game {i} (line {lines[i]})"


def test_the_column_path_is_compared() -> None:
    """The large real files are read as columns (a `GameTable`), so the test above checks that path."""
    big = [p for p in FILES if p.stat().st_size >= 1_000_000]
    assert big
    for path in big:
        parsed = read_pgn(decode_bytes(path.read_bytes()).text, source_name=path.name)
        assert isinstance(parsed.games, GameTable)
