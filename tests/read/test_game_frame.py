"""The games frame of TRF files, built from the reader's rows (`rows_frame`), alone or a batch at once.

The loader inserts this frame; it must be the frame `records_frame` makes of the same games as
`GameRec`s (the way every other reader's games are transposed), and a batch's frame, cut file by
file (`build_frames`), must be each file's own.
"""

from __future__ import annotations

import pytest

from elopipe.read.game_frame import build_frames, games_frame, records_frame
from elopipe.read.records import GameTable
from elopipe.read.textio import decode_bytes
from elopipe.read.trf.reader import read_trf
from tests.helpers.paths import SHARED_DATA

FILES = sorted((SHARED_DATA / "trf").glob("*.trf"))
pytestmark = pytest.mark.skipif(not FILES, reason="shared/data/trf not present")


def _tables() -> list[GameTable]:
    tables = []
    for path in FILES:
        games = read_trf(decode_bytes(path.read_bytes()).text, path.name).games
        assert isinstance(games, GameTable) and games.rows is not None
        tables.append(games)
    return tables


def test_a_trf_files_games_frame_is_the_frame_of_its_records() -> None:
    played = 0
    for table in _tables():
        frame = games_frame(table)
        assert frame.equals(records_frame(table.records()))
        assert table.rows is None  # built: the rows are no longer kept
        played += int(frame["played"].sum())
    assert played > 1000


def test_a_batchs_frame_cut_file_by_file_is_each_files_own() -> None:
    batch, alone = _tables(), _tables()
    build_frames(batch)
    assert [len(t) for t in batch] == [len(t) for t in alone]
    for together, one in zip(batch, alone, strict=True):
        assert not together.frame_pending
        assert together.frame.equals(games_frame(one))
