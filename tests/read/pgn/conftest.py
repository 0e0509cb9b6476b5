"""The PGN reader's tests compare its two paths on small texts: the column path is taken here
whatever the text's size (production reads a text under `COLUMNS_MIN_BYTES` one by one;
tests/read/pgn/test_small_texts.py checks that)."""

import pytest

from elopipe.read.pgn import reader as pgn_reader


@pytest.fixture(autouse=True)
def _columns_for_every_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pgn_reader, "COLUMNS_MIN_BYTES", 0)
