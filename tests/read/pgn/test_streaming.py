"""Large files are read in pieces (issue 12, item 8): the same result as a whole read, bounded
text per piece, and the size cap applied to the decompressed stream as it is read.

Small pieces and blocks (a few KB) stand in for the 32 MB pieces of a real large file, so that
games straddle many piece and block boundaries."""

import gzip
from pathlib import Path

import duckdb
import pytest

from elopipe.ingest import segments
from elopipe.ingest.driver import ingest_paths
from elopipe.read import sources
from elopipe.read.parse import parse_source
from elopipe.read.pgn import read_loop
from elopipe.read.sources import Source
from tests.helpers.store_rows import store_tables
from tests.helpers.streaming import FILES, SHARED_PGN, assert_same, hostile_text


def _streaming():
    from elopipe.read.pgn import streaming  # here, so that the tests without it also run on the code before it

    return streaming


def _parse(path: Path, monkeypatch, chunk: int, block: int):
    streaming = _streaming()
    monkeypatch.setattr(streaming, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(streaming, "STREAM_BYTES", chunk)
    monkeypatch.setattr(sources, "BLOCK_BYTES", block)
    return parse_source(Source(str(path)))


def _recording_prepare(monkeypatch) -> list[int]:
    """The size of each text given to the PGN reader, recorded."""
    sizes: list[int] = []
    prepare = read_loop.ReadLoop._prepare

    def recording(self, text, utf8=None, quick=False):
        sizes.append(len(utf8) if utf8 is not None else len((text or "").encode("utf-8")))
        return prepare(self, text, utf8, quick)

    monkeypatch.setattr(read_loop.ReadLoop, "_prepare", recording)
    return sizes


def test_a_large_file_is_never_given_to_the_reader_whole(tmp_path, monkeypatch):
    """With the default piece size: a PGN over the streaming threshold (lowered to 16 MiB here, so
    that 19 MB will do; 128 MiB by default) is read in pieces of at most 16 MiB."""
    unit = (SHARED_PGN / "olym22.pgn").read_bytes()
    path = tmp_path / "large.pgn"
    path.write_bytes(unit * 5)
    monkeypatch.setattr(_streaming(), "STREAM_BYTES", 16 * 1024 * 1024)
    sizes = _recording_prepare(monkeypatch)
    ps = parse_source(Source(str(path)))
    assert ps.rejected_reason is None and len(ps.parsed.games) == 5 * 4069
    assert len(sizes) >= 2 and max(sizes) <= 16 * 1024 * 1024 < len(unit) * 5


def _whole_and_pieces(path: Path, monkeypatch, chunk: int = 6000, block: int = 1500):
    whole = _parse(path, monkeypatch, 1 << 40, 1 << 23)
    sizes = _recording_prepare(monkeypatch)
    pieces = _parse(path, monkeypatch, chunk, block)
    return whole, pieces, sizes


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_file_read_in_pieces_is_read_as_a_whole(path, monkeypatch):
    # at most about 60 pieces a file: every piece costs a reader's fixed work (tens of ms)
    chunk = max(6000, path.stat().st_size // 60)
    whole, pieces, sizes = _whole_and_pieces(path, monkeypatch, chunk, chunk // 4)
    assert_same(whole, pieces)
    if path.stat().st_size > 100_000:  # many pieces, none much larger than asked for
        assert len(sizes) > 5
        assert max(sizes) <= chunk + chunk // 4 + 10_000


@pytest.mark.parametrize("variant", ["utf-8", "utf-8 crlf", "utf-8-sig", "cp1252 crlf", "latin-1", "nul bytes", "gzip"])
def test_hostile_file_read_in_pieces_is_read_as_a_whole(variant, tmp_path, monkeypatch):
    text = hostile_text()
    if "crlf" in variant:
        text = text.replace("\n", "\r\n")
    encoding = variant.split()[0] if variant.split()[0] in ("utf-8", "utf-8-sig", "cp1252", "latin-1") else "utf-8"
    data = text.encode(encoding, errors="replace")
    if variant == "latin-1":
        data += b"\x81"  # a byte CP1252 leaves undefined: the file is read as Latin-1
    if variant == "nul bytes":
        data = data[:9000] + b"\x00" + data[9000:30000] + b"\x00\x00" + data[30000:]
    name = "hostile.pgn.gz" if variant == "gzip" else "hostile.pgn"
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if variant == "gzip" else data)
    whole, pieces, sizes = _whole_and_pieces(path, monkeypatch)
    assert whole.rejected_reason is None
    assert len(sizes) > 5
    assert_same(whole, pieces)
    if variant != "latin-1":  # the sign of mojibake, in the last piece, decided how the first were read
        assert any(i.code == "mixed_encoding" and i.game_index < 20 for i in whole.parsed.issues)


def test_store_of_a_file_read_in_pieces_is_the_store_of_a_whole_read(tmp_path, monkeypatch):
    src = tmp_path / "in" / "big.pgn"
    src.parent.mkdir()
    src.write_bytes(hostile_text().encode("utf-8") + (SHARED_PGN / "olym22.pgn").read_bytes())
    streaming = _streaming()
    stores = {}
    # pieces, and the large-file load: optimistic writes, games released once inserted
    for label, chunk, block, large in (("whole", 1 << 40, 1 << 23, 1 << 40), ("pieces", 20_000, 4096, 10)):
        monkeypatch.setattr(streaming, "CHUNK_BYTES", chunk)
        monkeypatch.setattr(streaming, "STREAM_BYTES", chunk)
        monkeypatch.setattr(sources, "BLOCK_BYTES", block)
        monkeypatch.setattr(segments, "OPTIMISTIC_GAMES", large)
        db = tmp_path / f"{label}.duckdb"
        summary = ingest_paths([src], db)
        assert [f.status for f in summary.files] == ["partial"]
        stores[label] = store_tables(db)
    assert stores["pieces"]["games"] and stores["pieces"]["ingest_errors"]
    for table, rows in stores["whole"].items():
        assert stores["pieces"][table] == rows, table


def test_size_cap_applies_to_the_decompressed_stream_as_it_is_read(tmp_path, monkeypatch):
    streaming = _streaming()
    unit = (SHARED_PGN / "wchcand22.pgn").read_bytes()
    path = tmp_path / "bomb.pgn.gz"
    path.write_bytes(gzip.compress(unit * 40))  # 2 MB of PGN in a small file
    monkeypatch.setattr(sources, "MAX_BYTES", len(unit) * 10)
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 100_000)
    monkeypatch.setattr(streaming, "STREAM_BYTES", 100_000)
    monkeypatch.setattr(sources, "BLOCK_BYTES", 65536)
    largest: list[int] = []
    blocks = Source.blocks

    def recording(self, limit=None, block_size=None):
        for b in blocks(self, limit, block_size):
            largest.append(len(b))
            yield b

    monkeypatch.setattr(Source, "blocks", recording)
    ps = parse_source(Source(str(path)))
    assert ps.parsed is None and "larger than" in ps.rejected_reason
    assert sum(largest) <= len(unit) * 10 + 2 * 100_000  # stopped at the cap, never read whole
    assert max(largest) <= 100_000

    db = tmp_path / "s.duckdb"
    summary = ingest_paths([path], db)
    assert [f.status for f in summary.files] == ["rejected"]
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT status, reason FROM source_files").fetchall()[0][0] == "rejected"
    finally:
        con.close()


def test_cut_only_where_a_game_surely_starts():
    streaming = _streaming()
    game = b'[Event "A"]\n[White "x"]\n\n1. e4 e5 1-0\n\n'
    assert streaming.find_cut(game + game) == len(game)
    # a blank line inside a tag section: the tag lines after it belong to the game before
    assert streaming.find_cut(b'[White "x"]\n\n[Event "A"]\n\n1. e4 1-0\n') is None
    # no blank line before the tag
    assert streaming.find_cut(b'1. e4 e5 1-0\n[Event "A"]\n') is None
    # a `%` line (dropped by the reader) before the blank line
    assert streaming.find_cut(b'[Black "y"]\n%x\n\n[Event "A"]\n') is None
    assert streaming.find_cut(b'1. e4 1-0\r\n\r\n[Event "A"]\r\n') == len(b"1. e4 1-0\r\n\r\n")


def test_a_file_changed_between_the_two_passes_is_rejected(tmp_path, monkeypatch):
    streaming = _streaming()
    path = tmp_path / "big.pgn"
    path.write_bytes((SHARED_PGN / "olym22.pgn").read_bytes())
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 20_000)
    monkeypatch.setattr(streaming, "STREAM_BYTES", 20_000)
    scan = streaming.scan

    def scan_then_append(source, **kwargs):
        sc = scan(source, **kwargs)
        with open(path, "ab") as out:
            out.write(b'\n[Event "more"]\n')
        return sc

    monkeypatch.setattr(streaming, "scan", scan_then_append)
    ps = parse_source(Source(str(path)))
    assert ps.parsed is None and "changed while it was being read" in ps.rejected_reason


def test_implausible_game_counts_are_counted_over_every_piece(tmp_path, monkeypatch):
    """A player with more games in one event than any real event gives is warned about once
    at the same game, whether the file is read whole or in pieces (the games span many)."""
    game = '[Event "Marathon"]\n[Site "x"]\n[Date "2020.01.01"]\n[Round "{r}"]\n[White "A, A"]\n[Black "B, B"]\n'
    game += '[Result "1-0"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n'
    path = tmp_path / "marathon.pgn"
    path.write_text("".join(game.format(r=r % 900 + 1) for r in range(1100)), encoding="utf-8")
    whole, pieces, sizes = _whole_and_pieces(path, monkeypatch, chunk=20_000, block=4096)
    assert len(sizes) > 5
    assert_same(whole, pieces)
    assert [i.game_index for i in whole.parsed.issues if i.code == "implausible_games"] == [1000, 1000]  # A and B
