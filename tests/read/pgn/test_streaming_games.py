"""A compressed PGN is streamed on what its decompressed stream holds, not on its size on disk
(issue 26, item 6: an 18 MB .pgn.gz of short games, under the bytes read whole, took 4.4 GB):
a file of more games than a whole read holds in bounded memory is streamed, with the result of
a whole read."""

import gzip
from pathlib import Path

import pytest

from elopipe.read import parse
from elopipe.read.parse import parse_source
from elopipe.read.pgn import streaming
from elopipe.read.sources import Source
from tests.helpers.streaming import SHARED_PGN, assert_same


def _parse_recording(monkeypatch: pytest.MonkeyPatch, path: Path) -> tuple[object, list[str]]:
    streamed: list[str] = []
    real = parse._parse_large_pgn

    def recording(source, *args):  # type: ignore[no-untyped-def]
        streamed.append(source.display)
        return real(source, *args)

    monkeypatch.setattr(parse, "_parse_large_pgn", recording)
    return parse_source(Source(str(path))), streamed


@pytest.mark.parametrize("suffix", [".pgn.gz", ".pgn"])
def test_a_file_of_more_games_than_a_whole_read_holds_is_streamed_with_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    text = (SHARED_PGN / "tata2018.pgn").read_bytes()  # 446 games, 472 KB: far under the bytes read whole
    path = tmp_path / f"tata{suffix}"
    path.write_bytes(gzip.compress(text) if suffix.endswith(".gz") else text)
    monkeypatch.setattr(streaming, "STREAM_GAMES", 10**9)
    whole, streamed = _parse_recording(monkeypatch, path)
    assert streamed == []
    # lowered for the test as STREAM_BYTES is in tests/read/pgn/test_streaming.py
    monkeypatch.setattr(streaming, "STREAM_GAMES", 445)
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 64 * 1024)
    pieces, streamed = _parse_recording(monkeypatch, path)
    assert streamed == [str(path)]
    assert len(pieces.parsed.games) == len(whole.parsed.games) > 445
    assert_same(whole, pieces)


def test_games_cut_by_the_end_of_a_block_are_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from elopipe.read import sources

    path = tmp_path / "tata.pgn.gz"
    path.write_bytes(gzip.compress((SHARED_PGN / "tata2018.pgn").read_bytes()))
    monkeypatch.setattr(sources, "BLOCK_BYTES", 5)  # every `[Event ` tag is cut by a block's end
    monkeypatch.setattr(streaming, "STREAM_GAMES", 445)
    _, streamed = _parse_recording(monkeypatch, path)
    assert streamed == [str(path)]
