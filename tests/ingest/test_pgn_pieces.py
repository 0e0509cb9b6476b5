"""One large PGN read as independent pieces (issue 14): `assemble` of the pieces, each read on its
own and in any order, is `parse_source` of the whole file, field for field.

Small pieces (a few KB) stand in for the pieces of a real large file, so that there are many."""

import bz2
import gzip
import os
import pickle
import random
from pathlib import Path

import pytest

from elopipe.ingest.pieces import PgnPiece, PiecePlan, assemble, parse_piece, plan_pieces
from elopipe.read import sources
from elopipe.read.parse import parse_source
from elopipe.read.sources import Source
from tests.helpers.streaming import FILES, SHARED_PGN, assert_same, hostile_text

TINY = 6000
# {(path, size, mtime, validate_moves): parse_source of the whole file}: a real file's whole read,
# made once per test process for both piece sizes (read only: `assert_same` changes nothing)
_WHOLE: dict[tuple[str, int, int, bool], object] = {}


def _whole(path: Path, validate_moves: bool):
    if path.parent != SHARED_PGN:  # a file the test wrote: its own
        return parse_source(Source(str(path)), validate_moves=validate_moves)
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns, validate_moves)
    if key not in _WHOLE:
        _WHOLE[key] = parse_source(Source(str(path)), validate_moves=validate_moves)
    return _WHOLE[key]


def _stream(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".gz":
        return gzip.decompress(data)
    if path.suffix == ".bz2":
        return bz2.decompress(data)
    return data


def _plan(path: Path, chunk: int) -> PiecePlan:
    plan = plan_pieces(Source(str(path)), chunk)
    assert plan is not None
    # the pieces tile the stream, each but the first starts at a game, line bases count its lines
    data = _stream(path)
    assert [p.index for p in plan.pieces] == list(range(len(plan.pieces)))
    assert plan.pieces[0].start == 0 and plan.pieces[-1].end == len(data)
    assert all(a.end == b.start for a, b in zip(plan.pieces, plan.pieces[1:], strict=False))
    assert [p.last for p in plan.pieces] == [False] * (len(plan.pieces) - 1) + [True]
    lines = 0
    for p in plan.pieces:
        assert p.line_base == lines
        assert p.index == 0 or data[p.start : p.start + 8] == b'[Event "'
        lines += data.count(b"\n", p.start, p.end)
    return plan


def _pieces(path: Path, chunk: int, order: str = "forward", validate_moves: bool = False):
    """The whole read, and the pieces read in `order` (forward, reverse, shuffled) then assembled."""
    whole = _whole(path, validate_moves)
    plan = _plan(path, chunk)
    ks = list(range(len(plan.pieces)))
    if order == "reverse":
        ks.reverse()
    elif order == "shuffled":
        random.Random(len(ks)).shuffle(ks)
    done = {k: parse_piece(plan, k, validate_moves=validate_moves) for k in ks}
    return whole, plan, assemble(plan, [done[k] for k in range(len(ks))])


@pytest.mark.parametrize(("chunk", "order"), [(TINY, "reverse"), (100_000, "shuffled")], ids=["tiny", "medium"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_pieces_of_every_real_file_assemble_to_the_whole_read(path, chunk, order):
    size = path.stat().st_size
    if size <= chunk:  # one piece: not split
        assert plan_pieces(Source(str(path)), chunk) is None
        return
    if chunk == TINY:  # at most about 60 pieces a file: every piece costs a fresh read and reader
        chunk = max(TINY, size // 60)
    whole, plan, assembled = _pieces(path, chunk, order)
    if size > 100_000 and chunk <= size // 60:
        assert len(plan.pieces) > size // (3 * chunk)
    assert_same(whole, assembled)


@pytest.mark.parametrize("name", ["wchcand22.pgn", "chess960rwch.pgn", "kasparov-deep-blue-1997.pgn"])
def test_pieces_with_validated_moves(name):
    whole, plan, assembled = _pieces(SHARED_PGN / name, 3000, "reverse", validate_moves=True)
    assert len(plan.pieces) > 1
    assert_same(whole, assembled)


def _variant(variant: str, tmp_path: Path) -> Path:
    text = hostile_text()
    if variant == "junk":  # lines of no game between games, games without tags
        games = text.split('\n\n[Event "')
        junk = "<html><body>502 Bad Gateway</body></html>\n\n1. e4 e5 2. Nf3 Nc6 *\n\n"
        text = '\n\n[Event "'.join(g + ("\n\n" + junk if i % 25 == 3 else "") for i, g in enumerate(games))
    if variant == "cut":  # the last game ends inside a comment: the file was truncated
        text += '\n[Event "Cut"]\n[White "A, B"]\n[Black "C, D"]\n[Result "*"]\n\n1. e4 e5 2. Nf3 { the file ends he'
    if "crlf" in variant:
        text = text.replace("\n", "\r\n")
    first = variant.split()[0]
    encoding = first if first in ("utf-8", "utf-8-sig", "cp1252", "latin-1") else "utf-8"
    data = text.encode(encoding, errors="replace")
    if variant == "latin-1":
        data += b"\x81"  # a byte CP1252 leaves undefined: the file is read as Latin-1
    path = tmp_path / {"gzip": "hostile.pgn.gz", "bz2": "hostile.pgn.bz2"}.get(variant, "hostile.pgn")
    path.write_bytes(gzip.compress(data) if variant == "gzip" else bz2.compress(data) if variant == "bz2" else data)
    return path


VARIANTS = ["utf-8", "utf-8 crlf", "utf-8-sig", "cp1252 crlf", "latin-1", "gzip", "bz2", "junk", "cut"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_hostile_file_in_pieces_assembles_to_the_whole_read(variant, tmp_path):
    path = _variant(variant, tmp_path)
    whole, plan, assembled = _pieces(path, 4000, "shuffled")
    assert whole.rejected_reason is None
    assert len(plan.pieces) > 10
    assert_same(whole, assembled)
    codes = {i.code for i in whole.parsed.issues}
    if variant != "latin-1":  # the sign of mojibake, in the last piece, decided how the first were read
        assert any(i.code == "mixed_encoding" and i.game_index < 20 for i in whole.parsed.issues)
    if variant == "junk":
        assert "no_tags" in codes
    if variant == "cut":
        assert "truncated" in whole.parsed.games[-1].flags


def test_state_a_later_piece_adds_is_merged_as_a_sequential_read_does(tmp_path):
    """A player first met without a rating gets the one a later piece gives; byes (unplayed rows)
    and implausible game counts span pieces; tournaments met again in later pieces keep one ref."""
    game = '[Event "{e}"]\n[Site "x"]\n[Date "2020.01.01"]\n[Round "{r}"]\n[White "{w}"]\n[Black "{b}"]\n'
    game += '{elo}[Result "1-0"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n'
    out = []
    for r in range(1700):
        e = "Marathon" if r % 3 else f"Side {r % 7}"
        w, b = ("A, A", "bye") if r % 97 == 5 else ("A, A", "B, B") if r % 2 else (f"P{r % 13}", "A, A")
        elo = '[BlackElo "2500"]\n' if r == 900 else '[WhiteElo "0"]\n' if r == 10 else ""
        out.append(game.format(e=e, r=r % 900 + 1, w=w, b=b, elo=elo))
    path = tmp_path / "marathon.pgn"
    path.write_text("".join(out), encoding="utf-8")
    whole, plan, assembled = _pieces(path, 5000, "reverse")
    assert len(plan.pieces) > 20
    assert_same(whole, assembled)
    assert whole.parsed.unplayed and any(p.rating == 2500 for p in whole.parsed.players)
    assert any(i.code == "implausible_games" for i in whole.parsed.issues)


def test_pieces_cross_processes_pickled(tmp_path):
    path = _variant("cp1252 crlf", tmp_path)
    plan = pickle.loads(pickle.dumps(_plan(path, 4000)))
    parts = [pickle.loads(pickle.dumps(parse_piece(plan, k))) for k in range(len(plan.pieces))]
    assert all(isinstance(p, PgnPiece) and p.error is None for p in parts)
    assert sum(p.n_games for p in parts) == len(parse_source(Source(str(path))).parsed.games)
    before = pickle.dumps(parts)
    assert_same(parse_source(Source(str(path))), assemble(plan, parts))
    # assembling does not change the parts: the same parts give the same result again
    assert_same(parse_source(Source(str(path))), assemble(plan, parts))
    assert pickle.dumps(parts) == before


def test_parts_that_are_not_the_plan_are_refused(tmp_path):
    path = SHARED_PGN / "wjun19.pgn"
    plan = _plan(path, TINY)
    parts = [parse_piece(plan, k) for k in range(len(plan.pieces))]
    with pytest.raises(ValueError):
        assemble(plan, parts[:-1])
    with pytest.raises(ValueError):
        assemble(plan, [parts[1], parts[0], *parts[2:]])
    with pytest.raises(ValueError):
        assemble(plan, [parse_piece(plan, 0, validate_moves=True), *parts[1:]])
    with pytest.raises(IndexError):
        parse_piece(plan, len(plan.pieces))


def _write(tmp_path: Path, name: str, data: bytes) -> Source:
    path = tmp_path / name
    path.write_bytes(data)
    return Source(str(path))


def test_sources_not_to_be_split(tmp_path, monkeypatch):
    unit = (SHARED_PGN / "wjun19.pgn").read_bytes()
    text = unit.decode("utf-8")
    cases = {
        "small.pgn": (SHARED_PGN / "nepomniachtchi-liren-game1.pgn").read_bytes(),
        "games.trf": unit,  # the suffix decides: only .pgn is split
        "games.txt": unit,
        "utf16.pgn": text.encode("utf-16"),
        "cr.pgn": unit.replace(b"\n", b"\r"),
        "nul.pgn": unit[:5000] + b"\x00" + unit[5000:],
        "empty.pgn": b"\n \n" * 5000,
        "binary.pgn": bytes(range(256)) * 200,
        "headerless.pgn": b"1. e4 e5 2. Nf3 Nc6 1-0\n\n" * 2000,
    }
    for name, data in cases.items():
        assert plan_pieces(_write(tmp_path, name, data), 3000) is None, name
    assert plan_pieces(Source(str(tmp_path / "missing.pgn")), 3000) is None
    assert plan_pieces(_write(tmp_path, "fine.pgn", unit), 3000) is not None
    monkeypatch.setattr(sources, "MAX_BYTES", len(unit) - 1)
    assert plan_pieces(Source(str(tmp_path / "fine.pgn")), 3000) is None
    big = _write(tmp_path, "bomb.pgn.gz", gzip.compress(unit))
    assert plan_pieces(big, 3000) is None


@pytest.mark.parametrize("change", ["append", "same size", "removed"])
def test_a_file_changed_after_the_plan_is_rejected(change, tmp_path):
    path = tmp_path / "big.pgn"
    data = (SHARED_PGN / "wjun19.pgn").read_bytes()
    path.write_bytes(data)
    plan = _plan(path, TINY)
    first = parse_piece(plan, 0)
    if change == "append":
        with open(path, "ab") as out:
            out.write(b'\n[Event "more"]\n')
    elif change == "same size":
        path.write_bytes(data.replace(b"Event", b"Evenx", 1))
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    else:
        path.unlink()
    parts = [first] + [parse_piece(plan, k) for k in range(1, len(plan.pieces))]
    assert all(p.error is not None for p in parts[1:])
    ps = assemble(plan, parts)
    assert ps.parsed is None and ps.sha256 is None and ps.format == "unknown"
    assert ps.rejected_reason.startswith("cannot read file: ")
    if change != "removed":
        assert "changed while it was being read" in ps.rejected_reason
